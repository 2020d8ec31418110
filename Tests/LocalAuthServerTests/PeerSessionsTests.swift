// PeerSessions (S-65, S-66) as a value: when a logind lookup that nobody
// answers runs out, which the core's ticker (and a timer armed for the
// earliest deadline) relies on.
import LocalAuthCore
@testable import LocalAuthServer
import XCTest

final class PeerSessionsTests: XCTestCase {
    typealias Sessions = PeerSessions<Int>

    func test_S65_theNextDeadlineIsWhenTheOldestLookupRunsOut() {
        var sessions = Sessions()
        XCTAssertNil(sessions.nextDeadline)
        guard case .ask = sessions.need(16, waiter: 1, now: 7), case .ask = sessions.need(17, waiter: 2, now: 9) else {
            return XCTFail("a first request for each connection asks logind")
        }
        guard case .wait = sessions.need(16, waiter: 3, now: 8) else { return XCTFail("a second request waits") }
        XCTAssertEqual(sessions.nextDeadline, 7 + Sessions.lookupLimit)
        XCTAssertTrue(sessions.expire(now: 7 + Sessions.lookupLimit - 1).isEmpty)
        XCTAssertEqual(sessions.expire(now: 7 + Sessions.lookupLimit), [1, 3])
        XCTAssertEqual(sessions.nextDeadline, 9 + Sessions.lookupLimit)
        _ = sessions.answered(17, PeerSession(session: .none, process: nil))
        XCTAssertNil(sessions.nextDeadline)
    }
}
