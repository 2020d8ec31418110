// The connection itself: hello, ping, quit, pipelining (PROTOCOL.md).
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class SessionTests: IntegrationTestCase {
    func testHelloPingAndQuitThenTheDaemonClosesTheConnection() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        let hello = try client.request("h1 hello protocol=1 client=integration-tests")
        XCTAssertOK(hello)
        XCTAssertEqual(hello["protocol"], "1")
        XCTAssertEqual(hello["uid"], "0", "the caller's uid comes from SO_PEERCRED")
        XCTAssertEqual(hello["biometry"], "touchID")
        XCTAssertTrue(hello["server"]?.hasPrefix("localauthd/") ?? false, "\(hello)")

        XCTAssertProtocolError(try client.request("h2 hello protocol=2"), "bad-argument")
        let ping = try client.request("p1 ping")
        XCTAssertOK(ping)
        XCTAssertTrue(ping.arguments.isEmpty, "\(ping)")

        XCTAssertOK(try client.request("q1 quit"))
        XCTAssertEqual(try client.readUntilEOF(), [], "nothing after quit's OK, then the connection closes")
    }

    func testPipelinedRequestsInOneWriteAreAnsweredInOrder() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        var batch = ""
        let verbs = ["ping", "new", "hello", "status", "ping", "frobnicate", "get ctx=00", "ping"]
        for (index, verb) in verbs.enumerated() { batch += "r\(index) \(verb)\n" }
        try client.sendRaw(Array(batch.utf8))
        for index in verbs.indices {
            let reply = try client.next()
            XCTAssertEqual(reply.tag, "r\(index)", "replies come in request order")
            XCTAssertTrue(reply.isFinal, "\(reply)")
        }
        XCTAssertEqual(client.pending, [])
    }

    func testManyPipelinedStatusRequestsFromAReadingClientAreAllAnswered() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        let count = 200
        try client.sendRaw(Array((0..<count).map { "m\($0) status\n" }.joined().utf8))
        for index in 0..<count {
            let reply = try client.next()
            XCTAssertEqual(reply.tag, "m\(index)")
            XCTAssertOK(reply)
        }
        XCTAssertOK(try client.request("last ping"))
    }

    func testCarriageReturnBeforeLineFeedIsDropped() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try client.sendRaw(Array("cr1 ping\r\n".utf8))
        XCTAssertOK(try client.next(tag: "cr1"))
    }
}
