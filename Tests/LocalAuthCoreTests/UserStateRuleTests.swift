// SEMANTICS §3: per-user state, S-1 .. S-11.

import XCTest
@testable import LocalAuthCore

final class UserStateRuleTests: XCTestCase {
    func test_S01_biometricFailuresCountPerUserAcrossContexts() {
        let s = Scenario()
        s.readyUser(alice)
        s.readyUser(bob)
        s.newContext(ctx(1), uid: alice, pid: 10)
        s.newContext(ctx(2), uid: alice, pid: 20)  // another connection, same uid
        s.newContext(ctx(3), uid: bob)

        s.evaluate(ctx(1), .biometrics)
        s.feed(alice, .noMatch)
        s.given(.cancel(ctx: ctx(1)))
        s.evaluate(ctx(2), .owner)
        s.feed(alice, .noMatch)
        XCTAssertEqual(s.user(alice).biometricFailures, 2, "one count per uid, across contexts and evaluations")
        XCTAssertEqual(s.evaluation(ctx(2))?.biometricFailures, 1, "the evaluation's own count is separate")

        s.evaluate(ctx(3), .biometrics)
        s.feed(bob, .noMatch)
        XCTAssertEqual(s.user(bob).biometricFailures, 1)
        XCTAssertEqual(s.user(alice).biometricFailures, 2, "other users do not count")
    }

    func test_S02_lockoutAtLockoutThreshold() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.failBiometry(alice, on: ctx(1), times: 4)
        XCTAssertFalse(s.user(alice).biometryLockedOut)
        XCTAssertEqual(s.evaluation(ctx(1))?.id, 2)
        s.feed(alice, .noMatch)
        s.then(.biometricFailed(uid: alice, ctx: ctx(1), eval: 2), failed(alice, ctx(1), 2, .biometryLockout))
        XCTAssertTrue(s.user(alice).biometryLockedOut)
        XCTAssertEqual(s.user(alice).biometricFailures, 5)
    }

    func test_S02_lockoutThresholdIsConfigurable() {
        let s = Scenario(rules: Rules.default.with { $0.lockoutThreshold = 2 })
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .biometrics)
        s.feed(alice, .noMatch)
        s.feed(alice, .noMatch)
        s.then(.biometricFailed(uid: alice, ctx: ctx(1), eval: 1), failed(alice, ctx(1), 1, .biometryLockout))
        XCTAssertTrue(s.user(alice).biometryLockedOut)
    }

    func test_S03_matchResetsBiometricFailures() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .biometrics)
        s.feed(alice, .noMatch)
        s.feed(alice, .noMatch)
        XCTAssertEqual(s.user(alice).biometricFailures, 2)
        s.feed(alice, .match)
        s.then(.biometricMatched(uid: alice, ctx: ctx(1), eval: 1), succeeded(alice, ctx(1), 1, .biometric))
        XCTAssertEqual(s.user(alice).biometricFailures, 0)
    }

    func test_S03_lockedOutUserCannotMatch() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.failBiometry(alice, on: ctx(1), times: 5)
        XCTAssertTrue(s.user(alice).biometryLockedOut)
        s.evaluate(ctx(1), .biometrics)
        s.then(started(alice, ctx(1), 3, .biometrics), failed(alice, ctx(1), 3, .biometryLockout))
        s.feed(alice, .match)
        s.thenRejected(.badState)
        XCTAssertEqual(s.user(alice).biometricFailures, 5)
    }

    func test_S03_lockArrivingWhilePromptWaitsRefusesTheMatch() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.newContext(ctx(2), uid: alice)
        s.evaluate(ctx(1), .biometrics)
        s.given(.repairLog(firstLostSeq: 7, by: admin))  // S-41 locks everyone out
        s.feed(alice, .match)
        s.then(failed(alice, ctx(1), 1, .biometryLockout))

        s.given(.reset(uid: alice, by: admin))
        s.evaluate(ctx(2), .owner)
        s.given(.repairLog(firstLostSeq: 9, by: admin))
        s.feed(alice, .match)
        // The match is refused; the repair also left the longest passcode delay (issue #15 item 9).
        s.then(failed(alice, ctx(2), 1, Failure(.authenticationFailed, message: "Passcode entry is disabled.", retryAfter: 3600)))
    }

    func test_S04_passcodeSuccessResetsBiometricAndPasscodeCountsAndLiftsLockout() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.failBiometry(alice, on: ctx(1), times: 5)
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 3, .owner), prompted(alice, ctx(1), 3, passcodePrompt(left: 6)))
        s.enterPasscode(ctx(1), correct: false)
        s.enterPasscode(ctx(1), correct: false)
        XCTAssertEqual(s.user(alice).passcodeFailures, 2)
        XCTAssertEqual(s.user(alice).biometricFailures, 5)

        s.enterPasscode(ctx(1), correct: true)
        s.then(.passcodeAccepted(uid: alice, ctx: ctx(1), eval: 3), succeeded(alice, ctx(1), 3, .passcode))
        let user = s.user(alice)
        XCTAssertEqual(user.biometricFailures, 0)
        XCTAssertFalse(user.biometryLockedOut)
        XCTAssertEqual(user.passcodeFailures, 0)
        XCTAssertNil(user.passcodeRetryAt)
    }

    func test_S05_passcodeDelayAfterSixthFailureAndRefusedAttemptsDoNotCount() {
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 1, .owner), prompted(alice, ctx(1), 1, passcodePrompt(left: 6)))
        for left in [5, 4, 3, 2, 1] {
            s.enterPasscode(ctx(1), correct: false)
            s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true),
                   prompted(alice, ctx(1), 1, passcodePrompt(left: left, wrong: true)))
        }
        XCTAssertNil(s.user(alice).passcodeRetryAt, "no delay before failure number 6")
        s.enterPasscode(ctx(1), correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true),
               failed(alice, ctx(1), 1, retryAfter(60)))
        XCTAssertEqual(s.user(alice).passcodeRetryAt, s.now + sec(60))

        // Refused during the delay: not counted, not even submitted.
        s.advance(30)
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 2, .owner), failed(alice, ctx(1), 2, retryAfter(30)))
        XCTAssertEqual(s.user(alice).passcodeFailures, 6)
        XCTAssertEqual(s.state.passcodeEntryRefusal(alice, now: s.now), retryAfter(30))

        // After the delay: the 7th failure starts 5 minutes.
        s.advance(30)
        XCTAssertNil(s.state.passcodeEntryRefusal(alice, now: s.now))
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 3, .owner), prompted(alice, ctx(1), 3, passcodePrompt(left: 1)))
        s.enterPasscode(ctx(1), correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 3, counted: true),
               failed(alice, ctx(1), 3, retryAfter(300)))
    }

    func test_S05_delayStartedElsewhereRefusesAWaitingPromptWithoutCounting() {
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.failPasscode(on: ctx(1), times: 5)
        XCTAssertNotNil(s.evaluation(ctx(1)))
        // set-passcode's old secret is checked as an attempt (S-36): 6th failure.
        s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false))
        XCTAssertEqual(s.user(alice).passcodeFailures, 6)
        s.advance(10)
        s.when(.submitPasscode(ctx: ctx(1)))
        s.then(.passcodeRefused(uid: alice, ctx: ctx(1), eval: 1, retryAfter: 50), failed(alice, ctx(1), 1, retryAfter(50)))
        XCTAssertEqual(s.user(alice).passcodeFailures, 6, "a refused attempt does not count")
    }

    func test_S05_backoffScheduleLastValueRepeats() {
        let rules = Rules.default
        XCTAssertNil(rules.passcodeDelay(afterFailures: 5))
        XCTAssertEqual(rules.passcodeDelay(afterFailures: 6), sec(60))
        XCTAssertEqual(rules.passcodeDelay(afterFailures: 7), sec(300))
        XCTAssertEqual(rules.passcodeDelay(afterFailures: 8), sec(900))
        XCTAssertEqual(rules.passcodeDelay(afterFailures: 9), sec(3600))
        XCTAssertEqual(rules.passcodeDelay(afterFailures: 30), sec(3600))
    }

    func test_S06_maxPasscodeFailuresLocksUntilAdminReset() {
        let s = Scenario(rules: Rules.default.with { $0.maxPasscodeFailures = 3 })
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .owner)
        s.feed(alice, .disconnect)  // straight to the passcode phase
        s.then(.biometricDisconnected(uid: alice, ctx: ctx(1), eval: 1),
               prompted(alice, ctx(1), 1, passcodePrompt(left: 3)))
        s.enterPasscode(ctx(1), correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true),
               prompted(alice, ctx(1), 1, passcodePrompt(left: 2, wrong: true)))
        s.enterPasscode(ctx(1), correct: false)
        s.enterPasscode(ctx(1), correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true),
               failed(alice, ctx(1), 1, adminLockedFailure))
        XCTAssertTrue(s.user(alice).adminLocked)

        // Locked: biometry and passcode both refused, even much later.
        s.advance(100_000)
        s.canEvaluate(ctx(1), .biometrics)
        s.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .biometrics, biometry: .touchID,
                              result: .biometryLockout, reason: nil))
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 2, .owner), failed(alice, ctx(1), 2, adminLockedFailure))
        XCTAssertEqual(s.state.passcodeEntryRefusal(alice, now: s.now), adminLockedFailure)

        s.when(.reset(uid: alice, by: admin))
        s.then(.userReset(uid: alice, by: admin))
        XCTAssertFalse(s.user(alice).adminLocked)
        s.evaluate(ctx(1), .biometrics)
        s.then(started(alice, ctx(1), 3, .biometrics), prompted(alice, ctx(1), 3, firstBiometricPrompt))
    }

    func test_S07_sameWrongPasscodeTwiceInARowCountsOnce() {
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .owner)
        s.enterPasscode(ctx(1), correct: false)
        s.enterPasscode(ctx(1), correct: false, repeated: true)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: false),
               prompted(alice, ctx(1), 1, passcodePrompt(left: 5, wrong: true)))
        XCTAssertEqual(s.user(alice).passcodeFailures, 1)
    }

    func test_S08_everyEventCarriesTheTimeOfItsDecision() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.advance(5)
        s.evaluate(ctx(1), .biometrics)
        s.then(started(alice, ctx(1), 1, .biometrics), prompted(alice, ctx(1), 1, firstBiometricPrompt))
        XCTAssertEqual(s.log.suffix(2).map(\.time), [t0 + sec(5), t0 + sec(5)])
        XCTAssertEqual(s.state.clockHighWater, t0 + sec(5))
        XCTAssertEqual(s.evaluation(ctx(1))?.promptedAt, t0 + sec(5))
    }

    func test_S08_clockMovedBackNeverShortensADelay() {
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.failPasscode(on: ctx(1), times: 6)
        let failureTime = s.now
        XCTAssertEqual(s.user(alice).passcodeRetryAt, failureTime + sec(60))

        // The clock goes back an hour: the delay still has 60 s to run.
        s.setClock(failureTime - sec(3600))
        XCTAssertEqual(s.state.passcodeRetryAfter(alice, now: s.now), 60)
        XCTAssertEqual(s.state.status(alice, now: s.now).retryAfter, 60)
        XCTAssertEqual(s.state.status(alice, now: s.now).passcodeRetryAt, failureTime + sec(60))
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 2, .owner), failed(alice, ctx(1), 2, retryAfter(60)))
        // The events themselves carry the (earlier) wall-clock time.
        XCTAssertEqual(s.log.last?.time, failureTime - sec(3600))
        XCTAssertEqual(s.state.clockHighWater, failureTime)

        // Back to real time: the delay ends at failure time + 60 s.
        s.setClock(failureTime + sec(59))
        XCTAssertEqual(s.state.passcodeRetryAfter(alice, now: s.now), 1)
        s.setClock(failureTime + sec(60))
        XCTAssertEqual(s.state.passcodeRetryAfter(alice, now: s.now), 0)
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 3, .owner), prompted(alice, ctx(1), 3, passcodePrompt(left: 1)))

        // A failure made while the clock is behind starts its delay from the
        // newest time seen, not from the earlier wall clock.
        let highWater = s.state.clockHighWater
        s.setClock(highWater - sec(7200))
        s.enterPasscode(ctx(1), correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 3, counted: true),
               failed(alice, ctx(1), 3, retryAfter(300)))
        XCTAssertEqual(s.user(alice).passcodeRetryAt, highWater + sec(300))
        XCTAssertEqual(s.refolded, s.state)
    }

    func test_S09_adminResetClearsLockoutCountsBackoffAndAdminLock() {
        let s = Scenario(rules: Rules.default.with { $0.maxPasscodeFailures = 8 })
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.failBiometry(alice, on: ctx(1), times: 5)
        for _ in 0..<8 {
            s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false))
            s.advance(3600)  // each attempt after its delay (S-46 refuses one during it)
        }
        var user = s.user(alice)
        XCTAssertTrue(user.biometryLockedOut && user.adminLocked)
        XCTAssertEqual(user.passcodeFailures, 8)
        XCTAssertNotNil(user.passcodeRetryAt)

        s.when(.reset(uid: alice, by: 4242))
        s.then(.userReset(uid: alice, by: 4242))
        user = s.user(alice)
        XCTAssertEqual(user.biometricFailures, 0)
        XCTAssertFalse(user.biometryLockedOut)
        XCTAssertEqual(user.passcodeFailures, 0)
        XCTAssertNil(user.passcodeRetryAt)
        XCTAssertFalse(user.adminLocked)
        XCTAssertEqual(user.templates, ["right-thumb"], "a reset keeps enrollment")
        XCTAssertTrue(user.passcodeSet, "a reset keeps the passcode")
    }

    func test_S10_enrollmentChangesTheDomainState() {
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.when(.enroll(uid: alice, template: "thumb", by: admin, domainState: "aa11"))
        s.then(.enrollmentChanged(uid: alice, templates: ["thumb"], by: admin, domainState: "aa11"))
        s.canEvaluate(ctx(1), .biometrics)
        XCTAssertEqual(s.state.contexts[ctx(1)]?.domainState, "aa11")

        s.when(.enroll(uid: alice, template: "index", by: admin, domainState: "bb22"))
        s.then(.enrollmentChanged(uid: alice, templates: ["thumb", "index"], by: admin, domainState: "bb22"))
        XCTAssertEqual(s.state.contexts[ctx(1)]?.domainState, "aa11", "a context keeps what it was handed")
        s.canEvaluate(ctx(1), .biometrics)
        XCTAssertEqual(s.state.contexts[ctx(1)]?.domainState, "bb22")

        s.when(.unenroll(uid: alice, template: "thumb", by: admin, domainState: "cc33"))
        s.then(.enrollmentChanged(uid: alice, templates: ["index"], by: admin, domainState: "cc33"))
        XCTAssertEqual(s.user(alice).domainState, "cc33")
    }

    func test_S10_enrollmentRefusalsAndNoChangeKeepsTheDomainState() {
        let s = Scenario()
        s.enroll(alice, "thumb")
        s.when(.enroll(uid: alice, template: "thumb", by: admin, domainState: "x"))
        s.thenRejected(.badArgument)
        s.when(.enroll(uid: alice, template: "", by: admin, domainState: "x"))
        s.thenRejected(.badArgument)
        s.when(.unenroll(uid: alice, template: "pinky", by: admin, domainState: "x"))
        s.thenRejected(.badArgument)
        s.when(.unenroll(uid: bob, template: nil, by: admin, domainState: "x"))
        s.then()  // removing nothing changes nothing
        XCTAssertEqual(s.user(alice).domainState, "ds-1000-thumb")

        let none = Scenario(rules: Rules.default.with { $0.biometryType = .none })
        none.when(.enroll(uid: alice, template: "thumb", by: admin, domainState: "x"))
        none.thenRejected(.badState)
    }

    func test_S11_passcodeRequiredAfterSeconds() {
        let s = Scenario(rules: Rules.default.with { $0.passcodeRequiredAfter = sec(48 * 3600) })
        s.readyUser(alice)  // setting the passcode starts the clock
        s.newContext(ctx(1), uid: alice)
        s.advance(48 * 3600)
        s.canEvaluate(ctx(1), .biometrics)
        s.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .biometrics, biometry: .touchID, result: nil, reason: nil))

        s.advance(1)
        s.canEvaluate(ctx(1), .biometrics)
        s.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .biometrics, biometry: .touchID,
                              result: .biometryLockout, reason: "passcode-required"))
        s.evaluate(ctx(1), .biometrics)
        s.then(started(alice, ctx(1), 1, .biometrics), failed(alice, ctx(1), 1, passcodeRequired))
        // Policy 2 goes to the passcode directly; entering it makes biometry usable.
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 2, .owner), prompted(alice, ctx(1), 2, passcodePrompt(left: 6)))
        s.enterPasscode(ctx(1), correct: true)
        s.canEvaluate(ctx(1), .biometrics)
        s.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .biometrics, biometry: .touchID, result: nil, reason: nil))
    }

    func test_S11_passcodeRequiredAfterBoot() {
        let rules = Rules.default.with { $0.passcodeRequiredAfterBoot = true }
        let s = Scenario(rules: rules)
        s.readyUser(alice)  // set in this boot
        s.newContext(ctx(1), uid: alice)
        s.canEvaluate(ctx(1), .biometrics)
        s.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .biometrics, biometry: .touchID, result: nil, reason: nil))

        s.given(.stop, .start(version: "test", bootID: "boot-2", pid: 2, rules: rules))
        s.newContext(ctx(2), uid: alice)
        s.canEvaluate(ctx(2), .biometrics)
        s.then(.policyChecked(uid: alice, ctx: ctx(2), policy: .biometrics, biometry: .touchID,
                              result: .biometryLockout, reason: "passcode-required"))
        s.canEvaluate(ctx(2), .owner)
        s.then(.policyChecked(uid: alice, ctx: ctx(2), policy: .owner, biometry: .touchID, result: nil, reason: nil))
        s.evaluate(ctx(2), .owner)
        s.then(started(alice, ctx(2), 1, .owner), prompted(alice, ctx(2), 1, passcodePrompt(left: 6)))
        s.enterPasscode(ctx(2), correct: true)
        s.canEvaluate(ctx(2), .biometrics)
        s.then(.policyChecked(uid: alice, ctx: ctx(2), policy: .biometrics, biometry: .touchID, result: nil, reason: nil))

        // Restarting within the same boot keeps it usable.
        s.given(.stop, .start(version: "test", bootID: "boot-2", pid: 3, rules: rules))
        s.newContext(ctx(3), uid: alice)
        s.canEvaluate(ctx(3), .biometrics)
        s.then(.policyChecked(uid: alice, ctx: ctx(3), policy: .biometrics, biometry: .touchID, result: nil, reason: nil))
    }
}
