// Every rule of the request grammar, with a good and a bad input; every bad
// input maps to its named error and to the right reply tag.

import XCTest
@testable import LocalAuthProtocol
import LocalAuthTestSupport

final class RequestParsingTests: XCTestCase {
    func assertRequest(
        _ line: String, tag: String, verb: String, _ pairs: [(String, String)] = [],
        file: StaticString = #filePath, line number: UInt = #line
    ) {
        guard let request = Request.parse(line).request else {
            XCTFail("\(line): \(String(describing: Request.parse(line).failure))", file: file, line: number)
            return
        }
        XCTAssertEqual(request.tag, tag, file: file, line: number)
        XCTAssertEqual(request.verb, verb, file: file, line: number)
        XCTAssertEqual(request.arguments, Arguments(pairs), file: file, line: number)
    }

    func assertFailure(
        _ line: [UInt8], tag: String?, _ name: ProtocolErrorName,
        file: StaticString = #filePath, line number: UInt = #line
    ) {
        guard let failure = Request.parse(line).failure else {
            XCTFail("\(line) parsed", file: file, line: number)
            return
        }
        XCTAssertEqual(failure.tag, tag, file: file, line: number)
        XCTAssertEqual(failure.name, name, "\(failure.message)", file: file, line: number)
        XCTAssertFalse(failure.message.isEmpty, file: file, line: number)
    }

    func assertFailure(
        _ line: String, tag: String?, _ name: ProtocolErrorName,
        file: StaticString = #filePath, line number: UInt = #line
    ) {
        assertFailure(Array(line.utf8), tag: tag, name, file: file, line: number)
    }

    // MARK: Tags

    func testTags() {
        assertRequest("c1 ping", tag: "c1", verb: "ping")
        assertRequest("A.b_C-9 ping", tag: "A.b_C-9", verb: "ping")
        assertRequest(String(repeating: "t", count: 32) + " ping", tag: String(repeating: "t", count: 32), verb: "ping")
        assertFailure(String(repeating: "t", count: 33) + " ping", tag: nil, .badSyntax)
        assertFailure(" ping", tag: nil, .badSyntax)
        assertFailure("c/1 ping", tag: nil, .badSyntax)
        assertFailure("* ping", tag: nil, .badSyntax)
        assertFailure("c\u{e9} ping", tag: nil, .badSyntax)
        assertFailure("", tag: nil, .badSyntax)
        XCTAssertEqual(Request.parse("").failure?.replyTag, "*")
    }

    // MARK: Verbs

    func testVerbs() {
        assertRequest("t can-evaluate ctx=1 policy=owner", tag: "t", verb: "can-evaluate", [("ctx", "1"), ("policy", "owner")])
        assertRequest("t a0-", tag: "t", verb: "a0-")
        assertRequest("t " + String(repeating: "v", count: 32), tag: "t", verb: String(repeating: "v", count: 32))
        assertFailure("t " + String(repeating: "v", count: 33), tag: "t", .badSyntax)
        assertFailure("t", tag: "t", .badSyntax)  // no verb
        assertFailure("t ", tag: "t", .badSyntax)
        assertFailure("t Ping", tag: "t", .badSyntax)
        assertFailure("t 1ping", tag: "t", .badSyntax)
        assertFailure("t -ping", tag: "t", .badSyntax)
        assertFailure("t pi_ng", tag: "t", .badSyntax)
        assertFailure("t  ping", tag: "t", .badSyntax)  // two spaces
        assertFailure("t\tping", tag: nil, .badSyntax)  // tab is not a separator
        XCTAssertEqual(Request.parse("t ping").failure?.replyTag, nil)
        XCTAssertEqual(Request.parse("t Ping").failure?.replyTag, "t")
    }

    // MARK: Keys

    func testKeys() {
        assertRequest("t v a=1 b-2=2 " + String(repeating: "k", count: 32) + "=3", tag: "t", verb: "v",
                      [("a", "1"), ("b-2", "2"), (String(repeating: "k", count: 32), "3")])
        assertFailure("t v " + String(repeating: "k", count: 33) + "=1", tag: "t", .badSyntax)
        assertFailure("t v A=1", tag: "t", .badSyntax)
        assertFailure("t v 1a=1", tag: "t", .badSyntax)
        assertFailure("t v =1", tag: "t", .badSyntax)
        assertFailure("t v a", tag: "t", .badSyntax)  // no '='
        assertFailure("t v a b=1", tag: "t", .badSyntax)
        assertFailure("t v a=1 ", tag: "t", .badSyntax)  // trailing space
        assertFailure("t v a=1  b=2", tag: "t", .badSyntax)
        assertFailure("t v a=1 a=2", tag: "t", .badArgument)  // duplicate
        assertFailure("t v a=1 b=2 a=\"1\"", tag: "t", .badArgument)
    }

    func testTooManyArguments() {
        let ok = (0..<32).map { "k\($0)=v" }.joined(separator: " ")
        XCTAssertNotNil(Request.parse("t v " + ok).request)
        assertFailure("t v " + ok + " k32=v", tag: "t", .badArgument)
    }

    // MARK: Bare values

    func testBareValues() {
        assertRequest("t v a=x", tag: "t", verb: "v", [("a", "x")])
        assertRequest("t v a=\u{e9}t\u{e9}\u{1F600} b=\\n", tag: "t", verb: "v", [("a", "\u{e9}t\u{e9}\u{1F600}"), ("b", "\\n")])
        assertRequest("t v a=x'y", tag: "t", verb: "v", [("a", "x'y")])
        assertFailure("t v a=", tag: "t", .badSyntax)  // bare values have 1+ bytes
        assertFailure("t v a= b=1", tag: "t", .badSyntax)
        assertFailure("t v a=b=c", tag: "t", .badSyntax)
        assertFailure("t v a=b\"c", tag: "t", .badSyntax)
        assertFailure("t v a=b\tc", tag: "t", .badSyntax)
        assertFailure("t v a=b\u{7f}", tag: "t", .badSyntax)
        assertFailure("t v a=b\r", tag: "t", .badSyntax)
        assertFailure("t v a=b\u{1b}", tag: "t", .badSyntax)
    }

    // MARK: Quoted values

    func testQuotedValues() {
        assertRequest("t v a=\"\"", tag: "t", verb: "v", [("a", "")])
        assertRequest("t v a=\"x y=z\"", tag: "t", verb: "v", [("a", "x y=z")])
        assertRequest(#"t v a="\\ \" \n \r \t" b=1"#, tag: "t", verb: "v", [("a", "\\ \" \n \r \t"), ("b", "1")])
        assertRequest("t v a=\"caf\u{e9}\"", tag: "t", verb: "v", [("a", "caf\u{e9}")])
        assertFailure(#"t v a="abc"#, tag: "t", .badSyntax)  // unterminated
        assertFailure(#"t v a="abc\"#, tag: "t", .badSyntax)
        assertFailure(#"t v a="\x""#, tag: "t", .badSyntax)  // unknown escape
        assertFailure(#"t v a="\u0041""#, tag: "t", .badSyntax)
        assertFailure(#"t v a="\'""#, tag: "t", .badSyntax)
        assertFailure("t v a=\"x\ty\"", tag: "t", .badSyntax)  // raw control inside quotes
        assertFailure("t v a=\"x\u{7f}\"", tag: "t", .badSyntax)
        assertFailure(#"t v a="x"y"#, tag: "t", .badSyntax)  // no space after the closing quote
        assertFailure(#"t v a="x"="#, tag: "t", .badSyntax)
    }

    // MARK: Text

    func testInvalidUTF8AndNUL() {
        let cases: [(String, [UInt8])] = [
            ("0xFF", [0xFF]),
            ("0xFE", [0xFE]),
            ("lone continuation", [0x80]),
            ("overlong slash", [0xC0, 0xAF]),
            ("overlong C1", [0xC1, 0xBF]),
            ("overlong 3-byte", [0xE0, 0x80, 0xAF]),
            ("overlong 4-byte", [0xF0, 0x80, 0x80, 0xAF]),
            ("surrogate D800", [0xED, 0xA0, 0x80]),
            ("surrogate DFFF", [0xED, 0xBF, 0xBF]),
            ("above U+10FFFF", [0xF4, 0x90, 0x80, 0x80]),
            ("F5 lead", [0xF5, 0x80, 0x80, 0x80]),
            ("truncated 2-byte", [0xC3]),
            ("truncated 3-byte", [0xE2, 0x82]),
            ("truncated 4-byte", [0xF0, 0x9F, 0x98]),
            ("bad continuation", [0xE2, 0x28, 0xA1]),
        ]
        for (name, bad) in cases {
            for placement in 0..<3 {
                var line = Array("t v ".utf8)
                switch placement {
                case 0: line += Array("a=".utf8) + bad
                case 1: line += Array("a=\"".utf8) + bad + [UInt8(ascii: "\"")]
                default: line += Array("a=12345678".utf8) + bad + Array("9 b=1".utf8)  // past the fast path
                }
                guard let failure = Request.parse(line).failure else {
                    XCTFail("\(name) accepted")
                    continue
                }
                XCTAssertEqual(failure.tag, "t", name)
                XCTAssertEqual(failure.name, .badSyntax, name)
                XCTAssertTrue(failure.message.contains("UTF-8"), "\(name): \(failure.message)")
            }
        }
        // The largest valid sequences of each length are accepted.
        for good: [UInt8] in [[0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
                              [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF]] {
            XCTAssertNotNil(Request.parse(Array("t v a=".utf8) + good).request, "\(good)")
        }
        // NUL anywhere, even inside quotes.
        for line in [Array("t v a=x".utf8) + [0], Array("t v a=\"x".utf8) + [0, 0x22], Array("t v\0".utf8),
                     Array("t v a=0123456789".utf8) + [0]] {
            guard let failure = Request.parse(line).failure else { XCTFail("NUL accepted"); continue }
            XCTAssertEqual(failure.tag, "t")
            XCTAssertEqual(failure.name, .badSyntax)
            XCTAssertTrue(failure.message.contains("NUL"), failure.message)
        }
        assertFailure([0, 0x20, 0x70], tag: nil, .badSyntax)
        assertFailure([0xFF, 0x20, 0x70], tag: nil, .badSyntax)
    }

    func testValidatorAgreesWithTheStandardLibrary() {
        var rng = SeededGenerator(seed: 42)
        for _ in 0..<5000 {
            let count = Int.random(in: 0...24, using: &rng)
            let bytes = (0..<count).map { _ -> UInt8 in
                // Bias towards the interesting lead and continuation bytes.
                Bool.random(using: &rng) ? UInt8.random(in: 0x80...0xF5, using: &rng) : UInt8.random(in: 1...0x7F, using: &rng)
            }
            let ours = bytes.withUnsafeBufferPointer { Grammar.checkText($0) } == .valid
            let theirs = String(validating: bytes, as: UTF8.self) != nil
            XCTAssertEqual(ours, theirs, "\(bytes)")
        }
    }

    // MARK: Verb table

    func testCheckedVerb() {
        XCTAssertEqual(Request.parse("t evaluate ctx=1 policy=owner reason=x").request?.checkedVerb(), .success(.evaluate))
        XCTAssertEqual(Request.parse("t frobnicate").request?.checkedVerb().failureName, .unknownVerb)
        let bad = Request.parse("t evaluate ctx=1 polcy=owner").request!.checkedVerb()
        XCTAssertEqual(bad.failureName, .badArgument)
        guard case .failure(let error) = bad else { return XCTFail() }
        XCTAssertTrue(error.message.contains("'polcy'"), error.message)
        XCTAssertEqual(Request.parse("t ping x=1").request?.checkedVerb().failureName, .badArgument)
        for verb in Verb.allCases {
            XCTAssertEqual(Request.parse("t \(verb.rawValue)").request?.checkedVerb(), .success(verb))
        }
    }

    func testArgumentHelpers() {
        let request = Request.parse("t set ctx=abc fallback-title=\"\"").request!
        XCTAssertEqual(request.arguments.value(for: "ctx"), "abc")
        XCTAssertEqual(request.arguments.value(for: "fallback-title"), "")
        XCTAssertNil(request.arguments.value(for: "cancel-title"))
        XCTAssertEqual(request.arguments.require("ctx"), .success("abc"))
        guard case .failure(let missing) = request.arguments.require("policy") else { return XCTFail() }
        XCTAssertEqual(missing.name, .missingArgument)
        XCTAssertEqual(request.arguments.firstKey(notIn: ["ctx"]), "fallback-title")
        XCTAssertNil(request.arguments.check(allowedKeys: Verb.set.allowedKeys, verb: "set"))
    }

    func testErrorNamesAreTheWireNames() {
        XCTAssertEqual(ProtocolErrorName.allCases.map(\.wireName), [
            "bad-syntax", "unknown-verb", "bad-argument", "missing-argument", "unknown-context",
            "permission-denied", "bad-state", "busy", "limit-exceeded", "line-too-long", "unavailable", "internal",
            "unknown-right", "not-authorized", "unknown-request",
        ])
        for name in ProtocolErrorName.allCases { XCTAssertEqual(ProtocolErrorName(wireName: name.wireName), name) }
    }
}

extension Result where Failure == ProtocolError {
    var failureName: ProtocolErrorName? {
        if case .failure(let e) = self { return e.name }
        return nil
    }
}
