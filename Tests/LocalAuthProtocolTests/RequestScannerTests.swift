// RequestScanner: where the tag, verb and arguments sit in the line, what
// `escaped` means, keys compared as whole keys, reuse across lines, and
// agreement with `Request.parse` and with an independent reference parser
// (below: PROTOCOL.md's grammar read byte by byte, with the messages the
// parser had before the scanner) on fixed and seeded-random lines.

import LocalAuthProtocol
import XCTest
import LocalAuthTestSupport

final class RequestScannerTests: XCTestCase {
    // MARK: Ranges

    func testTagVerbAndArgumentRangesPointAtTheirBytes() {
        let line = "c1 can-evaluate ctx=0123 policy=\"bio metrics\" x=\u{e9}t\u{e9}"
        scan(line) { scanner, failure in
            XCTAssertNil(failure)
            XCTAssertEqual(scanner.tag, 0..<2)
            XCTAssertEqual(scanner.verb, 3..<15)
            XCTAssertEqual(text(scanner, scanner.tag), "c1")
            XCTAssertEqual(text(scanner, scanner.verb), "can-evaluate")
            XCTAssertEqual(scanner.arguments.count, 3)
            guard scanner.arguments.count == 3 else { return }
            let ctx = scanner.arguments[0], policy = scanner.arguments[1], x = scanner.arguments[2]
            XCTAssertEqual(ctx.key, 16..<19)
            XCTAssertEqual(ctx.value, 20..<24)
            XCTAssertEqual(policy.key, 25..<31)
            XCTAssertEqual(policy.value, 33..<44, "the quotes at 32 and 44 are not part of the value")
            XCTAssertEqual(x.key, 46..<47)
            XCTAssertEqual(x.value, 48..<53, "\u{e9} is two bytes: the range counts bytes")
            XCTAssertEqual(text(scanner, ctx.key), "ctx")
            XCTAssertEqual(text(scanner, ctx.value), "0123")
            XCTAssertEqual(text(scanner, policy.key), "policy")
            XCTAssertEqual(text(scanner, policy.value), "bio metrics")
            XCTAssertEqual(text(scanner, x.value), "\u{e9}t\u{e9}")
            XCTAssertEqual(String(decoding: scanner.rawValue(policy), as: UTF8.self), "bio metrics")
            XCTAssertEqual(scanner.tagString, "c1")
            XCTAssertEqual(scanner.bytes.count, line.utf8.count, "bytes is the whole line scanned")
            XCTAssertEqual(scanner.request, Request(tag: "c1", verb: "can-evaluate", arguments: Arguments([
                ("ctx", "0123"), ("policy", "bio metrics"), ("x", "\u{e9}t\u{e9}"),
            ])))
        }
        // A verb with no arguments ends the line; a 32-byte tag is all tag.
        let tag = String(repeating: "T", count: 32)
        scan("\(tag) ping") { scanner, failure in
            XCTAssertNil(failure)
            XCTAssertEqual(scanner.tag, 0..<32)
            XCTAssertEqual(scanner.verb, 33..<37)
            XCTAssertTrue(scanner.arguments.isEmpty)
            XCTAssertEqual(scanner.tagString, tag)
        }
    }

    func testEscapedIsTrueOnlyForQuotedValuesWithBackslashEscapes() {
        let line = #"t v a=plain b="quoted" c="" d=x\y e="\\" f="\"" g="\n" h="\r" i="\t" j="x\\y\"z\tw""#
        scan(line) { scanner, failure in
            XCTAssertNil(failure)
            let expected: [(key: String, escaped: Bool, raw: String, value: String)] = [
                ("a", false, "plain", "plain"),
                ("b", false, "quoted", "quoted"),
                ("c", false, "", ""),
                ("d", false, #"x\y"#, #"x\y"#),  // a backslash in a bare value is just a byte
                ("e", true, #"\\"#, "\\"),
                ("f", true, #"\""#, "\""),
                ("g", true, #"\n"#, "\n"),
                ("h", true, #"\r"#, "\r"),
                ("i", true, #"\t"#, "\t"),
                ("j", true, #"x\\y\"z\tw"#, "x\\y\"z\tw"),
            ]
            XCTAssertEqual(scanner.arguments.count, expected.count)
            let request = scanner.request
            for (span, want) in zip(scanner.arguments, expected) {
                XCTAssertEqual(text(scanner, span.key), want.key)
                XCTAssertEqual(span.escaped, want.escaped, "escaped for \(want.key)")
                XCTAssertEqual(String(decoding: scanner.rawValue(span), as: UTF8.self), want.raw,
                               "rawValue of \(want.key) is the value as written, escapes kept")
                XCTAssertEqual(request.arguments.value(for: want.key), want.value, "request unescapes \(want.key)")
            }
        }
    }

    func testQuotedValueWithoutEscapesIsTheRangeInsideTheQuotes() {
        let line = #"t v k="a b=c" e="" z="0123456789abcdef""#
        scan(line) { scanner, failure in
            XCTAssertNil(failure)
            guard scanner.arguments.count == 3 else { return XCTFail("\(Array(scanner.arguments))") }
            let k = scanner.arguments[0], e = scanner.arguments[1], z = scanner.arguments[2]
            XCTAssertEqual(k.value, 7..<12)
            XCTAssertEqual(scanner.bytes[6], UInt8(ascii: "\""))
            XCTAssertEqual(scanner.bytes[12], UInt8(ascii: "\""))
            XCTAssertEqual(String(decoding: scanner.rawValue(k), as: UTF8.self), "a b=c")
            XCTAssertFalse(k.escaped)
            XCTAssertEqual(e.value, 17..<17, "an empty quoted value is empty, just after its opening quote")
            XCTAssertFalse(e.escaped)
            XCTAssertEqual(String(decoding: scanner.rawValue(z), as: UTF8.self), "0123456789abcdef")
            XCTAssertFalse(z.escaped)
            XCTAssertEqual(scanner.request.arguments, Arguments([("k", "a b=c"), ("e", ""), ("z", "0123456789abcdef")]))
        }
    }

    // MARK: Byte-wise lookups

    func testSpanForFindsPresentKeysAndNotPrefixesOrExtensionsOfThem() {
        scan("t can-evaluate ctxx=1 policy=2") { scanner, failure in
            XCTAssertNil(failure)
            XCTAssertNil(scanner.span(for: "ctx"), "ctx is only a prefix of ctxx")
            XCTAssertEqual(scanner.span(for: "ctxx").map { text(scanner, $0.value) }, "1")
            XCTAssertEqual(scanner.span(for: "policy").map { text(scanner, $0.value) }, "2")
            XCTAssertNil(scanner.span(for: "polic"))
            XCTAssertNil(scanner.span(for: "policyy"))
            XCTAssertNil(scanner.span(for: "reason"))
            XCTAssertEqual(scanner.span(for: "policy"), scanner.arguments[1], "the span itself, escaped flag included")
        }
        scan("t can-evaluate ctx=1") { scanner, _ in
            XCTAssertNotNil(scanner.span(for: "ctx"))
            XCTAssertNil(scanner.span(for: "ctxx"), "ctxx is only an extension of ctx")
            XCTAssertNil(scanner.span(for: "ct"))
            XCTAssertNil(scanner.span(for: "c"))
        }
        // The extension first, then the key itself: the lookup must not stop at the first prefix match.
        scan("t v ctxx=1 ctx=2 ct=3") { scanner, failure in
            XCTAssertNil(failure)
            XCTAssertEqual(scanner.span(for: "ctx").map { text(scanner, $0.value) }, "2")
            XCTAssertEqual(scanner.span(for: "ct").map { text(scanner, $0.value) }, "3")
            XCTAssertEqual(scanner.span(for: "ctxx").map { text(scanner, $0.value) }, "1")
        }
        // Keys are compared as keys, not found inside values.
        scan("t v a=ctx b=\"ctx\"") { scanner, failure in
            XCTAssertNil(failure)
            XCTAssertNil(scanner.span(for: "ctx"))
        }
        scan("t ping") { scanner, _ in XCTAssertNil(scanner.span(for: "ctx")) }
    }

    // MARK: Reuse

    func testAReusedScannerResetsItsArgumentsAndRangesBetweenLines() {
        var scanner = RequestScanner()
        let long = Array("long-tag-here evaluate ctx=0123456789abcdef0123456789abcdef policy=biometrics reason=\"why \\\"not\\\"\" a=1 b=2".utf8)
        long.withUnsafeBufferPointer { line in
            XCTAssertNil(scanner.scan(line))
            XCTAssertEqual(scanner.arguments.count, 5)
        }

        let short = Array("s get ctx=9".utf8)
        short.withUnsafeBufferPointer { line in
            XCTAssertNil(scanner.scan(line))
            XCTAssertEqual(scanner.tag, 0..<1)
            XCTAssertEqual(scanner.verb, 2..<5)
            XCTAssertEqual(scanner.arguments.count, 1, "nothing left over from the long line")
            XCTAssertNil(scanner.span(for: "policy"))
            XCTAssertNil(scanner.span(for: "b"))
            XCTAssertFalse(scanner.arguments.contains { $0.escaped })
            XCTAssertEqual(scanner.span(for: "ctx")?.value, 10..<11)
            assertRangesInside(scanner, count: line.count)
            XCTAssertEqual(scanner.request, Request(tag: "s", verb: "get", arguments: ["ctx": "9"]))
            XCTAssertEqual(text(scanner, scanner.verb), "get")
        }

        Array("p ping".utf8).withUnsafeBufferPointer { line in
            XCTAssertNil(scanner.scan(line))
            XCTAssertTrue(scanner.arguments.isEmpty)
            XCTAssertNil(scanner.span(for: "ctx"))
            XCTAssertEqual(scanner.request, Request(tag: "p", verb: "ping"))
        }

        // A failing line after a good one: the good line's results are gone.
        long.withUnsafeBufferPointer { XCTAssertNil(scanner.scan($0)) }
        Array("bad*tag can-evaluate ctx=1 policy=2".utf8).withUnsafeBufferPointer { line in
            XCTAssertEqual(scanner.scan(line)?.tag, .some(nil))
            XCTAssertEqual(scanner.tag, 0..<0)
            XCTAssertEqual(scanner.verb, 0..<0)
            XCTAssertTrue(scanner.arguments.isEmpty)
        }
        long.withUnsafeBufferPointer { XCTAssertNil(scanner.scan($0)) }
        Array("t2 BAD ctx=1".utf8).withUnsafeBufferPointer { line in
            XCTAssertEqual(scanner.scan(line)?.tag, "t2")
            XCTAssertEqual(scanner.tag, 0..<2)
            XCTAssertEqual(scanner.verb, 0..<0)
            XCTAssertTrue(scanner.arguments.isEmpty)
        }
        long.withUnsafeBufferPointer { XCTAssertNil(scanner.scan($0)) }
        // Failing in the arguments: whatever spans it reports are this line's, none of the long one's.
        Array("t3 evaluate ctx=1 a=".utf8).withUnsafeBufferPointer { line in
            XCTAssertEqual(scanner.scan(line)?.tag, "t3")
            XCTAssertNil(scanner.span(for: "policy"))
            XCTAssertNil(scanner.span(for: "reason"))
            XCTAssertNil(scanner.span(for: "b"))
            XCTAssertLessThanOrEqual(scanner.arguments.count, 1)
            assertRangesInside(scanner, count: line.count)
        }
        long.withUnsafeBufferPointer { XCTAssertNil(scanner.scan($0)) }
        Array("".utf8).withUnsafeBufferPointer { line in
            XCTAssertEqual(scanner.scan(line), RequestFailure(tag: nil, error: ProtocolError(.badSyntax, "Empty line.")))
            XCTAssertEqual(scanner.tag, 0..<0)
            XCTAssertEqual(scanner.verb, 0..<0)
            XCTAssertTrue(scanner.arguments.isEmpty)
            XCTAssertEqual(scanner.bytes.count, 0)
        }
        // And a good line after all that is read as a fresh scanner reads it.
        long.withUnsafeBufferPointer { line in
            XCTAssertNil(scanner.scan(line))
            var fresh = RequestScanner()
            XCTAssertNil(fresh.scan(line))
            XCTAssertEqual(scanner.tag, fresh.tag)
            XCTAssertEqual(scanner.verb, fresh.verb)
            XCTAssertEqual(Array(scanner.arguments), Array(fresh.arguments))
            XCTAssertEqual(scanner.request, fresh.request)
        }
    }

    // MARK: Failures

    func testEveryFailureIsTheOneRequestParseGives() {
        let digits = "0123456789abcdef0123456789abcdef"
        let cases: [(line: [UInt8], tag: String?, name: ProtocolErrorName, message: String)] = [
            (bytes(""), nil, .badSyntax, "Empty line."),
            (bytes(" ping"), nil, .badSyntax, "Bad tag"),
            (bytes("t*x ping"), nil, .badSyntax, "Bad tag"),
            (bytes(String(repeating: "t", count: 33) + " ping"), nil, .badSyntax, "Bad tag"),
            ([0x74, 0x00, 0x20, 0x70], nil, .badSyntax, "Bad tag"),
            ([0x74, 0xFF, 0x20, 0x70], nil, .badSyntax, "Bad tag"),
            (bytes("c1"), "c1", .badSyntax, "Missing verb after the tag."),
            (bytes("c1 "), "c1", .badSyntax, "Bad verb"),
            (bytes("c1 Ping"), "c1", .badSyntax, "Bad verb"),
            (bytes("c1 " + String(repeating: "v", count: 33)), "c1", .badSyntax, "Bad verb"),
            (bytes("c1 ping  a=1"), "c1", .badSyntax, "Expected KEY=VALUE at byte 9."),
            (bytes("c1 ping a=1 "), "c1", .badSyntax, "Expected KEY=VALUE at byte 13."),
            (bytes("c1 ping A=1"), "c1", .badSyntax, "Bad key at byte 9"),
            (bytes("c1 ping a"), "c1", .badSyntax, "Expected '=' after the key at byte 9."),
            (bytes("c1 ping a b=1"), "c1", .badSyntax, "Expected '=' after the key at byte 9."),
            (bytes("c1 ping a="), "c1", .badSyntax, "Empty value at byte 11"),
            (bytes("c1 ping a= b=1"), "c1", .badSyntax, "Empty value at byte 11"),
            (bytes("c1 ping a=b\"c"), "c1", .badSyntax, "Bad character in the value at byte 12"),
            (bytes("c1 ping a=b=c"), "c1", .badSyntax, "Bad character in the value at byte 12"),
            (bytes("c1 ping a=abcdefghijklmno\u{1}pq"), "c1", .badSyntax, "Bad character in the value at byte 26"),
            (bytes("c1 ping a=abcdefghijklmno\u{7F}pq"), "c1", .badSyntax, "Bad character in the value at byte 26"),
            (bytes("c1 ping a=abcdefgh\t"), "c1", .badSyntax, "Bad character in the value at byte 19"),
            (bytes("c1 ping a=\"x"), "c1", .badSyntax, "Unterminated quoted value starting at byte 11."),
            (bytes("c1 ping a=\"x\\"), "c1", .badSyntax, "Unterminated quoted value starting at byte 11."),
            (bytes("c1 ping a=\"x\\\""), "c1", .badSyntax, "Unterminated quoted value starting at byte 11."),
            (bytes("c1 ping a=\"\\q\""), "c1", .badSyntax, "Unknown escape at byte 12"),
            (bytes("c1 ping a=\"x\"y"), "c1", .badSyntax, "Expected a space after the quoted value at byte 14."),
            (bytes("c1 ping a=\"\t\""), "c1", .badSyntax, "Raw control character in a quoted value at byte 12"),
            (bytes("c1 ping a=1 a=2"), "c1", .badArgument, "The key 'a' appears more than once."),
            (bytes("c1 can-evaluate ctx=\(digits) ctxx=2 ctx=3"), "c1", .badArgument, "The key 'ctx' appears more than once."),
            (bytes("c1 ping a=1 a=\"x"), "c1", .badSyntax, "Unterminated"),  // the grammar error wins over the repeat
            (bytes("c1 ping" + (0...32).map { " k\($0)=v" }.joined()), "c1", .badArgument, "Too many arguments (at most 32)."),
            (bytes("c1 ping a=") + [0x00], "c1", .badSyntax, "NUL byte at byte 11."),
            (bytes("c1 ping a=") + [0xFF], "c1", .badSyntax, "Invalid UTF-8 at byte 11."),
            (bytes("c1 p") + [0xC3], "c1", .badSyntax, "Invalid UTF-8 at byte 5."),
            (bytes("c1 ping a=\"") + [0xED, 0xA0, 0x80] + bytes("\""), "c1", .badSyntax, "Invalid UTF-8 at byte 12."),
            (bytes("c1 ping a=\"\u{e9}\"") + [0x00], "c1", .badSyntax, "NUL byte at byte 15."),
            (bytes("c1 BAD a=") + [0xFF], "c1", .badSyntax, "Invalid UTF-8 at byte 10."),  // checked before the verb
        ]
        var scanner = RequestScanner()
        for (index, item) in cases.enumerated() {
            let expected = Request.parse(item.line)
            guard case .failure(let failure) = expected else {
                XCTFail("case \(index) parsed: \(expected)")
                continue
            }
            XCTAssertEqual(failure.tag, item.tag, "case \(index)")
            XCTAssertEqual(failure.name, item.name, "case \(index): \(failure.message)")
            XCTAssertTrue(failure.message.hasPrefix(item.message), "case \(index): \(failure.message)")
            XCTAssertEqual(expected, ReferenceParser.parse(item.line), "case \(index)")
            item.line.withUnsafeBufferPointer { line in
                var fresh = RequestScanner()
                XCTAssertEqual(fresh.scan(line), failure, "case \(index): a fresh scanner")
                XCTAssertEqual(scanner.scan(line), failure, "case \(index): a reused scanner")
                XCTAssertEqual(scanner.tagString, item.tag ?? "", "case \(index)")
                assertRangesInside(scanner, count: line.count)
            }
        }
    }

    /// The value scanner skips eight bytes at a time; every length and every
    /// position of a byte that ends or spoils a bare value must be found.
    func testBareValuesOfEveryLengthAndEveryBadBytePositionAgreeWithTheReference() {
        let prefix = bytes("t v k=")
        var scanner = RequestScanner()
        var checked = 0
        for length in 1...24 {
            let clean = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            var lines: [[UInt8]] = [prefix + clean, prefix + clean + bytes(" z=1")]
            for position in 0..<length {
                for bad: UInt8 in [0x01, 0x09, 0x1F, 0x7F, UInt8(ascii: "\""), UInt8(ascii: "="), UInt8(ascii: " "),
                                   UInt8(ascii: "\\"), 0xC3] {
                    var value = clean
                    value[position] = bad
                    lines.append(prefix + value)
                    if bad == 0xC3 { value.insert(0xA9, at: position + 1) }  // é, valid
                    lines.append(prefix + value + bytes(" z=1"))
                }
            }
            for line in lines {
                let reference = ReferenceParser.parse(line)
                XCTAssertEqual(Request.parse(line), reference, "\(line)")
                line.withUnsafeBufferPointer { buffer in
                    XCTAssertEqual(result(&scanner, buffer), reference, "\(line)")
                }
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 2000)
    }

    // MARK: Random lines

    func testSeededRandomLinesAgreeWithRequestParseTheReferenceAndRoundTrip() {
        var random = SeededGenerator(seed: 0x5CA7_7E2)
        var reused = RequestScanner()
        var parsed = 0, failedNames: [ProtocolErrorName: Int] = [:], escapedSpans = 0, quotedPlainSpans = 0
        for index in 0..<600 {
            let line = randomLine(&random)
            let reference = ReferenceParser.parse(line)
            XCTAssertEqual(Request.parse(line), reference, "line \(index): \(describe(line))")
            line.withUnsafeBufferPointer { buffer in
                var fresh = RequestScanner()
                XCTAssertEqual(result(&fresh, buffer), reference, "line \(index), fresh scanner: \(describe(line))")
                XCTAssertEqual(result(&reused, buffer), reference, "line \(index), reused scanner: \(describe(line))")
                assertRangesInside(reused, count: buffer.count, "line \(index)")
                XCTAssertEqual(reused.tag, fresh.tag, "line \(index)")
                XCTAssertEqual(reused.verb, fresh.verb, "line \(index)")
                if case .request(let request) = reference {
                    XCTAssertEqual(Array(reused.arguments), Array(fresh.arguments), "line \(index)")
                    XCTAssertEqual(text(fresh, fresh.tag), request.tag)
                    XCTAssertEqual(text(fresh, fresh.verb), request.verb)
                    for (span, argument) in zip(fresh.arguments, request.arguments) {
                        XCTAssertEqual(text(fresh, span.key), argument.key, "line \(index)")
                        if !span.escaped {
                            XCTAssertEqual(text(fresh, span.value), argument.value, "line \(index): unescaped value is its range")
                        }
                        if span.escaped { escapedSpans += 1 }
                        if !span.escaped, span.value.lowerBound > 0, buffer[span.value.lowerBound - 1] == UInt8(ascii: "\"") {
                            quotedPlainSpans += 1
                        }
                    }
                }
            }
            switch reference {
            case .request(let request):
                parsed += 1
                var writer = LineWriter()
                writer.append(request)
                XCTAssertEqual(writer.bytes.last, UInt8(ascii: "\n"))
                let again = Request.parse(Array(writer.bytes.dropLast()))
                XCTAssertEqual(again, .request(request), "line \(index) round trip: \(describe(line)) -> \(describe(writer.bytes))")
            case .failure(let failure):
                failedNames[failure.name, default: 0] += 1
            }
        }
        // The generator reaches every outcome (so the agreement above is not vacuous).
        XCTAssertGreaterThan(parsed, 150, "lines that parse")
        XCTAssertGreaterThan(failedNames[.badSyntax] ?? 0, 150, "bad-syntax lines")
        XCTAssertGreaterThan(failedNames[.badArgument] ?? 0, 5, "bad-argument lines")
        XCTAssertGreaterThan(escapedSpans, 20, "quoted values with escapes")
        XCTAssertGreaterThan(quotedPlainSpans, 20, "quoted values without escapes")
    }

    // MARK: Prefixes

    func testEveryPrefixOfAValidLineFailsOrParsesAConsistentPrefixWithinItsBytes() {
        let lines = [
            "c1 can-evaluate ctx=0123456789abcdef0123456789abcdef policy=biometrics",
            "c1 can-evaluate policy=\"biometrics\" ctx=\"0123456789ABCDEF0123456789abcdef\"",
            #"tag.9_x-Y evaluate ctx=abc policy=1 reason="unlock \"notes\" \\ now\n" x="" y=\#u{e9}\#u{20AC}\#u{1F600}z"#,
            "t set ctx=a fallback-title=\"Use passcode \u{1F511}\" reuse-duration=300 interaction-not-allowed=true",
        ]
        for text in lines {
            let full = Array(text.utf8)
            guard case .request(let whole) = Request.parse(full) else {
                XCTFail("\(text) must parse")
                continue
            }
            var reused = RequestScanner()
            var parsedPrefixes = 0
            full.withUnsafeBufferPointer { buffer in
                for count in 0..<full.count {
                    // The prefix is a view of the whole line: a scan that read past
                    // its end would find real bytes there, and show it in its ranges.
                    let prefix = UnsafeBufferPointer(rebasing: buffer[0..<count])
                    let expected = ReferenceParser.parse(Array(prefix))
                    var fresh = RequestScanner()
                    let got = result(&fresh, prefix)
                    XCTAssertEqual(got, expected, "prefix of \(count) bytes of \(text)")
                    XCTAssertEqual(Request.parse(prefix), expected, "prefix of \(count) bytes of \(text)")
                    XCTAssertEqual(result(&reused, prefix), expected, "reused, prefix of \(count) bytes of \(text)")
                    assertRangesInside(fresh, count: count, "prefix of \(count) bytes")
                    assertRangesInside(reused, count: count, "reused, prefix of \(count) bytes")
                    guard case .request(let part) = got else { continue }
                    parsedPrefixes += 1
                    XCTAssertEqual(part.tag, whole.tag, "prefix \(count)")
                    XCTAssertTrue(whole.verb.hasPrefix(part.verb), "prefix \(count)")
                    if !part.arguments.isEmpty { XCTAssertEqual(part.verb, whole.verb, "prefix \(count)") }
                    XCTAssertLessThanOrEqual(part.arguments.count, whole.arguments.count, "prefix \(count)")
                    for (offset, argument) in part.arguments.enumerated() where offset < whole.arguments.count {
                        let complete = whole.arguments[offset]
                        XCTAssertEqual(argument.key, complete.key, "prefix \(count)")
                        if offset < part.arguments.count - 1 {
                            XCTAssertEqual(argument.value, complete.value, "prefix \(count): an earlier value is whole")
                        } else {
                            XCTAssertTrue(complete.value.utf8.starts(with: argument.value.utf8),
                                          "prefix \(count): the last value is a prefix of the full one")
                        }
                    }
                }
            }
            XCTAssertGreaterThan(parsedPrefixes, 3, "some prefixes of \(text) parse")
        }
    }

    // MARK: Helpers

    /// Scans `line` and hands the scanner (valid only inside) to `body`.
    private func scan(_ line: String, _ body: (RequestScanner, RequestFailure?) -> Void) {
        Array(line.utf8).withUnsafeBufferPointer { buffer in
            var scanner = RequestScanner()
            let failure = scanner.scan(buffer)
            body(scanner, failure)
        }
    }

    private func result(_ scanner: inout RequestScanner, _ line: UnsafeBufferPointer<UInt8>) -> RequestParseResult {
        if let failure = scanner.scan(line) { return .failure(failure) }
        return .request(scanner.request)
    }

    private func assertRangesInside(_ scanner: RequestScanner, count: Int, _ note: String = "",
                                    file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(scanner.bytes.count, count, note, file: file, line: line)
        var ranges = [scanner.tag, scanner.verb]
        for span in scanner.arguments { ranges += [span.key, span.value] }
        for range in ranges {
            XCTAssertTrue(range.lowerBound >= 0 && range.upperBound <= count, "\(range) outside 0..<\(count) \(note)",
                          file: file, line: line)
        }
        XCTAssertLessThanOrEqual(scanner.tag.upperBound, scanner.verb.isEmpty ? count : scanner.verb.lowerBound, note,
                                 file: file, line: line)
        for span in scanner.arguments {
            XCTAssertLessThan(scanner.verb.upperBound, span.key.lowerBound, note, file: file, line: line)
            XCTAssertLessThan(span.key.upperBound, span.value.lowerBound, note, file: file, line: line)
        }
    }

    private func randomLine(_ random: inout SeededGenerator) -> [UInt8] {
        // Mostly request-shaped, then a few edits with the alphabet's units;
        // one line in eight is nothing but units.
        let units: [[UInt8]] = ["a", "c", "t", "x", "Z", "0", "9", ".", "_", "-", " ", " ", "=", "=", "\"", "\"", "\\",
                                "n", "\u{e9}", "\u{20AC}", "\u{1F600}"].map(bytes) + [[0x00], [0xFF], [0x09]]
        if Int.random(in: 0..<8, using: &random) == 0 {
            return (0..<Int.random(in: 0...24, using: &random)).flatMap { _ in units.randomElement(using: &random)! }
        }
        let tagCharacters = Array("abcXYZ019._-".utf8)
        var line: [UInt8] = (0..<Int.random(in: 1...4, using: &random)).map { _ in tagCharacters.randomElement(using: &random)! }
        if Int.random(in: 0..<40, using: &random) == 0 { line = Array(repeating: UInt8(ascii: "T"), count: Int.random(in: 31...33, using: &random)) }
        line += bytes(" ") + bytes(["can-evaluate", "ping", "a0-", "can", "evaluate"].randomElement(using: &random)!)
        let keys = ["ctx", "policy", "ctxx", "a", "k-1", "reason", "ctx", "policy"]
        let bareUnits: [[UInt8]] = ["a", "b", "0", "f", "\\", "-", ".", "\u{e9}", "\u{20AC}", "\u{1F600}"].map(bytes)
        let quotedUnits: [[UInt8]] = ["a", "b", " ", "=", "\u{e9}", "\\\\", "\\\"", "\\n", "\\r", "\\t", "x"].map(bytes)
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            line += bytes(" ") + bytes(keys.randomElement(using: &random)!) + bytes("=")
            if Bool.random(using: &random) {
                line += (0..<Int.random(in: 1...10, using: &random)).flatMap { _ in bareUnits.randomElement(using: &random)! }
            } else {
                line += bytes("\"")
                line += (0..<Int.random(in: 0...6, using: &random)).flatMap { _ in quotedUnits.randomElement(using: &random)! }
                line += bytes("\"")
            }
        }
        for _ in 0..<[0, 0, 1, 1, 2].randomElement(using: &random)! {
            let unit = units.randomElement(using: &random)!
            let position = Int.random(in: 0...line.count, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: line.insert(contentsOf: unit, at: position)
            case 1 where position < line.count: line.remove(at: position)
            default: line.replaceSubrange(position..<min(line.count, position + 1), with: unit)
            }
        }
        return line
    }

    private func describe(_ line: [UInt8]) -> String {
        String(decoding: line, as: UTF8.self).debugDescription + " \(line)"
    }
}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Lookups these tests inspect a scan with (the daemon needs none: it reads
/// `request`, and the usual can-evaluate line through `CanEvaluateLine`).
extension RequestScanner {
    /// Where the value of `key` is, or nil when the key is absent.
    func span(for key: String) -> ArgumentSpan? {
        arguments.first { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0.key]), as: UTF8.self) == key }
    }

    /// The bytes of a value as written (escapes not undone).
    func rawValue(_ span: ArgumentSpan) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[span.value])
    }
}

private func text(_ scanner: RequestScanner, _ range: Range<Int>) -> String {
    String(decoding: UnsafeBufferPointer(rebasing: scanner.bytes[range]), as: UTF8.self)
}

/// The request grammar (PROTOCOL.md, "Framing") read byte by byte, with no
/// word tricks and no shared code: the tag, then the whole line's UTF-8 and
/// NUL check (the standard library's decoder), then the verb, then each
/// `SP KEY "=" VALUE` with its checks in the order and with the messages the
/// parser had before `RequestScanner` replaced it.
private enum ReferenceParser {
    static let space = UInt8(ascii: " "), quote = UInt8(ascii: "\""), equals = UInt8(ascii: "="),
               backslash = UInt8(ascii: "\\")

    static func parse(_ b: [UInt8]) -> RequestParseResult {
        func fail(_ tag: String?, _ name: ProtocolErrorName, _ message: String) -> RequestParseResult {
            .failure(RequestFailure(tag: tag, error: ProtocolError(name, message)))
        }
        guard !b.isEmpty else { return fail(nil, .badSyntax, "Empty line.") }
        let tagEnd = b.firstIndex(of: space) ?? b.count
        guard (1...32).contains(tagEnd), b[..<tagEnd].allSatisfy(isTagByte) else {
            return fail(nil, .badSyntax, "Bad tag: a tag is 1 to 32 characters of A-Z a-z 0-9 . _ -, then a space and a verb.")
        }
        let tag = String(decoding: b[..<tagEnd], as: UTF8.self)
        if let problem = textProblem(b) { return fail(tag, .badSyntax, problem) }
        guard tagEnd < b.count else { return fail(tag, .badSyntax, "Missing verb after the tag.") }
        let verbStart = tagEnd + 1
        let verbEnd = b[verbStart...].firstIndex(of: space) ?? b.count
        guard isName(b[verbStart..<verbEnd]) else {
            return fail(tag, .badSyntax, "Bad verb: verbs are [a-z][a-z0-9-]*, at most 32 characters.")
        }
        let verb = String(decoding: b[verbStart..<verbEnd], as: UTF8.self)
        var pairs: [(String, String)] = []
        var i = verbEnd
        while i < b.count {
            guard b[i] == space else { return fail(tag, .badSyntax, "Expected a space at byte \(i + 1).") }
            i += 1
            let keyStart = i
            while i < b.count, b[i] != equals, b[i] != space { i += 1 }
            guard i > keyStart else { return fail(tag, .badSyntax, "Expected KEY=VALUE at byte \(keyStart + 1).") }
            guard isName(b[keyStart..<i]) else {
                return fail(tag, .badSyntax,
                            "Bad key at byte \(keyStart + 1): keys are [a-z][a-z0-9-]*, at most 32 characters.")
            }
            let key = String(decoding: b[keyStart..<i], as: UTF8.self)
            guard i < b.count, b[i] == equals else {
                return fail(tag, .badSyntax, "Expected '=' after the key at byte \(keyStart + 1).")
            }
            i += 1
            var value: [UInt8] = []
            if i < b.count, b[i] == quote {
                let open = i
                i += 1
                while true {
                    guard i < b.count else {
                        return fail(tag, .badSyntax, "Unterminated quoted value starting at byte \(open + 1).")
                    }
                    let c = b[i]
                    if c == quote { break }
                    if c < 0x20 || c == 0x7F {
                        return fail(tag, .badSyntax,
                                    "Raw control character in a quoted value at byte \(i + 1): use \\n, \\r or \\t.")
                    }
                    if c == backslash {
                        guard i + 1 < b.count else {
                            return fail(tag, .badSyntax, "Unterminated quoted value starting at byte \(open + 1).")
                        }
                        switch b[i + 1] {
                        case backslash: value.append(backslash)
                        case quote: value.append(quote)
                        case UInt8(ascii: "n"): value.append(0x0A)
                        case UInt8(ascii: "r"): value.append(0x0D)
                        case UInt8(ascii: "t"): value.append(0x09)
                        default:
                            return fail(tag, .badSyntax,
                                        "Unknown escape at byte \(i + 1): only \\\\ \\\" \\n \\r \\t are allowed.")
                        }
                        i += 2
                        continue
                    }
                    value.append(c)
                    i += 1
                }
                i += 1
                guard i == b.count || b[i] == space else {
                    return fail(tag, .badSyntax, "Expected a space after the quoted value at byte \(i + 1).")
                }
            } else {
                let start = i
                while i < b.count, b[i] != space {
                    let c = b[i]
                    guard c >= 0x20, c != 0x7F, c != quote, c != equals else {
                        return fail(tag, .badSyntax,
                                    "Bad character in the value at byte \(i + 1): quote values that hold spaces, '\"', '=' or control characters.")
                    }
                    value.append(c)
                    i += 1
                }
                guard i > start else {
                    return fail(tag, .badSyntax, "Empty value at byte \(start + 1): write \"\" for an empty value.")
                }
            }
            guard pairs.count < 32 else { return fail(tag, .badArgument, "Too many arguments (at most 32).") }
            guard !pairs.contains(where: { $0.0 == key }) else {
                return fail(tag, .badArgument, "The key '\(key)' appears more than once.")
            }
            pairs.append((key, String(decoding: value, as: UTF8.self)))
        }
        return .request(Request(tag: tag, verb: verb, arguments: Arguments(pairs)))
    }

    static func isTagByte(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x2E || c == 0x5F || c == 0x2D
    }

    static func isName(_ name: ArraySlice<UInt8>) -> Bool {
        guard (1...32).contains(name.count), let first = name.first, first >= 0x61, first <= 0x7A else { return false }
        return name.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
    }

    /// The first NUL or the start of the first ill-formed UTF-8 sequence, whichever comes first.
    static func textProblem(_ b: [UInt8]) -> String? {
        var invalidAt: Int?
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = b.makeIterator()
        var offset = 0
        decoding: while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): offset += encoded.count
            case .error: invalidAt = offset; break decoding
            case .emptyInput: break decoding
            }
        }
        let nulAt = b.firstIndex(of: 0)
        switch (nulAt, invalidAt) {
        case (let nul?, let invalid?): return nul < invalid ? "NUL byte at byte \(nul + 1)." : "Invalid UTF-8 at byte \(invalid + 1)."
        case (let nul?, nil): return "NUL byte at byte \(nul + 1)."
        case (nil, let invalid?): return "Invalid UTF-8 at byte \(invalid + 1)."
        case (nil, nil): return nil
        }
    }
}
