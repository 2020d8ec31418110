// S-43's "at the latest at the user's next can-evaluate or evaluate" as the
// pure value that decides it (EnrollmentRefresh): stamps stand for reads of
// client sockets, waiters for parked requests (here their names), the clock
// is the test's. Given what was asked and answered / when a request comes /
// then it answers, waits or asks.
import LocalAuthCore
@testable import LocalAuthServer
import XCTest

final class EnrollmentRefreshTests: XCTestCase {
    typealias Refresh = EnrollmentRefresh<String>
    let root: UserID = 0, alice: UserID = 1000

    func test_S43_givenNothingAsked_whenACheckComes_thenItWaitsForAQueryAskedAfterIt() {
        var refresh = Refresh()
        XCTAssertEqual(refresh.need(root, stamp: 3, now: 3, clock: 0, waiter: "c1"), .ask(query: 3))
        XCTAssertEqual(refresh.parked.map(\.waiter), ["c1"])
        let end = refresh.ended(root, query: 3, now: 4, clock: 1)
        XCTAssertEqual(end.resume, ["c1"])
        XCTAssertNil(end.ask)
        XCTAssertTrue(refresh.parked.isEmpty)
    }

    func test_S43_givenAnAnswer_whenLinesReadBeforeItsQueryCome_thenTheyAnswerAtOnce() {
        // The lines pipelined behind a parked one were read no later than it.
        var refresh = Refresh()
        _ = refresh.need(root, stamp: 5, now: 5, clock: 0, waiter: "line1")
        _ = refresh.ended(root, query: 5, now: 5, clock: 0)
        XCTAssertEqual(refresh.need(root, stamp: 5, now: 5, clock: 0, waiter: "line2"), .fresh)
        XCTAssertEqual(refresh.need(root, stamp: 4, now: 6, clock: 0, waiter: "older"), .fresh)
        XCTAssertTrue(refresh.parked.isEmpty)
    }

    func test_S43_givenAnAnswer_whenTheUsersNextCheckComesOnALaterRead_thenItWaitsForANewQuery() {
        // fprintd-enroll may have run between the two reads.
        var refresh = Refresh()
        _ = refresh.need(root, stamp: 5, now: 5, clock: 0, waiter: "first")
        _ = refresh.ended(root, query: 5, now: 5, clock: 0)
        XCTAssertEqual(refresh.need(root, stamp: 6, now: 6, clock: 0, waiter: "next"), .ask(query: 6))
    }

    func test_S43_givenAQueryInFlight_whenMoreChecksOfTheUserCome_thenOneQueryServesThoseReadBeforeItAndOneFollowUpTheRest() {
        var refresh = Refresh()
        XCTAssertEqual(refresh.need(root, stamp: 2, now: 3, clock: 0, waiter: "a"), .ask(query: 3))
        // Read at 3, before the query was asked: its answer is fresh enough.
        XCTAssertEqual(refresh.need(root, stamp: 3, now: 3, clock: 0, waiter: "b"), .wait)
        // Read after it was asked: waits for a follow-up, not a query of its own.
        XCTAssertEqual(refresh.need(root, stamp: 4, now: 4, clock: 0, waiter: "c"), .wait)
        XCTAssertEqual(refresh.need(root, stamp: 6, now: 6, clock: 0, waiter: "d"), .wait)
        let first = refresh.ended(root, query: 3, now: 7, clock: 0)
        XCTAssertEqual(first.resume, ["a", "b"])
        XCTAssertEqual(first.ask, 7)
        XCTAssertEqual(refresh.need(root, stamp: 7, now: 7, clock: 0, waiter: "e"), .wait)
        let second = refresh.ended(root, query: 7, now: 7, clock: 0)
        XCTAssertEqual(second.resume, ["c", "d", "e"])
        XCTAssertNil(second.ask)
    }

    func test_S43_givenTwoUsers_thenEachHasItsOwnQueryAndOnlyItsAnswerLetsItsChecksGo() {
        var refresh = Refresh()
        XCTAssertEqual(refresh.need(root, stamp: 1, now: 1, clock: 0, waiter: "root"), .ask(query: 1))
        XCTAssertEqual(refresh.need(alice, stamp: 2, now: 2, clock: 0, waiter: "alice"), .ask(query: 2))
        XCTAssertEqual(refresh.ended(alice, query: 2, now: 2, clock: 0).resume, ["alice"])
        XCTAssertEqual(refresh.parked.map(\.waiter), ["root"])
        XCTAssertEqual(refresh.ended(root, query: 1, now: 2, clock: 0).resume, ["root"])
    }

    func test_S43_givenACheckThatDoesNotWait_thenItAnswersAtOnceButHasTheFingersListed() {
        var refresh = Refresh()
        XCTAssertEqual(refresh.need(root, stamp: 1, now: 1, clock: 0, waiter: nil), .ask(query: 1))
        // In flight: nothing more is asked now, but a follow-up covers it.
        XCTAssertEqual(refresh.need(root, stamp: 2, now: 2, clock: 0, waiter: nil), .fresh)
        XCTAssertTrue(refresh.parked.isEmpty)
        let end = refresh.ended(root, query: 1, now: 3, clock: 0)
        XCTAssertEqual(end.resume, [])
        XCTAssertEqual(end.ask, 3)
    }

    func test_S43_givenAnEndThatIsNotTheQueryInFlight_thenNothingIsLetGo() {
        var refresh = Refresh()
        _ = refresh.need(root, stamp: 1, now: 1, clock: 0, waiter: "a")
        // Unknown user, stale query id, and a second end of the same query.
        XCTAssertEqual(refresh.ended(alice, query: 1, now: 1, clock: 0).resume, [])
        XCTAssertEqual(refresh.ended(root, query: 9, now: 9, clock: 0).resume, [])
        XCTAssertEqual(refresh.parked.map(\.waiter), ["a"])
        XCTAssertEqual(refresh.ended(root, query: 1, now: 1, clock: 0).resume, ["a"])
        XCTAssertEqual(refresh.ended(root, query: 1, now: 1, clock: 0).resume, [])
    }

    func test_S43_givenAQueryThatNeverEnds_thenItExpiresAfterTheLimitAndItsLateAnswerIsIgnored() {
        var refresh = Refresh()
        let limit = Refresh.limit
        _ = refresh.need(root, stamp: 1, now: 1, clock: 1000, waiter: "a")
        XCTAssertTrue(refresh.expired(clock: 1000 + limit - 1).isEmpty)
        let expired = refresh.expired(clock: 1000 + limit)
        XCTAssertEqual(expired.map(\.uid), [root])
        XCTAssertEqual(expired.map(\.query), [1])
        // The server ends it; a new check asks anew; the late answer of the first changes nothing.
        XCTAssertEqual(refresh.ended(root, query: 1, now: 2, clock: 1000 + limit).resume, ["a"])
        XCTAssertEqual(refresh.need(root, stamp: 3, now: 3, clock: 2000 + limit, waiter: "b"), .ask(query: 3))
        XCTAssertEqual(refresh.ended(root, query: 1, now: 3, clock: 2000 + limit).resume, [])
        XCTAssertEqual(refresh.parked.map(\.waiter), ["b"])
        // A clock read before the query was asked expires nothing.
        XCTAssertTrue(refresh.expired(clock: 0).isEmpty)
    }

    func test_S43_givenQueriesInFlight_thenTheyAreListedInUidOrderAndForgottenWaitersAreNeverLetGo() {
        var refresh = Refresh()
        _ = refresh.need(alice, stamp: 1, now: 1, clock: 0, waiter: "alice-1")
        _ = refresh.need(root, stamp: 2, now: 2, clock: 0, waiter: "root-1")
        _ = refresh.need(alice, stamp: 1, now: 2, clock: 0, waiter: "alice-2")
        XCTAssertEqual(refresh.inFlight.map(\.uid), [root, alice])
        XCTAssertFalse(refresh.isEmpty)
        refresh.removeWaiters { $0 == "alice-1" }
        XCTAssertEqual(refresh.ended(alice, query: 1, now: 2, clock: 0).resume, ["alice-2"])
        XCTAssertEqual(refresh.releaseAll(), ["root-1"])
        XCTAssertTrue(refresh.parked.isEmpty)
    }

    func test_S43_theNextDeadlineIsWhenTheOldestQueryRunsOut() {
        var refresh = Refresh()
        XCTAssertNil(refresh.nextDeadline)
        _ = refresh.need(root, stamp: 1, now: 1, clock: 100, waiter: "a")
        XCTAssertEqual(refresh.nextDeadline, 100 + Refresh.limit)
        XCTAssertTrue(refresh.expired(clock: 100 + Refresh.limit - 1).isEmpty)
        XCTAssertEqual(refresh.expired(clock: 100 + Refresh.limit).map(\.uid), [root])
    }
}
