// Bytes a careless or hostile client may send (PROTOCOL.md Framing, Errors).
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class HostileInputTests: IntegrationTestCase {
    func testALineOverTheLimitIsAnsweredOnceThenByeAndClose() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        XCTAssertOK(try client.request("p ping"))
        try client.send("t1 ping x=" + String(repeating: "a", count: 9000))
        let lines = try client.readUntilEOF()
        XCTAssertEqual(lines.count, 2, "\(lines)")
        guard lines.count == 2 else { return }
        let error = try Client.parse(lines[0])
        XCTAssertEqual(error.tag, "*")
        XCTAssertProtocolError(error, "line-too-long")
        let bye = try Client.parse(lines[1])
        XCTAssertEqual(bye.status, .bye)
        XCTAssertEqual(bye["reason"], "protocol")
        // The daemon carries on for others.
        XCTAssertOK(try daemon.connect().request("p2 ping"))
    }

    func testALineOfExactly8192BytesIncludingTheLineFeedIsAccepted() throws {
        // The property caps (S-48) raised to the line length: this is about framing.
        let daemon = try startDaemon(configuration: "[Daemon]\nMaxPropertyBytes=8192\nMaxPropertyBytesPerContext=8192\n"
            + DaemonProcess.defaultConfiguration)
        let client = try daemon.connect()
        let prefix = "t1 set ctx=\(try newContext(client)) localized-reason="
        let line = prefix + String(repeating: "r", count: 8191 - prefix.utf8.count)
        XCTAssertEqual(line.utf8.count + 1, 8192)
        XCTAssertOK(try client.request(line))
        try client.send(line + "r")
        XCTAssertProtocolError(try client.next(tag: "*"), "line-too-long")
    }

    func testAnUnterminatedHugeLineIsCutOffToo() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try client.sendRaw(Array(repeating: UInt8(ascii: "a"), count: 20000))
        let lines = try client.readUntilEOF()
        XCTAssertEqual(lines.count, 2, "\(lines)")
        XCTAssertEqual(try lines.first.map(Client.parse)?.errorName, "line-too-long")
    }

    func testNULByteAndInvalidUTF8AreBadSyntaxAndTheConnectionStaysUsable() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try client.sendRaw(Array("n1 ping".utf8) + [0] + Array("\n".utf8))
        XCTAssertProtocolError(try client.next(tag: "n1"), "bad-syntax")
        XCTAssertOK(try client.request("n2 ping"))
        try client.sendRaw(Array("u1 status uid=".utf8) + [0xFF, 0xFE, 0x0A])
        XCTAssertProtocolError(try client.next(tag: "u1"), "bad-syntax")
        try client.sendRaw(Array("u2 hello client=".utf8) + [0xC3, 0x28, 0x0A])  // a broken 2-byte sequence
        XCTAssertProtocolError(try client.next(tag: "u2"), "bad-syntax")
        try client.sendRaw([0xFF, 0x20] + Array("ping\n".utf8))  // not even a tag
        XCTAssertProtocolError(try client.next(tag: "*"), "bad-syntax")
        XCTAssertOK(try client.request("n3 ping"))
        // Valid UTF-8 in a quoted value is fine.
        XCTAssertOK(try client.request("n4 hello client=\"caf\u{e9} \u{1F600}\""))
    }

    func testMalformedLinesAreBadSyntax() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try client.send("")
        XCTAssertProtocolError(try client.next(tag: "*"), "bad-syntax")
        try client.send("!!! ping")
        XCTAssertProtocolError(try client.next(tag: "*"), "bad-syntax")
        try client.send(String(repeating: "t", count: 33) + " ping")
        XCTAssertProtocolError(try client.next(tag: "*"), "bad-syntax")
        for (index, line) in ["ping  ", "PING", "hello client=\"open", "hello client=a\"b", "hello =x",
                              "hello client=\"tab\there\""].enumerated() {
            try client.send("m\(index) \(line)")
            XCTAssertProtocolError(try client.next(tag: "m\(index)"), "bad-syntax")
        }
        XCTAssertOK(try client.request("ok hello client=\"esc \\\" \\\\ \\t\""))
    }

    func testUnknownVerbUnknownKeyAndDuplicateKey() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        XCTAssertProtocolError(try client.request("v1 frobnicate"), "unknown-verb")
        XCTAssertProtocolError(try client.request("v2 ping colour=blue"), "bad-argument")
        XCTAssertProtocolError(try client.request("v3 status uid=0 uid=0"), "bad-argument")
        let ctx = try newContext(client)
        XCTAssertProtocolError(try client.request("v4 set ctx=\(ctx) cancel-title=a cancel-title=b"), "bad-argument")
        XCTAssertEqual(try client.request("v5 get ctx=\(ctx)")["cancel-title"], "Cancel")
        XCTAssertProtocolError(try client.request("v6 status uid=abc"), "bad-argument")
        XCTAssertOK(try client.request("v7 ping"))
    }
}
