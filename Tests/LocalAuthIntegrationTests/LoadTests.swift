// Many clients at once, and a client that never reads (PROTOCOL.md Errors).
import Glibc
import LocalAuthProtocol
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class LoadTests: IntegrationTestCase {
    func testAThousandSimultaneousConnectionsEachCreateAndCheckAContext() throws {
        Harness.raiseOpenFileLimit(to: 4096)
        let daemon = try startDaemon(configuration: configuration(daemon: ["MaxConnectionsPerUser=2048"]))
        let admin = try daemon.connect()
        let token = try prepareOwner(admin)
        let count = 1000
        var clients: [Client] = []
        for _ in 0..<count { clients.append(try daemon.connect()) }
        for (index, client) in clients.enumerated() { try client.send("n\(index) new") }
        var contexts: [String] = []
        for (index, client) in clients.enumerated() {
            let reply = try client.next(tag: "n\(index)")
            XCTAssertOK(reply)
            contexts.append(reply["ctx"] ?? "")
        }
        XCTAssertEqual(Set(contexts).count, count, "every context id is different")
        for (index, client) in clients.enumerated() {
            try client.send("c\(index) can-evaluate ctx=\(contexts[index]) policy=biometrics")
        }
        for (index, client) in clients.enumerated() {
            let reply = try client.next(tag: "c\(index)")
            XCTAssertOK(reply)
            XCTAssertEqual(reply["domain-state"], token)
        }
        XCTAssertEqual(try admin.request("s status")["contexts"], String(count))
    }

    func testAClientThatNeverReadsIsClosedWhileOthersAreStillServed() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: ["MaxPendingBytes=64K"]))
        let other = try daemon.connect()
        let flooder = try daemon.connect()
        // Our own send buffer holds the whole flood, so writing never waits
        // for the daemon (which stops reading us once it gives up).
        var size: Int32 = 4 << 20
        setsockopt(flooder.writeFD, SOL_SOCKET, SO_SNDBUFFORCE, &size, socklen_t(MemoryLayout<Int32>.size))
        let count = 6000  // ~900 KB of replies owed for ~80 KB of requests
        try flooder.sendRaw(Array((0..<count).map { "s\($0) status\n" }.joined().utf8))

        XCTAssertOK(try other.request("p1 ping"), "the daemon stays responsive")
        let lines = try flooder.readUntilEOF()
        XCTAssertLessThan(lines.count, count, "the daemon gave up before answering everything")
        for line in lines { XCTAssertNoThrow(try Client.parse(line), "every line is whole: \(line.prefix(200))") }
        XCTAssertGreaterThanOrEqual(lines.count, 2)
        guard lines.count >= 2 else { return }
        let error = try Client.parse(lines[lines.count - 2])
        XCTAssertEqual(error.tag, "*")
        XCTAssertProtocolError(error, "limit-exceeded")
        let bye = try Client.parse(lines[lines.count - 1])
        XCTAssertEqual(bye.status, .bye)
        XCTAssertEqual(bye["reason"], "limit")
        XCTAssertOK(try other.request("p2 ping"))
        XCTAssertEqual(try other.request("st stats")["pending-overflows"], "1")
    }

    /// The overflow may strike after part of a reply already went to the
    /// kernel: the answer must still start on a line of its own.
    func testTheOverflowAnswerNeverSplitsAPartlySentReply() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: ["MaxPendingBytes=64K"]))
        let other = try daemon.connect()
        let flooder = try daemon.connect()
        var size: Int32 = 4 << 20
        setsockopt(flooder.writeFD, SOL_SOCKET, SO_SNDBUFFORCE, &size, socklen_t(MemoryLayout<Int32>.size))
        // Rounds small enough not to overflow by themselves; each ping makes
        // sure the daemon has read, answered and flushed the round before.
        for round in 0..<12 {
            try flooder.sendRaw(Array((0..<300).map { "r\(round)x\($0) status\n" }.joined().utf8))
            XCTAssertOK(try other.request("p\(round) ping"))
        }
        let lines = try flooder.readUntilEOF()
        for line in lines { XCTAssertNoThrow(try Client.parse(line), "every line is whole: \(line.prefix(200))") }
        XCTAssertEqual(lines.suffix(2).first.flatMap { try? Client.parse($0) }?.errorName, "limit-exceeded",
                       "\(lines.suffix(2))")
        XCTAssertEqual(lines.last, "* BYE reason=limit")
    }
}
