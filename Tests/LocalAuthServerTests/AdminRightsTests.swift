// S-51's AdminGroup judgement as the pure value that decides it
// (AdminRights): the lookup itself runs on a thread (AdminLookups.swift),
// here its answers are the test's, waiters are names, the clock is the
// test's. Given what was asked and answered / when a request comes / then
// it is an administrator, is not, or waits (and which lookup starts).
import LocalAuthCore
@testable import LocalAuthServer
import XCTest

final class AdminRightsTests: XCTestCase {
    typealias Rights = AdminRights<String>
    let daemon: UserID = 999, alice: UserID = 1000, bob: UserID = 1001
    let second: UInt64 = 1_000_000_000

    func test_S51_rootAndTheDaemonsUIDNeedNoLookup() {
        var rights = Rights()
        XCTAssertEqual(rights.judge(0, daemonUID: daemon, group: "wheel", now: 0).verdict, .administrator)
        XCTAssertEqual(rights.judge(daemon, daemonUID: daemon, group: "wheel", now: 0).verdict, .administrator)
        XCTAssertNil(rights.judge(0, daemonUID: daemon, group: "wheel", now: 0).ask)
        XCTAssertTrue(rights.inFlight.isEmpty)
    }

    func test_S51_withoutAnAdminGroupNobodyElseIsOne_andNothingIsLookedUp() {
        var rights = Rights()
        for group in [nil, ""] as [String?] {
            let judged = rights.judge(alice, daemonUID: daemon, group: group, now: 0)
            XCTAssertEqual(judged.verdict, .notAdministrator)
            XCTAssertNil(judged.ask)
        }
    }

    func test_S51_givenNoAnswer_whenAnAdminRequestComes_thenItWaitsForOneLookup() throws {
        var rights = Rights()
        let first = rights.judge(alice, daemonUID: daemon, group: "wheel", now: 0)
        XCTAssertEqual(first.verdict, .unknown)
        XCTAssertEqual(first.ask?.group, "wheel")
        rights.wait(alice, "r1")
        // Coalesced: a second request while the lookup runs asks nothing more.
        let second = rights.judge(alice, daemonUID: daemon, group: "wheel", now: 10)
        XCTAssertEqual(second.verdict, .unknown)
        XCTAssertNil(second.ask)
        rights.wait(alice, "r2")
        XCTAssertEqual(rights.answered(try XCTUnwrap(first.ask), member: true, configured: "wheel"), ["r1", "r2"])
        XCTAssertEqual(rights.judge(alice, daemonUID: daemon, group: "wheel", now: 20).verdict, .administrator)
        XCTAssertFalse(rights.hasWaiters)
    }

    /// Red team, 2 December: NSS slower than the cache lifetime parked
    /// every admin request forever (answer filed as of its asking, stale on
    /// arrival, the waiter parked and asked again).
    func test_S51_givenALookupSlowerThanTheCacheLifetime_whenItsAnswerComes_thenItsWaitersAreJudgedByIt() throws {
        for member in [true, false] {
            var rights = Rights()
            let asked = try XCTUnwrap(rights.judge(alice, daemonUID: daemon, group: "wheel", now: 0).ask)
            XCTAssertEqual(asked.group, "wheel")
            rights.wait(alice, "r1")
            XCTAssertEqual(rights.answered(asked, member: member, configured: "wheel"), ["r1"])
            // The waiter runs 3 s after the asking: the answer still decides it, and nothing is asked.
            let judged = rights.judge(alice, daemonUID: daemon, group: "wheel", now: 3 * second)
            XCTAssertEqual(judged.verdict, member ? .administrator : .notAdministrator)
            XCTAssertNil(judged.ask)
            // Once the waiters ran, the stale answer no longer stands: a new request asks again.
            rights.servedWaiters()
            let later = rights.judge(alice, daemonUID: daemon, group: "wheel", now: 3 * second)
            XCTAssertEqual(later.verdict, .unknown)
            XCTAssertEqual(later.ask?.group, "wheel")
        }
    }

    func test_S51_aNonMemberIsRefused_andOtherUsersAreJudgedApart() throws {
        var rights = Rights()
        let forAlice = try XCTUnwrap(rights.judge(alice, daemonUID: daemon, group: "wheel", now: 0).ask)
        let forBob = try XCTUnwrap(rights.judge(bob, daemonUID: daemon, group: "wheel", now: 0).ask)
        _ = rights.answered(forAlice, member: true, configured: "wheel")
        _ = rights.answered(forBob, member: false, configured: "wheel")
        XCTAssertEqual(rights.judge(alice, daemonUID: daemon, group: "wheel", now: 1).verdict, .administrator)
        XCTAssertEqual(rights.judge(bob, daemonUID: daemon, group: "wheel", now: 1).verdict, .notAdministrator)
    }

    /// A member removed from the group loses the rights within the cache
    /// lifetime: the answer counts from when its lookup was asked, is asked
    /// again ahead (after refreshAge), and stops counting at cacheLifetime.
    func test_S51_givenAMemberRemoved_thenTheRightsEndWithinTheCacheLifetime() throws {
        var rights = Rights()
        _ = rights.answered(try XCTUnwrap(rights.judge(alice, daemonUID: daemon, group: "wheel", now: 0).ask),
                            member: true, configured: "wheel")
        let early = rights.judge(alice, daemonUID: daemon, group: "wheel", now: Rights.refreshAge - 1)
        XCTAssertEqual(early.verdict, .administrator)
        XCTAssertNil(early.ask, "young: no lookup")
        let ahead = rights.judge(alice, daemonUID: daemon, group: "wheel", now: Rights.refreshAge)
        XCTAssertEqual(ahead.verdict, .administrator, "still standing while asked again")
        XCTAssertEqual(ahead.ask?.group, "wheel")
        // The lookup asked at refreshAge says: removed.
        _ = rights.answered(try XCTUnwrap(ahead.ask), member: false, configured: "wheel")
        XCTAssertEqual(rights.judge(alice, daemonUID: daemon, group: "wheel", now: Rights.refreshAge + 1).verdict, .notAdministrator)
    }

    func test_S51_givenAnAnswerNobodyRefreshed_whenItIsOlderThanTheLifetime_thenTheRequestWaits() throws {
        var rights = Rights()
        _ = rights.answered(try XCTUnwrap(rights.judge(alice, daemonUID: daemon, group: "wheel", now: 0).ask),
                            member: true, configured: "wheel")
        let late = rights.judge(alice, daemonUID: daemon, group: "wheel", now: Rights.cacheLifetime)
        XCTAssertEqual(late.verdict, .unknown, "an old yes is no yes")
        XCTAssertEqual(late.ask?.group, "wheel")
    }

    func test_S51_givenAStuckLookup_whenTheLimitPasses_thenItsWaitersAreRefused() throws {
        var rights = Rights()
        let stuck = try XCTUnwrap(rights.judge(alice, daemonUID: daemon, group: "wheel", now: 0).ask)
        rights.wait(alice, "r1")
        XCTAssertEqual(rights.expire(now: Rights.lookupLimit - 1), [], "not yet")
        XCTAssertEqual(rights.expire(now: Rights.lookupLimit), ["r1"])
        XCTAssertTrue(rights.inFlight.isEmpty)
        XCTAssertEqual(rights.judge(alice, daemonUID: daemon, group: "wheel", now: Rights.lookupLimit + 1).verdict,
                       .notAdministrator, "fail closed, for one lifetime")
        // The stuck lookup's late answer is not taken.
        XCTAssertEqual(rights.answered(stuck, member: true, configured: "wheel"), [])
        XCTAssertEqual(rights.judge(alice, daemonUID: daemon, group: "wheel", now: Rights.lookupLimit + 2).verdict, .notAdministrator)
    }

    func test_S51_givenAReloadThatChangedTheGroup_thenAnAnswerForTheOldGroupIsNotKept() throws {
        var rights = Rights()
        let old = try XCTUnwrap(rights.judge(alice, daemonUID: daemon, group: "wheel", now: 0).ask)
        rights.wait(alice, "r1")
        rights.forget()
        // The waiter is judged again (and asks in the new group); the old answer is not cached.
        XCTAssertEqual(rights.answered(old, member: true, configured: "admins"), ["r1"])
        let again = rights.judge(alice, daemonUID: daemon, group: "admins", now: 1)
        XCTAssertEqual(again.verdict, .unknown)
        XCTAssertEqual(again.ask?.group, "admins")
    }

    func test_S51_aClosedConnectionsWaitersGo_andAStopReleasesTheRest() throws {
        var rights = Rights()
        let forAlice = try XCTUnwrap(rights.judge(alice, daemonUID: daemon, group: "wheel", now: 0).ask)
        _ = rights.judge(bob, daemonUID: daemon, group: "wheel", now: 0)
        rights.wait(alice, "closed")
        rights.wait(bob, "open")
        rights.removeWaiters { $0 == "closed" }
        XCTAssertEqual(rights.answered(forAlice, member: true, configured: "wheel"), [])
        XCTAssertEqual(rights.releaseAll(), ["open"])
        XCTAssertFalse(rights.hasWaiters)
    }

    func test_S51_anAnswerWithoutALookupInFlightIsIgnored() {
        var rights = Rights()
        XCTAssertEqual(rights.answered(GroupQuery(uid: alice, group: "wheel", seq: 1), member: true, configured: "wheel"), [])
        XCTAssertEqual(rights.judge(alice, daemonUID: daemon, group: "wheel", now: 0).verdict, .unknown)
    }

    /// F-17's leftover (red team, 2 December): a lookup stuck past the
    /// limit expired, the uid was asked again, and then the stuck lookup's
    /// answer came. It was taken for the new lookup (same uid and group):
    /// a membership from minutes ago decided the new lookup's waiters and
    /// stood in the cache as if asked just now. Now each lookup is numbered.
    func test_S51_givenAnExpiredLookupAskedAgain_whenTheStaleAnswerComes_thenItIsNotTakenForTheNewOne() throws {
        for stale in [true, false] {
            var rights = Rights()
            let stuck = try XCTUnwrap(rights.judge(alice, daemonUID: daemon, group: "wheel", now: 0).ask)
            rights.wait(alice, "r1")
            XCTAssertEqual(rights.expire(now: Rights.lookupLimit), ["r1"])
            // One lifetime later the uid is asked again, in the same group.
            let now = Rights.lookupLimit + Rights.cacheLifetime
            let judged = rights.judge(alice, daemonUID: daemon, group: "wheel", now: now)
            XCTAssertEqual(judged.verdict, .unknown)
            let fresh = try XCTUnwrap(judged.ask)
            XCTAssertEqual(fresh.group, stuck.group)
            XCTAssertNotEqual(fresh.seq, stuck.seq)
            rights.wait(alice, "r2")
            // The stuck lookup answers now: nothing is released, nothing cached.
            XCTAssertEqual(rights.answered(stuck, member: stale, configured: "wheel"), [])
            XCTAssertTrue(rights.hasWaiters, "r2 still waits for its own lookup")
            let meanwhile = rights.judge(alice, daemonUID: daemon, group: "wheel", now: now + 1)
            XCTAssertEqual(meanwhile.verdict, .unknown, "the stale answer stands for nothing")
            XCTAssertNil(meanwhile.ask, "the new lookup is still in flight")
            // The new lookup's own answer decides.
            XCTAssertEqual(rights.answered(fresh, member: !stale, configured: "wheel"), ["r2"])
            XCTAssertEqual(rights.judge(alice, daemonUID: daemon, group: "wheel", now: now + 2).verdict,
                           !stale ? .administrator : .notAdministrator)
        }
    }

    func test_S51_theNextDeadlineIsWhenTheOldestLookupRunsOut() {
        var rights = Rights()
        XCTAssertNil(rights.nextDeadline)
        _ = rights.judge(1000, daemonUID: 999, group: "wheel", now: 7)
        _ = rights.judge(1001, daemonUID: 999, group: "wheel", now: 9)
        XCTAssertEqual(rights.nextDeadline, 7 + Rights.lookupLimit)
        XCTAssertTrue(rights.expire(now: 7 + Rights.lookupLimit - 1).isEmpty)
        _ = rights.expire(now: 7 + Rights.lookupLimit)
        XCTAssertEqual(rights.nextDeadline, 9 + Rights.lookupLimit)
    }
}
