// S-56 against the real daemon (issue 27 item 9): a member of AdminGroup
// watched another user, left the group, and kept receiving that user's
// STATE lines on the same connection while `status uid=N` there was
// already refused. The watch must end, with an error line on its tag, and
// tell nothing more. (Changes /etc/group: run under /work/system.lock.)
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class WatchRightsTests: ReliabilityTestCase {
    func test_S56_aWatchOfAnotherUserEndsWhenTheWatcherLeavesAdminGroup() throws {
        let group = try temporaryGroup("watchers", member: "nobody")
        let daemon = try startDaemon(configuration: configuration(daemon: ["AdminGroup=\(group)"]))
        let root = try daemon.connect()
        let member = try daemon.connect(asUID: 65534)

        XCTAssertOK(try member.request("w1 watch uid=1"))
        XCTAssertEqual(try member.next(tag: "w1").status, .state, "the state at once")
        XCTAssertOK(try root.request("e1 enroll uid=1"))
        XCTAssertEqual(try member.next(tag: "w1")["enrolled"], "1", "an administrator hears each change")

        XCTAssertEqual(exitCode(of: "/usr/bin/gpasswd", ["-d", "nobody", group]), 0)
        // Nothing needs to happen for it: the watch ends once the group's
        // answer is looked up again (the next line on the tag; the
        // client's read timeout is the safety net).
        let ended = try member.next(tag: "w1")
        XCTAssertEqual(ended.status, .err, "the watch ends with an error line: \(ended)")
        XCTAssertEqual(ended.errorName, "permission-denied", "\(ended)")
        XCTAssertProtocolError(try member.request("s1 status uid=1"), "permission-denied")

        // Then nothing more: a change after the end is not told, and a ping
        // sent after it returns with no STATE line ahead of it.
        XCTAssertOK(try root.request("e2 enroll uid=1"))
        XCTAssertOK(try member.request("p1 ping"))
        XCTAssertFalse(try member.hasLine(), "no line after the end of the watch")
        XCTAssertOK(try member.request("w2 watch"), "its own state it may still watch")
        XCTAssertEqual(try member.next(tag: "w2")["uid"], "65534")
    }
}
