// CanEvaluateLine, the daemon's one-pass reading of the usual can-evaluate
// line, against the general grammar (`Request.parse`, the scanner): it
// takes a line only when the scanner reads it as the same tag, verb and two
// bare arguments with a short policy name, and then gives the same pieces
// and that policy's number; it takes every line of that form (so the fast
// path is not vacuous). Checked on fixed lines, every prefix, lines fed
// byte by byte through the splitter, every one-byte change, deletion,
// duplication and insertion of usual lines, and seeded lines built from
// every policy spelling, ids of 31 to 33 digits in both cases, and the
// separators a client might get wrong (tab, CR, NUL, doubled and trailing
// spaces, quotes).

import XCTest

@testable import LocalAuthProtocol
import LocalAuthTestSupport

final class CanEvaluateLineTests: XCTestCase {
    static let ctx = "0123456789abcdef0123456789ABCDEF"

    /// PROTOCOL.md's short policy spellings and Apple's numbers, written
    /// out here rather than taken from the parser.
    static let shortNames: [(String, Int)] = [
        ("1", 1), ("2", 2), ("3", 3), ("4", 4), ("5", 5),
        ("biometrics", 1), ("owner", 2), ("companion", 3), ("biometrics-or-companion", 4), ("wrist", 5),
    ]

    /// Words the scanner takes as a policy value that the fast path must
    /// leave to it: Apple's long names, near misses of the short ones, and
    /// names no policy has.
    static let otherWords = [
        "0", "6", "9", "a", "deviceOwnerAuthenticationWithBiometrics", "LAPolicyDeviceOwnerAuthentication",
        "deviceOwnerAuthenticationWithBiometricsOrCompanion", "Biometrics", "biometric", "biometricsx", "biometrica",
        "ometrics", "owneR", "owne", "owners", "wrisT", "cy=owner", "compani0n", "companionn", "Companion",
        "biometrics-or-companio", "biometrics-or-companionn", "biometrics_or_companion", "biometrics-or-Companion",
        "bio", "sideways", "11", "01", "-", ".", "_", "biometrics.",
    ]

    func testTheLiteralsAreCheckedAsTheirBytes() {
        XCTAssertEqual(CanEvaluateLine.verbAndCtxKey.0, word(" can-evaluate ctx=", at: 0))
        XCTAssertEqual(CanEvaluateLine.verbAndCtxKey.1, word(" can-evaluate ctx=", at: 8))
        XCTAssertEqual(CanEvaluateLine.verbAndCtxKey.2,
                       Array(" can-evaluate ctx=".utf8).withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16, as: UInt16.self) })
        XCTAssertEqual(" can-evaluate ctx=".utf8.count, 18)
        XCTAssertEqual(CanEvaluateLine.policyKey, word(" policy=", at: 0))
        typealias W = CanEvaluateLine.PolicyWords
        XCTAssertEqual(W.owner, word("cy=owner", at: 0))
        XCTAssertEqual(W.wrist, word("cy=wrist", at: 0))
        XCTAssertEqual([W.companion.0, W.companion.1], [word("companion", at: 0), word("companion", at: 1)])
        XCTAssertEqual([W.biometrics.0, W.biometrics.1], [word("biometrics", at: 0), word("biometrics", at: 2)])
        let long = "biometrics-or-companion"
        XCTAssertEqual([W.biometricsOrCompanion.0, W.biometricsOrCompanion.1, W.biometricsOrCompanion.2],
                       [word(long, at: 0), word(long, at: 8), word(long, at: 15)])
    }

    func testEveryShortPolicyNameGivesItsNumberAndTheLinesPieces() {
        for (name, number) in Self.shortNames {
            // Tags ending at every place in the words the tag is read in.
            for tag in ["r0", "A.b_c-9", "1", "la12345"] + [8, 9, 15, 16, 17, 24, 25, 31, 32].map({ String(repeating: "t", count: $0) }) {
                let line = "\(tag) can-evaluate ctx=\(Self.ctx) policy=\(name)"
                let parts = read(line)
                XCTAssertEqual(parts?.tag, tag, line)
                XCTAssertEqual(parts?.ctx, Self.ctx, line)
                XCTAssertEqual(parts?.policy, name, line)
                XCTAssertEqual(parts?.number, number, line)
                assertAgreesWithTheParser(Array(line.utf8))
            }
        }
    }

    func testOtherPolicyWordsAreLeftToTheScanner() {
        for word in Self.otherWords {
            let line = "t can-evaluate ctx=\(Self.ctx) policy=\(word)"
            XCTAssertNil(read(line), line)
            assertAgreesWithTheParser(Array(line.utf8))
        }
    }

    func testOtherSpellingsOfTheRequestAreLeftToTheScanner() {
        let ctx = Self.ctx
        for line in [
            "t can-evaluate policy=1 ctx=\(ctx)",  // reordered
            "t can-evaluate ctx=\"\(ctx)\" policy=1",  // quoted
            "t can-evaluate ctx=\(ctx) policy=\"1\"",
            "t can-evaluate ctx=\(ctx) policy=bio\\metrics",  // escape
            "t can-evaluate ctx=\(ctx) policy=1 extra=2",
            "t can-evaluate ctx=\(ctx)",
            "t can-evaluate ctx=\(ctx) policy=1 ",
            "t can-evaluate ctx=\(ctx)  policy=1",
            "t can-evaluate ctx=\(ctx) policy=1\r",
            "t can-evaluate ctx=\(ctx) policy=owner\0",
            "t can-evaluate ctx=\(ctx)\tpolicy=1",
            "t can-evaluate ctx=\(ctx) policy=",
            "t can-evaluate ctx= policy=1",
            "t Can-evaluate ctx=\(ctx) policy=1",
            "t can-evaluates ctx=\(ctx) policy=1",
            "t evaluate ctx=\(ctx) policy=1",
            "can-evaluate ctx=\(ctx) policy=1",
            " t can-evaluate ctx=\(ctx) policy=1",
            "t  can-evaluate ctx=\(ctx) policy=1",
            "\(String(repeating: "t", count: 33)) can-evaluate ctx=\(ctx) policy=1",  // tag too long
            "\(String(repeating: "t", count: 40)) can-evaluate ctx=\(ctx) policy=1",
            "\(String(repeating: "t", count: 7))\u{e9} can-evaluate ctx=\(ctx) policy=1",
            "\(String(repeating: "t", count: 8))/ can-evaluate ctx=\(ctx) policy=1",
            "\(String(repeating: "t", count: 80))",
            "t can-evaluate ctx=\(ctx.dropLast()) policy=1",  // not a context id: 31 digits
            "t can-evaluate ctx=\(ctx)0 policy=1",  // 33
            "t can-evaluate ctx=\(ctx.dropLast())g policy=1",
            "t can-evaluate ctx=\(ctx.dropLast())G policy=1",
            "t can-evaluate ctx=\(ctx.dropLast())\u{e9} policy=1",
            "t can-evaluate ctx=\(ctx) policy=bi\u{f6}metrics",
            "t can-evaluate ctx=\(ctx) policy=a=b",
            "t can-evaluate ctx=\(ctx) policy==1",
            "",
        ] {
            XCTAssertNil(read(line), line.debugDescription)
            assertAgreesWithTheParser(Array(line.utf8))
        }
    }

    func testEveryPrefixButTheWholeLineIsLeftToTheScanner() {
        for name in ["owner", "biometrics-or-companion", "4"] {
            let line = Array("tag-1 can-evaluate ctx=\(Self.ctx) policy=\(name)".utf8)
            for count in 0...line.count {
                let prefix = Array(line[0..<count])
                let taken = prefix.withUnsafeBufferPointer { CanEvaluateLine($0) != nil }
                // A prefix that ends inside "biometrics-or-companion" may be another name.
                let isName = Self.shortNames.contains { "tag-1 can-evaluate ctx=\(Self.ctx) policy=\($0.0)" == String(decoding: prefix, as: UTF8.self) }
                XCTAssertEqual(taken, isName, "\(name): prefix of \(count) bytes")
                assertAgreesWithTheParser(prefix)
            }
        }
    }

    /// The daemon's way in: bytes arrive one at a time, the splitter copies
    /// each line out (`next(copyingInto:)`), the fast path reads the copy.
    func testLinesFedByteByByteThroughTheSplitterAgreeWithTheParser() {
        var lines = Self.shortNames.map { "r\($0.1) can-evaluate ctx=\(Self.ctx) policy=\($0.0)" }
        lines += Self.otherWords.map { "o can-evaluate ctx=\(Self.ctx) policy=\($0)" }
        lines += ["x can-evaluate ctx=\(Self.ctx) policy=owner\r", "y can-evaluate ctx=\(Self.ctx) policy=owner ", ""]
        let stream = Array(lines.joined(separator: "\n").utf8) + [UInt8(ascii: "\n")]
        var splitter = LineSplitter()
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: splitter.maximumLineLength, alignment: 8)
        defer { copy.deallocate() }
        var seen: [String] = [], taken = 0
        for byte in stream {
            withUnsafeBytes(of: byte) { splitter.append($0) }
            while let event = splitter.next(copyingInto: copy) {
                guard case .line(let line) = event else { return XCTFail("no line is too long here") }
                if CanEvaluateLine(line) != nil { taken += 1 }
                assertAgreesWithTheParser(Array(line))
                seen.append(String(decoding: line, as: UTF8.self))
            }
        }
        // The splitter drops the CR before an LF: that line is an owner check too.
        XCTAssertEqual(seen.count, lines.count)
        XCTAssertEqual(taken, Self.shortNames.count + 1)
    }

    func testEveryOneByteChangeDeletionDuplicationAndInsertionAgreesWithTheParser() {
        // Separators, escapes, UTF-8 lead bytes, and both ends of every hex range.
        let interesting: [UInt8] = [0, 0x09, 0x0A, 0x0D, 0x10, 0x19, 0x20, 0x22, 0x2D, 0x2E, 0x2F, 0x30, 0x31, 0x35, 0x36, 0x39,
                                    0x3A, 0x3D, 0x40, 0x41, 0x46, 0x47, 0x5C, 0x5F, 0x60, 0x61, 0x66, 0x67, 0x7A, 0x7F, 0x80,
                                    0xB0, 0xC3, 0xE6, 0xFF]
        var bases = ["r15 can-evaluate ctx=\(Self.ctx) policy=biometrics", "x can-evaluate ctx=\(Self.ctx) policy=2"]
        bases += ["owner", "companion", "biometrics-or-companion", "wrist"].map { "t.9 can-evaluate ctx=\(Self.ctx) policy=\($0)" }
        for base in bases {
            let line = Array(base.utf8)
            for index in 0..<line.count {
                var deleted = line
                deleted.remove(at: index)
                assertAgreesWithTheParser(deleted)
                var duplicated = line
                duplicated.insert(line[index], at: index)
                assertAgreesWithTheParser(duplicated)
                for byte in interesting {
                    var changed = line
                    changed[index] = byte
                    assertAgreesWithTheParser(changed)
                    var inserted = line
                    inserted.insert(byte, at: index)
                    assertAgreesWithTheParser(inserted)
                }
            }
        }
    }

    /// Lines assembled from likely pieces and slips: every policy spelling
    /// the daemon knows or could be sent, ids of 31, 32 and 33 digits in
    /// either case (or with one bad byte), each separator sometimes a tab,
    /// doubled, or missing, a CR, NUL or space at the end, a quoted value,
    /// an extra argument; then one to three random byte edits on a third.
    func testSeededLinesFromEveryPieceAgreeWithTheParser() {
        var random = SeededGenerator(seed: 0xCA_11E7_0021)
        let tagBytes = Array("aZ09._-".utf8)
        let hexDigits = Array("0123456789abcdefABCDEF".utf8)
        func policyWord() -> String { random.chance(50) ? random.pick(Self.shortNames).0 : random.pick(Self.otherWords) }
        let edits: [UInt8] = [0, 0x09, 0x0D, 0x20, 0x22, 0x3D, 0x5C, 0x7F, 0x80, 0xC3, 0xFF, 0x41, 0x61, 0x30]
        func tag() -> String {
            String(decoding: (0..<(1 + random.below(random.chance(5) ? 40 : 6))).map { _ in random.pick(tagBytes) }, as: UTF8.self)
        }
        func id() -> String {
            var digits = (0..<random.pick([32, 32, 32, 32, 31, 33])).map { _ in random.pick(hexDigits) }
            if random.chance(10) { digits[random.below(digits.count)] = UInt8(random.below(0x80) + 1) & 0x7F }
            let text = String(decoding: digits, as: UTF8.self)
            return random.chance(20) ? text.uppercased() : text
        }
        func separator() -> String { random.chance(96) ? " " : random.pick(["\t", "  ", "", " \r"]) }
        var taken = 0, accepted = 0
        for _ in 0..<20_000 {
            let verb = random.chance(90) ? "can-evaluate" : random.pick(["evaluate", "Can-evaluate", "can-evaluate2"])
            var ctx = "ctx=\(id())", policy = "policy=\(policyWord())"
            if random.chance(5) { ctx = "ctx=\"\(id())\"" }
            if random.chance(5) { policy = "policy=\"\(policyWord())\"" }
            var arguments = random.chance(5) ? [policy, ctx] : [ctx, policy]
            if random.chance(5) { arguments.append(random.pick(["extra=1", "ctx=\(id())", "policy=owner"])) }
            var line = Array((tag() + separator() + verb + separator() + arguments.joined(separator: separator())).utf8)
            if random.chance(8) { line += [random.pick([0x20, 0x0D, 0x00, 0x09])] }
            if random.chance(33) {
                for _ in 0..<(1 + random.below(3)) where !line.isEmpty {
                    let at = random.below(line.count)
                    switch random.below(4) {
                    case 0: line[at] = random.pick(edits)
                    case 1: line.remove(at: at)
                    case 2: line.insert(line[at], at: at)
                    default: line.insert(random.pick(edits), at: at)
                    }
                }
            }
            if assertAgreesWithTheParser(line) { taken += 1 }
            if case .request = Request.parse(line) { accepted += 1 }
        }
        // The set is not vacuous either way: many lines take the fast path,
        // many others are requests it must leave to the scanner.
        XCTAssertGreaterThan(taken, 1_500)
        XCTAssertGreaterThan(accepted - taken, 2_000)
    }

    // MARK: Helpers

    private func word(_ text: String, at offset: Int) -> UInt64 {
        Array(text.utf8).withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
    }

    private func read(_ line: String) -> (tag: String, ctx: String, policy: String, number: Int)? {
        Array(line.utf8).withUnsafeBufferPointer { buffer in
            CanEvaluateLine(buffer).map { (text($0.tag), text($0.ctx), text($0.policy), $0.policyNumber) }
        }
    }

    /// Taken exactly when the parse gives `can-evaluate` with ctx (32 hex
    /// digits) then policy (a short name), written bare and single-spaced;
    /// and then with the same three pieces, the policy's number and the
    /// id's bits. Returns whether the fast path took the line.
    @discardableResult
    private func assertAgreesWithTheParser(_ line: [UInt8], file: StaticString = #filePath, line number: UInt = #line) -> Bool {
        let usual = line.withUnsafeBufferPointer { buffer in
            CanEvaluateLine(buffer).map { (text($0.tag), text($0.ctx), text($0.policy), $0.policyNumber, [$0.ctxHigh, $0.ctxLow]) }
        }
        let shown = String(decoding: line, as: UTF8.self).debugDescription
        var expected: (String, String, String, Int)?
        if case .request(let request) = Request.parse(line), request.verb == "can-evaluate", request.arguments.count == 2,
           request.arguments[0].key == "ctx", request.arguments[1].key == "policy",
           let ctx = request.arguments.value(for: "ctx"), let policy = request.arguments.value(for: "policy"),
           isContextID(ctx), let policyNumber = Self.shortNames.first(where: { $0.0 == policy })?.1,
           // Written bare, single-spaced: the line is exactly these pieces.
           line == Array("\(request.tag) can-evaluate ctx=\(ctx) policy=\(policy)".utf8) {
            expected = (request.tag, ctx, policy, policyNumber)
        }
        XCTAssertEqual(usual?.0, expected?.0, shown, file: file, line: number)
        XCTAssertEqual(usual?.1, expected?.1, shown, file: file, line: number)
        XCTAssertEqual(usual?.2, expected?.2, shown, file: file, line: number)
        XCTAssertEqual(usual?.3, expected?.3, shown, file: file, line: number)
        // The id as parsed while checked: the digits read the plain way.
        if let usual {
            XCTAssertEqual(usual.4, [UInt64(usual.1.prefix(16), radix: 16)!, UInt64(usual.1.suffix(16), radix: 16)!], shown,
                           file: file, line: number)
        }
        return usual != nil
    }

    private func isContextID(_ value: String) -> Bool {
        value.utf8.count == 32 && value.utf8.allSatisfy { b in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(b)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(b)
        }
    }
}

private func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
    String(decoding: bytes, as: UTF8.self)
}
