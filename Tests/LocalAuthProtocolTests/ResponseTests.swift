// Writing replies (and requests) and reading them back: the writer's quoting
// against the parser's grammar, the error shapes of PROTOCOL.md, and the
// sample lines of PROTOCOL.md read by the client parser.

import XCTest
@testable import LocalAuthProtocol
import LocalAuthTestSupport

final class ResponseTests: XCTestCase {
    func text(_ build: (inout LineWriter) -> Void) -> String {
        var writer = LineWriter()
        build(&writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    func testWriterShapes() {
        XCTAssertEqual(text { $0.appendOK(tag: "c4") }, "c4 OK\n")
        XCTAssertEqual(text { w in
            w.beginResponse(tag: "c1", status: .ok)
            w.append(key: "ctx", value: "8c1f")
            w.append(key: "n", value: -42)
            w.append(key: "big", value: Int.min)
            w.append(key: "b", value: true)
            w.endLine()
        }, "c1 OK ctx=8c1f n=-42 big=-9223372036854775808 b=true\n")
        XCTAssertEqual(
            text { $0.appendProtocolError(tag: "c9", ProtocolError(.unknownVerb, "Unknown verb 'x'.")) },
            "c9 ERR domain=protocol name=unknown-verb message=\"Unknown verb 'x'.\"\n")
        XCTAssertEqual(text { w in
            w.beginLAError(tag: "e1", code: -1, name: "authenticationFailed", message: "Passcode entry is disabled.")
            w.append(key: "retry-after", value: 60)
            w.endLine()
        }, "e1 ERR domain=la code=-1 name=authenticationFailed message=\"Passcode entry is disabled.\" retry-after=60\n")
        XCTAssertEqual(text { $0.appendBye(reason: "shutdown") }, "* BYE reason=shutdown\n")
        let failure = Request.parse("!!").failure!
        XCTAssertTrue(text { $0.append(failure) }.hasPrefix("* ERR domain=protocol name=bad-syntax message="))
        XCTAssertEqual(text { $0.append(Request(tag: "c5", verb: "passcode", arguments: ["ctx": "1", "secret": "12 34"])) },
                       "c5 passcode ctx=1 secret=\"12 34\"\n")
    }

    func testQuoting() {
        let cases: [(String, String)] = [
            ("plain", "plain"),
            ("", "\"\""),
            ("a b", "\"a b\""),
            ("a=b", "\"a=b\""),
            ("say \"hi\"", #""say \"hi\"""#),
            (#"back\slash"#, #""back\\slash""#),
            ("l1\nl2\r\t", #""l1\nl2\r\t""#),
            ("bell\u{07}nul\u{0}del\u{7f}", "\"bellnuldel\""),  // unrepresentable controls are dropped
            ("caf\u{e9}", "caf\u{e9}"),
        ]
        for (value, wire) in cases {
            XCTAssertEqual(text { w in w.beginResponse(tag: "t", status: .ok); w.append(key: "v", value: value) },
                           "t OK v=" + wire, value)
        }
    }

    func testRoundTrips() {
        var rng = SeededGenerator(seed: 7)
        let pieces = ["", " ", "a", "=", "\"", "\\", "\n", "\r", "\t", "\u{e9}", "\u{1F600}", "x y", "0", "-"]
        for _ in 0..<2000 {
            var arguments = Arguments()
            for k in 0..<Int.random(in: 0...5, using: &rng) {
                let value = (0..<Int.random(in: 0...6, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
                arguments["k\(k)"] = value
            }
            let status = Response.Status.allCases.randomElement(using: &rng)!
            let response = Response(tag: "t-\(rng.next() % 100)", status: status, arguments: arguments)
            var writer = LineWriter()
            writer.append(response)
            XCTAssertEqual(writer.bytes.last, 10)
            XCTAssertEqual(try Response.parse(writer.bytes.dropLast()), response)

            let request = Request(tag: response.tag, verb: "set", arguments: arguments)
            writer = LineWriter()
            writer.append(request)
            XCTAssertEqual(Request.parse(writer.bytes.dropLast()), .request(request))
        }
    }

    func testProtocolSampleRepliesParse() throws {
        let lines = [
            "c1 OK ctx=8c1f0a6e2b7d4e59a0c3f1d2e4b5a697",
            "c3 PROMPT kind=biometric attempt=2 biometry=touchID reason=\"unlock your notes\" cancel=Cancel fallback=\"Enter Password\"",
            "e1 ERR domain=la code=-1 name=authenticationFailed message=\"Application retry limit exceeded.\"",
            "e1 ERR domain=la code=-4 name=systemCancel message=\"Prompt timed out.\" reason=timeout",
            "* BYE reason=shutdown",
            "c3 OK method=passcode",
        ]
        let parsed = try lines.map { line throws(ProtocolError) in try Response.parse(line) }
        XCTAssertEqual(parsed[0].arguments.value(for: "ctx"), "8c1f0a6e2b7d4e59a0c3f1d2e4b5a697")
        XCTAssertEqual(parsed[1].status, .prompt)
        XCTAssertFalse(parsed[1].isFinal)
        XCTAssertEqual(parsed[1].arguments.value(for: "fallback"), "Enter Password")
        XCTAssertEqual(parsed[2].errorDomain, "la")
        XCTAssertEqual(parsed[2].errorCode, -1)
        XCTAssertEqual(parsed[2].errorName, "authenticationFailed")
        XCTAssertEqual(parsed[3].message, "Prompt timed out.")
        XCTAssertEqual(parsed[4].tag, "*")
        XCTAssertEqual(parsed[4].status, .bye)
        XCTAssertTrue(parsed[5].isFinal)
    }

    func testBadReplies() {
        for line in ["", "c1", "c1 ", "c1 ok", "c1 OKAY", "** OK", "c1 OK a", "c1 OK a=1 a=2", "c1 OK a=\"x", "c1  OK",
                     "c1 OK a=b\u{1}"] {
            XCTAssertThrowsError(try Response.parse(line), line)
        }
        XCTAssertThrowsError(try Response.parse([UInt8]("c1 OK a=".utf8) + [0xC0, 0x80]))
    }

    func testWriterReusesItsBuffer() {
        var writer = LineWriter(capacity: 256)
        writer.appendOK(tag: "a")
        writer.appendOK(tag: "b")
        writer.removeFirst(5)
        XCTAssertEqual(String(decoding: writer.bytes, as: UTF8.self), "b OK\n")
        writer.removeFirst(5)
        XCTAssertTrue(writer.bytes.isEmpty)
        XCTAssertGreaterThanOrEqual(writer.bytes.capacity, 256)
    }
}
