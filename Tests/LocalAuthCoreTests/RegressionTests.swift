// Regression tests: each was written failing against an earlier core and
// names the rule it holds the core to (invalidContext before policy 5,
// biometry becoming unusable while a prompt waits, prompt timeouts after the
// clock was set back, reuse-duration with leading zeros, an admin lock
// reached while a passcode was being checked).

import XCTest
@testable import LocalAuthCore

final class RegressionTests: XCTestCase {
    // S-18: "Checks in this order, first failure wins: 1. context invalidated
    // -> invalidContext; 2. policy 5 -> protocol error bad-argument".
    func test_S18_invalidatedContextAnswersInvalidContextBeforePolicy5IsRefused() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.given(.invalidate(ctx: ctx(1), reason: .app))
        s.canEvaluate(ctx(1), .wrist)
        s.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .wrist, biometry: .touchID,
                              result: .invalidContext, reason: nil))
    }

    // S-25 ("the same checks as S-18 apply first, with the same errors") and
    // S-13 ("every later ... evaluate on it answers invalidContext").
    func test_S13_S25_evaluateOnAnInvalidatedContextAnswersInvalidContextEvenForPolicy5() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.given(.invalidate(ctx: ctx(1), reason: .app))
        s.evaluate(ctx(1), .wrist)
        s.then(started(alice, ctx(1), 1, .wrist), failed(alice, ctx(1), 1, .invalidContext))
    }

    // S-31: a prompt ends with timeout only after it was left unanswered for
    // PromptTimeoutSec; S-8: setting the clock back must not change that.
    // The prompt's start is recorded as the (earlier) wall-clock time while
    // expiry is judged against the high-water mark, so after the clock is set
    // back by an hour every new prompt times out at the next expirePrompts.
    func test_S31_S08_promptShownAfterTheClockWasSetBackDoesNotTimeOutEarly() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.setClock(t0 - sec(3600))
        s.evaluate(ctx(1), .biometrics)
        s.then(started(alice, ctx(1), 1, .biometrics), prompted(alice, ctx(1), 1, firstBiometricPrompt))
        s.advance(1)
        s.when(.expirePrompts)
        s.then()  // unanswered for 1 s only
        XCTAssertGreaterThanOrEqual(s.state.nextPromptDeadline ?? .min, s.state.effectiveNow(s.now) + sec(59),
                                    "the deadline is still ~59 s away")
    }

    // S-11: "while either applies, biometry is unusable until the passcode
    // is entered once". The requirement can start while a biometric prompt
    // waits; the sensor only re-checks the lockout flags, so a match then
    // still succeeds with method=biometric.
    func test_S11_passcodeRequirementStartingWhileThePromptWaitsRefusesTheMatch() {
        let s = Scenario(rules: Rules.default.with { $0.passcodeRequiredAfter = sec(100) })
        s.readyUser(alice)  // passcode set at t0
        s.newContext(ctx(1), uid: alice)
        s.advance(90)
        s.evaluate(ctx(1), .biometrics)
        XCTAssertEqual(s.prompts, [firstBiometricPrompt])
        s.advance(20)  // t0 + 110 s: the passcode is now required
        s.feed(alice, .match)
        XCTAssertFalse(s.emitted.contains(.biometricMatched(uid: alice, ctx: ctx(1), eval: 1)))
        s.then(failed(alice, ctx(1), 1, passcodeRequired))
    }

    // S-18 step 3 / S-27: biometry becomes unusable while the prompt waits
    // (an administrator removes every template); a match must not succeed.
    func test_S18_S27_matchAfterAllTemplatesWereRemovedWhileThePromptWaitsIsRefused() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .biometrics)
        s.given(.unenroll(uid: alice, template: nil, by: admin, domainState: "empty"))
        s.feed(alice, .match)
        XCTAssertNil(s.success(ctx(1), 1), "no biometric success with nothing enrolled")
        XCTAssertEqual(s.failure(ctx(1), 1)?.code, .biometryNotEnrolled)
    }

    // S-6: "the Nth consecutive failure locks the user until an
    // administrator resets them". A passcode verdict that arrives after the
    // lock (reached meanwhile through set-passcode's old-secret check, S-36)
    // still authenticates the user: the lock is bypassed. The sensor path
    // re-checks locks that arrive while waiting; the passcode path does not.
    func test_S06_adminLockReachedWhileAPasscodeIsBeingCheckedIsNotBypassed() {
        let s = Scenario(rules: Rules.default.with { $0.maxPasscodeFailures = 3 })
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.failPasscode(on: ctx(1), times: 2)
        s.given(.submitPasscode(ctx: ctx(1)))
        s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false))
        XCTAssertTrue(s.user(alice).adminLocked)
        s.when(.passcodeChecked(uid: alice, ctx: ctx(1), eval: 1, correct: true, repeated: false))
        XCTAssertNil(s.success(ctx(1), 1), "an admin-locked user is not authenticated")
        XCTAssertEqual(s.failure(ctx(1), 1), adminLockedFailure)
        XCTAssertTrue(s.user(alice).adminLocked)
    }

    // S-16: reuse-duration is seconds, 0..300, larger values act as 300.
    // The wire parser decides "larger" by the number of digits, so a small
    // value written with leading zeros ("0000010" = 10 s) becomes 300 s: a
    // reuse window 30 times wider than the client asked for.
    func test_S16_reuseDurationWithLeadingZerosKeepsItsValue() {
        XCTAssertEqual(ContextProperty(name: "reuse-duration", value: "0000010"), .reuseDuration(10))
        XCTAssertEqual(ContextProperty(name: "reuse-duration", value: "0000000"), .reuseDuration(0))
        XCTAssertEqual(ContextProperty(name: "reuse-duration", value: "00000000000000000000000300"), .reuseDuration(300))
    }
}
