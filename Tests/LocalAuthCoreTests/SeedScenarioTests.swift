// The seed articles' scenarios, literally.

import XCTest
@testable import LocalAuthCore

final class SeedScenarioTests: XCTestCase {
    func test_Seed_touchIDThreeFailedTouchesEndOneEvaluationWithRetryLimitExceeded() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .biometrics)
        s.feed(alice, .noMatch)
        s.feed(alice, .noMatch)
        XCTAssertNotNil(s.evaluation(ctx(1)))
        s.feed(alice, .noMatch)
        let failure = s.failure(ctx(1), 1)
        XCTAssertEqual(failure?.code.rawValue, -1)
        XCTAssertEqual(failure?.code, .authenticationFailed)
        XCTAssertEqual(failure?.message, "Application retry limit exceeded.")
        XCTAssertEqual(s.user(alice).biometricFailures, 3)
        XCTAssertFalse(s.user(alice).biometryLockedOut)
    }

    func test_Seed_twoMoreFailuresInANewEvaluationGiveBiometryLockout() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .biometrics)
        for _ in 0..<3 { s.feed(alice, .noMatch) }
        s.evaluate(ctx(1), .biometrics)
        s.feed(alice, .noMatch)
        XCTAssertNil(s.failure(ctx(1), 2))
        s.feed(alice, .noMatch)
        XCTAssertEqual(s.failure(ctx(1), 2)?.code.rawValue, -8)
        XCTAssertEqual(s.failure(ctx(1), 2)?.code.wireName, "biometryLockout")
        XCTAssertTrue(s.user(alice).biometryLockedOut)
    }

    func test_Seed_afterLockoutPolicy2OffersThePasscodeAndACorrectOneLiftsTheLockout() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.failBiometry(alice, on: ctx(1), times: 5)
        s.canEvaluate(ctx(1), .biometrics)
        s.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .biometrics, biometry: .touchID,
                              result: .biometryLockout, reason: nil))
        s.canEvaluate(ctx(1), .owner)
        s.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .owner, biometry: .touchID, result: nil, reason: nil))

        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 3, .owner), prompted(alice, ctx(1), 3, passcodePrompt(left: 6)))
        s.enterPasscode(ctx(1), correct: true)
        XCTAssertEqual(s.success(ctx(1), 3), .passcode)

        s.newContext(ctx(2), uid: alice)
        s.canEvaluate(ctx(2), .biometrics)
        s.then(.policyChecked(uid: alice, ctx: ctx(2), policy: .biometrics, biometry: .touchID, result: nil, reason: nil))
        s.evaluate(ctx(2), .biometrics)
        s.then(started(alice, ctx(2), 1, .biometrics), prompted(alice, ctx(2), 1, firstBiometricPrompt))
    }

    func test_Seed_sixWrongPasscodesStartADelayThatGrows60_300_900_3600_3600() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.failBiometry(alice, on: ctx(1), times: 5)  // policy 2 goes straight to the passcode

        s.evaluate(ctx(1), .owner)
        var eval = s.evaluation(ctx(1))!.id
        for _ in 0..<5 { s.enterPasscode(ctx(1), correct: false) }
        XCTAssertNil(s.user(alice).passcodeRetryAt)
        XCTAssertEqual(s.state.status(alice, now: s.now).retryAfter, 0)

        var failures = 5
        for delay in [60, 300, 900, 3600, 3600] as [Int64] {
            if s.evaluation(ctx(1)) == nil {
                s.evaluate(ctx(1), .owner)
                eval = s.evaluation(ctx(1))!.id
                XCTAssertEqual(s.prompts, [passcodePrompt(left: 1)])
            }
            s.enterPasscode(ctx(1), correct: false)
            failures += 1
            XCTAssertEqual(s.failure(ctx(1), eval)?.retryAfter, delay, "failure \(failures)")
            XCTAssertEqual(s.failure(ctx(1), eval)?.code, .authenticationFailed)
            XCTAssertEqual(s.user(alice).passcodeFailures, failures)
            XCTAssertEqual(s.user(alice).passcodeRetryAt, s.now + sec(delay))
            let status = s.state.status(alice, now: s.now)
            XCTAssertEqual(status.retryAfter, delay)
            XCTAssertEqual(status.passcodeRetryAt, s.now + sec(delay))
            XCTAssertEqual(status.passcodeFailures, failures)

            // One second before the end it is still refused; at the end it is allowed.
            s.advance(delay - 1)
            s.evaluate(ctx(1), .owner)
            XCTAssertEqual(s.failure(ctx(1), s.state.contexts[ctx(1)]!.lastEvaluation)?.retryAfter, 1)
            s.advance(1)
            XCTAssertEqual(s.state.status(alice, now: s.now).retryAfter, 0)
            XCTAssertNil(s.state.status(alice, now: s.now).passcodeRetryAt)
        }
        XCTAssertEqual(s.refolded, s.state)
    }

    func test_Seed_biometryTypeIsNoneBeforeCanEvaluateAndFaceIDAfterAFailingOne() {
        let s = Scenario(rules: Rules.default.with { $0.biometryType = .faceID })
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        XCTAssertEqual(s.state.contexts[ctx(1)]?.biometry, BiometryType.none)
        s.canEvaluate(ctx(1), .biometrics)
        s.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .biometrics, biometry: .faceID,
                              result: .biometryNotEnrolled, reason: nil))
        XCTAssertEqual(s.state.contexts[ctx(1)]?.biometry, .faceID)
    }

    func test_Seed_invalidateGivesAppCancelToTheRunningEvaluationAndInvalidContextAfterwards() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .biometrics)
        s.when(.invalidate(ctx: ctx(1), reason: .app))
        XCTAssertEqual(s.failure(ctx(1), 1)?.code.rawValue, -9)
        s.canEvaluate(ctx(1), .biometrics)
        s.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .biometrics, biometry: .touchID,
                              result: .invalidContext, reason: nil))
        XCTAssertEqual(LAErrorCode.invalidContext.rawValue, -10)
        s.evaluate(ctx(1), .owner)
        XCTAssertEqual(s.failure(ctx(1), 2)?.code.rawValue, -10)
    }

    func test_Seed_S07_theSameWrongPasscodeTwiceInARowCountsOnce() {
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .owner)
        s.given(.submitPasscode(ctx: ctx(1)))
        s.when(.passcodeChecked(uid: alice, ctx: ctx(1), eval: 1, correct: false, repeated: false))
        XCTAssertEqual(s.user(alice).passcodeFailures, 1)
        s.given(.submitPasscode(ctx: ctx(1)))
        s.when(.passcodeChecked(uid: alice, ctx: ctx(1), eval: 1, correct: false, repeated: true))
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: false),
               prompted(alice, ctx(1), 1, passcodePrompt(left: 5, wrong: true)))
        XCTAssertEqual(s.user(alice).passcodeFailures, 1)
        // A different wrong one counts again.
        s.given(.submitPasscode(ctx: ctx(1)))
        s.when(.passcodeChecked(uid: alice, ctx: ctx(1), eval: 1, correct: false, repeated: false))
        XCTAssertEqual(s.user(alice).passcodeFailures, 2)
    }
}
