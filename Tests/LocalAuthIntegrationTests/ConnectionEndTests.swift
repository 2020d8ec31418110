// How connections end: half-close, quit or protocol errors during an
// evaluation, idle half lines, per-user limits (PROTOCOL.md Connection end).
import Glibc
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class ConnectionEndTests: IntegrationTestCase {
    func testAHalfClosedClientStillGetsTheRepliesItIsOwed() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try client.sendRaw(Array("a new\nb ping\nc hello\n".utf8))
        shutdown(client.writeFD, Int32(SHUT_WR))
        let lines = try client.readUntilEOF()
        XCTAssertEqual(lines.count, 3, "\(lines)")
        XCTAssertEqual(try lines.map { try Client.parse($0).tag }, ["a", "b", "c"])
    }

    func testQuitDuringAnEvaluationSendsItsFinalAnswerBeforeClosing() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e1"), attempt: 1, fallback: nil)
        try client.send("q quit")
        let lines = try client.readUntilEOF().map(Client.parse)
        XCTAssertEqual(lines.map(\.tag).sorted(), ["e1", "q"], "\(lines)")
        let final = lines.first { $0.tag == "e1" }
        XCTAssertEqual(final?.status, .err)
        XCTAssertEqual(final?.errorDomain, "la")
        XCTAssertTrue(client.sawEOF)
    }

    func testALineTooLongDuringAnEvaluationStillAnswersItAndByeComesLast() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e1"), attempt: 1, fallback: nil)
        try client.send("x ping k=" + String(repeating: "z", count: 9000))
        let lines = try client.readUntilEOF().map(Client.parse)
        XCTAssertEqual(lines.filter { $0.tag == "e1" }.count, 1, "S-33: exactly one final answer: \(lines)")
        XCTAssertEqual(lines.first?.errorName, "line-too-long", "\(lines)")
        XCTAssertEqual(lines.last?.status, .bye, "BYE is the last thing before the close: \(lines)")
    }

    func testAHalfLineLeftUnfinishedIsClosedAfterTheIdleLineTimeout() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: ["IdleLineTimeoutSec=1"]))
        let client = try daemon.connect()
        XCTAssertOK(try client.request("p ping"))
        try client.sendRaw(Array("h2 pi".utf8))
        let lines = try client.readUntilEOF()  // about a second; the read timeout is a safety net
        XCTAssertEqual(lines.count, 2, "answer once, then close: \(lines)")
        if lines.count == 2 {
            XCTAssertProtocolError(try Client.parse(lines[0]), "limit-exceeded")
            XCTAssertEqual(lines[1], "* BYE reason=limit")
        }
        // The daemon itself must survive closing an idle half line.
        XCTAssertNoThrow(XCTAssertOK(try daemon.connect().request("alive ping")), "the daemon died: \(daemon.stderr.prefix(600))")
    }

    func testMaxConnectionsPerUserRefusesTheNextConnectionWithBye() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: ["MaxConnectionsPerUser=2"]))
        let first = try daemon.connect()
        let second = try daemon.connect()
        XCTAssertOK(try first.request("p1 ping"))
        XCTAssertOK(try second.request("p2 ping"))
        let third = try daemon.connect()
        let lines = try third.readUntilEOF()
        XCTAssertEqual(lines.count, 2, "\(lines)")
        XCTAssertEqual(try lines.first.map(Client.parse)?.errorName, "limit-exceeded")
        XCTAssertEqual(lines.last, "* BYE reason=limit")
        // Another uid has its own allowance.
        let other = try daemon.connect(asUID: 65534)
        XCTAssertOK(try other.request("p3 ping"))
        XCTAssertOK(try first.request("p4 ping"))
    }
}
