// S-46: no passcode is checked during a delay or an admin lock; an attempt is
// judged when it is submitted, just before its check starts, and when its
// verdict arrives, and every refusal is the same answer whatever it held.
// Also the daemon's clock (S-8, issue 15 item 10).
import LocalAuthCore
import XCTest

final class PasscodeAttemptRuleTests: XCTestCase {
    /// Alice, with a passcode, six failures behind her: a 60 s delay runs.
    private func aliceInADelay(_ s: Scenario) {
        s.setPasscode(alice)
        s.newContext(ctx(9), uid: alice)
        for _ in 0..<6 { s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false)) }
        XCTAssertEqual(s.state.passcodeRetryAfter(alice, now: s.now), 60)
    }

    func test_S46_anAttemptAboutToBeCheckedDuringADelayIsRefusedAndCountsNothing() {
        let s = Scenario()
        aliceInADelay(s)
        s.advance(10)
        s.when(.admitPasscodeAttempt(uid: alice, ctx: nil, eval: nil))
        s.then(.passcodeRefused(uid: alice, ctx: nil, eval: nil, retryAfter: 50))
        XCTAssertEqual(s.user(alice).passcodeFailures, 6)
    }

    func test_S46_anAttemptOutsideADelayIsAdmittedWithNoEvent() {
        let s = Scenario()
        s.setPasscode(alice)
        s.when(.admitPasscodeAttempt(uid: alice, ctx: nil, eval: nil))
        s.then()
    }

    func test_S46_anEvaluationsAttemptRefusedBeforeItsCheckEndsTheEvaluationWithTheDelay() {
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .owner)
        s.when(.submitPasscode(ctx: ctx(1)))
        // While the attempt waits for its turn, another attempt starts a delay.
        for _ in 0..<6 { s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false)) }
        s.when(.admitPasscodeAttempt(uid: alice, ctx: ctx(1), eval: 1))
        s.then(.passcodeRefused(uid: alice, ctx: ctx(1), eval: 1, retryAfter: 60), failed(alice, ctx(1), 1, retryAfter(60)))
        XCTAssertNil(s.evaluation(ctx(1)))
    }

    func test_S46_aVerdictForAUserInADelayIsNeitherAcceptedNorCountedAndLooksTheSameEitherWay() {
        func verdict(correct: Bool) -> [EventBody] {
            let s = Scenario()
            aliceInADelay(s)
            s.when(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: correct, repeated: false))
            XCTAssertEqual(s.user(alice).passcodeFailures, 6, "counted nothing")
            XCTAssertNotNil(s.user(alice).passcodeRetryAt, "the delay stands")
            return s.emitted
        }
        let right = verdict(correct: true)
        let wrong = verdict(correct: false)
        XCTAssertEqual(right, [.passcodeRefused(uid: alice, ctx: nil, eval: nil, retryAfter: 60)])
        XCTAssertEqual(right, wrong, "a right guess during a delay must not be told apart from a wrong one")
    }

    func test_S46_anAdminLockRefusesEveryAttemptWithRetryAfterZero() {
        let s = Scenario(rules: Rules.default.with { $0.maxPasscodeFailures = 3 })
        s.setPasscode(alice)
        for _ in 0..<3 { s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false)) }
        XCTAssertTrue(s.user(alice).adminLocked)
        s.when(.admitPasscodeAttempt(uid: alice, ctx: nil, eval: nil))
        s.then(.passcodeRefused(uid: alice, ctx: nil, eval: nil, retryAfter: 0))
        XCTAssertEqual(s.state.passcodeEntryRefusal(alice, now: s.now), adminLockedFailure)
    }

    func test_S46_passcodeRefusedIsFoldedAsNothing() {
        let s = Scenario()
        aliceInADelay(s)
        let before = s.state.user(alice)
        s.given(events: .passcodeRefused(uid: alice, ctx: nil, eval: nil, retryAfter: 60))
        // Nothing but S-64's tally of attempts the user is told of.
        var after = s.state.user(alice)
        XCTAssertEqual(after.failuresSinceSignIn.refused, before.failuresSinceSignIn.refused + 1)
        after.failuresSinceSignIn = before.failuresSinceSignIn
        XCTAssertEqual(after, before)
        XCTAssertEqual(s.refolded, s.state)
    }

    // MARK: - The daemon's clock

    func test_S08_theDaemonClockNeverGoesBackwards() {
        var clock = DaemonClock(floor: sec(1000))
        XCTAssertEqual(clock.read(wall: sec(900), boot: sec(5)), sec(1000), "starts at the log's newest time")
        XCTAssertEqual(clock.read(wall: sec(100), boot: sec(6)), sec(1001), "a clock set back: on with the boot clock")
        XCTAssertEqual(clock.read(wall: sec(2000), boot: sec(7)), sec(2000), "follows the wall clock forwards")
    }

    func test_clockSetBackAfterAForwardJumpLetsADelayLastItsLengthNotADay() {
        // The wall clock is a day ahead when the delay starts (at `ahead`).
        let ahead = t0 + sec(86_400)
        var clock = DaemonClock(floor: 0)
        XCTAssertEqual(clock.read(wall: ahead, boot: sec(100)), ahead)
        var rules = Rules.default
        rules.delayAfterFailures = 1
        rules.backoff = [sec(300)]
        var state = AuthState()
        state.apply(Event(time: 0, .rulesApplied(rules)))
        state.apply(Event(time: ahead, .passcodeChanged(uid: alice, set: true, by: 0)))
        state.apply(Event(time: ahead, .passcodeRejected(uid: alice, ctx: nil, eval: nil, counted: true)))
        // The clock is corrected a minute later; 301 s after the failure the delay is over.
        XCTAssertEqual(state.passcodeRetryAfter(alice, now: clock.read(wall: t0 + sec(60), boot: sec(160))), 240)
        XCTAssertEqual(state.passcodeRetryAfter(alice, now: clock.read(wall: t0 + sec(301), boot: sec(401))), 0)
    }
}
