// Issue 27 item 7: each right-save rewrote and fsync'd the whole right
// store on the event loop, so one user's 200 pipelined saves stalled
// another user's `ping` by seconds. The store is now written off the loop:
// the other user's ping is answered while the saves still wait for their
// write, and every save is answered OK only once the store holding it is on
// disk. Observed by the order of events, never by a clock.
import Foundation
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class RightStoreWriteTests: IntegrationTestCase {
    func test_item7_anotherUsersPingIsAnsweredWhileOneUsersSavesWaitForTheDisk() throws {
        // Room for 200 rights and 200 events at once (the S-48 budget and
        // MaxRightsPerUser would otherwise refuse most of them, quickly).
        let daemon = try startDaemon(configuration: DaemonProcess.defaultConfiguration
            + "\n[Secrets]\nMaxRightsPerUser=1000\n[Log]\nUserEventRate=0\nUserEventBurst=100000\n")
        let saver = try Client(socketPath: daemon.socketPath, asUID: 1000)
        let other = try Client(socketPath: daemon.socketPath, asUID: 1001)
        XCTAssertOK(try other.request("p0 ping"))
        // Small enough that the daemon reads the 200 lines at once (about
        // 36 KB); each write of the store is still a write, a rename and two fsyncs.
        let secret = Data(repeating: 0x5A, count: 64).base64EncodedString()
        let count = 200
        let batch = (0..<count).map { "s\($0) right-save identifier=r\($0) requirement=default secret=\"\(secret)\"\n" }.joined()
        try saver.sendRaw(Array(batch.utf8))
        XCTAssertOK(try other.request("p1 ping"))
        // The ping's answer is in: which of the saves' answers are?
        var answeredBefore: Set<String> = []
        while try saver.hasLine(), let line = try saver.nextLine() {
            XCTAssertTrue(line.contains(" OK"), "\(line) \(daemon.stderr)")
            answeredBefore.insert(String(line.prefix { $0 != " " }))
        }
        // On the loop, the 200 saves of the read were each written and
        // fsync'd before the ping's line was even read; off it, the ping is
        // answered while they wait for their write.
        XCTAssertFalse(answeredBefore.contains("s\(count - 1)"), "the ping was answered before the last save's OK")
        XCTAssertLessThan(answeredBefore.count, count / 2,
                          "the other user's ping waited for \(answeredBefore.count) of the \(count) saves")
        // Every save is answered OK, in order, and is in the store on disk.
        var tags = answeredBefore
        for index in 0..<count where !tags.contains("s\(index)") {
            XCTAssertOK(try saver.next(tag: "s\(index)"), "s\(index)")
            tags.insert("s\(index)")
        }
        let store = try String(contentsOfFile: daemon.stateDirectory + "/rights", encoding: .utf8)
        XCTAssertEqual(store.split(separator: "\n").count, 1 + count, "the header and every right")
        XCTAssertOK(try saver.request("st right-state identifier=r\(count - 1)"))
        // And each was recorded once.
        XCTAssertEqual(daemon.stop(), 0, daemon.stderr)
        let log = try runToCompletion(try Binary.find("localauthctl"),
                                      ["log", "-D", daemon.stateDirectory, "-o", "json", "--no-pager"]).1
        XCTAssertEqual(log.components(separatedBy: "\"type\":\"right-saved\"").count - 1, count)
    }

    /// Item 7's rate: saves are charged to their user's S-48 budget (two
    /// events each: the save and its key), shared by every connection of
    /// the uid. Pipelined past it, the rest are refused `limit-exceeded`,
    /// saying which limit, before any store write; another user still saves.
    func test_item7_pipelinedSavesPastTheUsersBudgetAreRefusedAndWriteNothing() throws {
        let daemon = try startDaemon(configuration: DaemonProcess.defaultConfiguration
            + "\n[Secrets]\nMaxRightsPerUser=1000\n[Log]\nUserEventRate=1\nUserEventBurst=40\n")
        // Two connections of one uid, 50 pipelined saves each.
        let savers = [try Client(socketPath: daemon.socketPath, asUID: 1000), try Client(socketPath: daemon.socketPath, asUID: 1000)]
        let count = 50
        for (which, saver) in savers.enumerated() {
            let batch = (0..<count).map { "s\($0) right-save identifier=r\(which)-\($0) requirement=default secret=AAAA\n" }.joined()
            try saver.sendRaw(Array(batch.utf8))
        }
        var saved = 0, refused = 0
        for saver in savers {
            for index in 0..<count {
                let reply = try saver.next(tag: "s\(index)")
                if reply.status == .ok {
                    saved += 1
                } else {
                    XCTAssertEqual(reply.errorName, "limit-exceeded", "\(reply)")
                    XCTAssertTrue(reply["message"]?.contains("UserEventRate=1") == true, "\(reply)")
                    refused += 1
                }
            }
        }
        // 40 events are 20 saves at once, then one event a second: the
        // uid's budget, not each connection's (which would let 40 through).
        XCTAssertGreaterThanOrEqual(saved, 20)
        XCTAssertLessThan(saved, 35, "the budget let \(saved) of \(2 * count) pipelined saves through")
        XCTAssertEqual(saved + refused, 2 * count)
        // Another user's budget is its own.
        let other = try Client(socketPath: daemon.socketPath, asUID: 1001)
        XCTAssertOK(try other.request("o right-save identifier=r0 requirement=default"))
        // Nothing refused reached the store.
        let store = try String(contentsOfFile: daemon.stateDirectory + "/rights", encoding: .utf8)
        XCTAssertEqual(store.split(separator: "\n").count, 1 + saved + 1, "the header, the saves let through and uid 1001's")
    }
}
