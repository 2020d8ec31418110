// SEMANTICS §6: evaluate, S-21 .. S-34.

import XCTest
@testable import LocalAuthCore

final class EvaluateRuleTests: XCTestCase {
    /// alice with a passcode and a template, and an open context ctx(1).
    private func ready(_ rules: Rules = .default) -> Scenario {
        let s = Scenario(rules: rules)
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        return s
    }

    func test_S21_reasonIsRequiredAndNonEmpty() {
        let s = ready()
        s.evaluate(ctx(1), .biometrics, reason: "")
        s.thenRejected(.badArgument)
        XCTAssertNil(s.evaluation(ctx(1)))
        XCTAssertEqual(s.state.contexts[ctx(1)]?.lastEvaluation, 0)
        s.evaluate(ctx(1), .biometrics, reason: "x")
        s.then(started(alice, ctx(1), 1, .biometrics, reason: "x"), prompted(alice, ctx(1), 1, firstBiometricPrompt))
    }

    func test_S22_secondEvaluateOnTheSameContextIsBusyAndTheFirstContinues() {
        let s = ready()
        s.evaluate(ctx(1), .biometrics)
        s.evaluate(ctx(1), .owner)
        s.thenRejected(.busy)
        s.evaluate(ctx(1), .biometrics)
        s.thenRejected(.busy)
        XCTAssertEqual(s.evaluation(ctx(1))?.id, 1)
        XCTAssertEqual(s.evaluation(ctx(1))?.policy, .biometrics)
        s.feed(alice, .match)
        s.then(.biometricMatched(uid: alice, ctx: ctx(1), eval: 1), succeeded(alice, ctx(1), 1, .biometric))
        // Also busy while a passcode is being checked.
        let p = Scenario()
        p.setPasscode(alice)
        p.newContext(ctx(1), uid: alice)
        p.evaluate(ctx(1), .owner)
        p.given(.submitPasscode(ctx: ctx(1)))
        p.evaluate(ctx(1), .owner)
        p.thenRejected(.busy)
    }

    func test_S23_cachedBiometricSuccessSatisfiesPolicies1And2() {
        let s = ready()
        s.evaluate(ctx(1), .biometrics)
        s.feed(alice, .match)
        s.evaluate(ctx(1), .biometrics)
        s.then(started(alice, ctx(1), 2, .biometrics), succeeded(alice, ctx(1), 2, .cached))
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 3, .owner), succeeded(alice, ctx(1), 3, .cached))
        s.evaluate(ctx(1), .biometricsOrCompanion)
        s.then(started(alice, ctx(1), 4, .biometricsOrCompanion), succeeded(alice, ctx(1), 4, .cached))
        // Even after a lockout elsewhere (Apple's reuse is per context).
        s.newContext(ctx(2), uid: alice)
        s.failBiometry(alice, on: ctx(2), times: 5)
        s.evaluate(ctx(1), .biometrics)
        s.then(started(alice, ctx(1), 5, .biometrics), succeeded(alice, ctx(1), 5, .cached))
    }

    func test_S23_cachedPasscodeSuccessSatisfiesPolicy2Only() {
        let s = ready()
        s.evaluate(ctx(1), .owner)
        s.feed(alice, .noMatch)
        s.given(.fallback(ctx: ctx(1)))
        s.enterPasscode(ctx(1), correct: true)
        s.then(.passcodeAccepted(uid: alice, ctx: ctx(1), eval: 1), succeeded(alice, ctx(1), 1, .passcode))
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 2, .owner), succeeded(alice, ctx(1), 2, .cached))
        s.evaluate(ctx(1), .biometrics)
        s.then(started(alice, ctx(1), 3, .biometrics), prompted(alice, ctx(1), 3, firstBiometricPrompt))
    }

    func test_S23_cachedSuccessIsPerContext() {
        let s = ready()
        s.newContext(ctx(2), uid: alice)
        s.evaluate(ctx(1), .biometrics)
        s.feed(alice, .match)
        s.evaluate(ctx(2), .biometrics)
        s.then(started(alice, ctx(2), 1, .biometrics), prompted(alice, ctx(2), 1, firstBiometricPrompt))
    }

    func test_S24_reuseWindowInsideOutsideAndCappedAt300Seconds() {
        let s = ready()
        s.when(.reportUnlock(uid: alice, by: admin))
        s.then(.deviceUnlocked(uid: alice, by: admin))
        let unlock = s.now
        for (n, duration) in [(1, Int64(10)), (2, 10), (3, 1000), (4, 1000), (5, 0)] as [(UInt64, Int64)] {
            s.newContext(ctx(10 + n), uid: alice)
            s.set(ctx(10 + n), .reuseDuration(duration))
        }
        // Inside: exactly d seconds later still counts.
        s.setClock(unlock + sec(10))
        s.evaluate(ctx(11), .biometrics)
        s.then(started(alice, ctx(11), 1, .biometrics), succeeded(alice, ctx(11), 1, .reuse))
        // Outside.
        s.setClock(unlock + sec(11))
        s.evaluate(ctx(12), .owner)
        s.then(started(alice, ctx(12), 1, .owner), prompted(alice, ctx(12), 1, firstBiometricPrompt))
        s.given(.cancel(ctx: ctx(12)))
        // Capped at 300 s.
        s.setClock(unlock + sec(300))
        s.evaluate(ctx(13), .owner)
        s.then(started(alice, ctx(13), 1, .owner), succeeded(alice, ctx(13), 1, .reuse))
        s.setClock(unlock + sec(301))
        s.evaluate(ctx(14), .biometrics)
        s.then(started(alice, ctx(14), 1, .biometrics), prompted(alice, ctx(14), 1, firstBiometricPrompt))
        s.given(.cancel(ctx: ctx(14)))
        // d = 0: off.
        s.setClock(unlock)
        s.evaluate(ctx(15), .biometrics)
        s.then(started(alice, ctx(15), 1, .biometrics), prompted(alice, ctx(15), 1, firstBiometricPrompt))
    }

    func test_S24_noReuseWithoutAnUnlockAndNotWhileLockedOut() {
        let s = ready()
        s.set(ctx(1), .reuseDuration(300))
        s.evaluate(ctx(1), .biometrics)
        s.then(started(alice, ctx(1), 1, .biometrics), prompted(alice, ctx(1), 1, firstBiometricPrompt))
        s.given(.cancel(ctx: ctx(1)))
        s.given(.reportUnlock(uid: alice, by: admin))
        s.newContext(ctx(2), uid: alice)
        s.failBiometry(alice, on: ctx(2), times: 5)
        s.evaluate(ctx(1), .biometrics)
        s.then(started(alice, ctx(1), 2, .biometrics), failed(alice, ctx(1), 2, .biometryLockout))
    }

    func test_S25_sameChecksAsCanEvaluateAndPolicy2InBackoffEndsWithRetryAfter() {
        let s = Scenario()
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .biometrics)
        s.then(started(alice, ctx(1), 1, .biometrics), failed(alice, ctx(1), 1, .passcodeNotSet))
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 2, .owner), failed(alice, ctx(1), 2, .passcodeNotSet))
        s.evaluate(ctx(1), .companion)
        s.then(started(alice, ctx(1), 3, .companion), failed(alice, ctx(1), 3, .companionNotAvailable))
        s.setPasscode(alice)
        s.evaluate(ctx(1), .biometricsOrCompanion)
        s.then(started(alice, ctx(1), 4, .biometricsOrCompanion), failed(alice, ctx(1), 4, .biometryNotEnrolled))

        // Biometry unusable (not enrolled) and the passcode in backoff.
        for _ in 0..<6 {
            s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false))
        }
        s.advance(1)
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 5, .owner), failed(alice, ctx(1), 5, retryAfter(59)))
        // Biometry usable: the biometric prompt comes first, backoff or not.
        s.enroll(alice)
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 6, .owner), prompted(alice, ctx(1), 6, firstBiometricPrompt))
    }

    func test_S26_notInteractiveWhenAPromptWouldBeNeeded() {
        let s = ready()
        s.set(ctx(1), .interactionNotAllowed(true))
        s.evaluate(ctx(1), .biometrics)
        s.then(started(alice, ctx(1), 1, .biometrics), failed(alice, ctx(1), 1, .notInteractive))
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 2, .owner), failed(alice, ctx(1), 2, .notInteractive))
        XCTAssertEqual(Failure(.notInteractive).code.rawValue, -1004)

        // Passcode-only path too.
        let p = Scenario()
        p.setPasscode(alice)
        p.newContext(ctx(1), uid: alice)
        p.set(ctx(1), .interactionNotAllowed(true))
        p.evaluate(ctx(1), .owner)
        p.then(started(alice, ctx(1), 1, .owner), failed(alice, ctx(1), 1, .notInteractive))

        // No prompt needed: a cached success still succeeds.
        let c = ready()
        c.evaluate(ctx(1), .biometrics)
        c.feed(alice, .match)
        c.set(ctx(1), .interactionNotAllowed(true))
        c.evaluate(ctx(1), .owner)
        c.then(started(alice, ctx(1), 2, .owner), succeeded(alice, ctx(1), 2, .cached))
        // Nor does it hide a real error.
        c.newContext(ctx(2), uid: alice)
        c.set(ctx(2), .interactionNotAllowed(true))
        c.evaluate(ctx(2), .companion)
        c.then(started(alice, ctx(2), 1, .companion), failed(alice, ctx(2), 1, .companionNotAvailable))
    }

    // MARK: S-27, every branch

    func test_S27_matchSucceedsWithMethodBiometricAndTheDomainState() {
        let s = ready()
        s.evaluate(ctx(1), .biometrics)
        s.then(started(alice, ctx(1), 1, .biometrics), prompted(alice, ctx(1), 1, firstBiometricPrompt))
        s.feed(alice, .match)
        s.then(.biometricMatched(uid: alice, ctx: ctx(1), eval: 1), succeeded(alice, ctx(1), 1, .biometric))
        XCTAssertEqual(s.state.contexts[ctx(1)]?.domainState, "ds-1000-right-thumb")
        XCTAssertNil(s.evaluation(ctx(1)))
    }

    func test_S27_noMatchIsCountedAndPromptsAgainOfferingTheFallback() {
        let s = ready()
        s.evaluate(ctx(1), .biometrics)
        s.feed(alice, .noMatch)
        s.then(.biometricFailed(uid: alice, ctx: ctx(1), eval: 1), prompted(alice, ctx(1), 1, retryPrompt(attempt: 2)))
        XCTAssertEqual(s.user(alice).biometricFailures, 1)
        XCTAssertTrue(s.emitted.first?.isSecurityFailure == true, "the failure is the first event (S-40)")
    }

    func test_S27_retryReadingPromptsAgainWithAMessageAndIsNotCounted() {
        let s = ready()
        s.evaluate(ctx(1), .biometrics)
        s.feed(alice, .retry(message: "Finger moved too quickly."))
        s.then(.biometricRetry(uid: alice, ctx: ctx(1), eval: 1, message: "Finger moved too quickly."),
               prompted(alice, ctx(1), 1, Prompt(kind: .biometric, attempt: 1, fallbackOffered: false,
                                                 message: "Finger moved too quickly.")))
        XCTAssertEqual(s.user(alice).biometricFailures, 0)
        XCTAssertEqual(s.evaluation(ctx(1))?.biometricFailures, 0)
        for _ in 0..<10 { s.feed(alice, .retry(message: "Too short.")) }
        XCTAssertNotNil(s.evaluation(ctx(1)), "retries never end an evaluation")
        // After a failure a retry keeps the fallback offered.
        s.feed(alice, .noMatch)
        s.feed(alice, .retry(message: "Not centred."))
        XCTAssertEqual(s.prompts, [Prompt(kind: .biometric, attempt: 2, fallbackOffered: true, message: "Not centred.")])
    }

    func test_S27_fallbackIsOfferedFromTheFirstFailureUnlessTheTitleIsEmpty() {
        let s = ready()
        s.evaluate(ctx(1), .biometrics)
        XCTAssertEqual(s.prompts, [firstBiometricPrompt], "never on the first prompt")
        s.when(.fallback(ctx: ctx(1)))
        s.thenRejected(.badState)
        s.feed(alice, .noMatch)
        XCTAssertEqual(s.prompts, [retryPrompt(attempt: 2, fallback: true)])

        let hidden = ready()
        hidden.set(ctx(1), .fallbackTitle(""))
        hidden.evaluate(ctx(1), .owner)
        hidden.feed(alice, .noMatch)
        XCTAssertEqual(hidden.prompts, [retryPrompt(attempt: 2, fallback: false)])
        hidden.when(.fallback(ctx: ctx(1)))
        hidden.thenRejected(.badState)
    }

    func test_S27_fallbackForPolicy1IsUserFallback() {
        let s = ready()
        s.evaluate(ctx(1), .biometrics)
        s.feed(alice, .noMatch)
        s.when(.fallback(ctx: ctx(1)))
        s.then(.fallbackChosen(uid: alice, ctx: ctx(1), eval: 1), failed(alice, ctx(1), 1, .userFallback))
        XCTAssertEqual(LAErrorCode.userFallback.rawValue, -3)
    }

    func test_S27_fallbackForPolicy2ShowsThePasscodePrompt() {
        let s = ready()
        s.evaluate(ctx(1), .owner)
        s.feed(alice, .noMatch)
        s.when(.fallback(ctx: ctx(1)))
        s.then(.fallbackChosen(uid: alice, ctx: ctx(1), eval: 1), prompted(alice, ctx(1), 1, passcodePrompt(left: 6)))
        s.when(.fallback(ctx: ctx(1)))
        s.thenRejected(.badState)
    }

    func test_S27_disconnectIsBiometryDisconnectedForPolicy1AndPasscodeForPolicy2() {
        let s = ready()
        s.evaluate(ctx(1), .biometrics)
        s.feed(alice, .disconnect)
        s.then(.biometricDisconnected(uid: alice, ctx: ctx(1), eval: 1), failed(alice, ctx(1), 1, .biometryDisconnected))
        XCTAssertEqual(LAErrorCode.biometryDisconnected.rawValue, -13)
        s.evaluate(ctx(1), .owner)
        s.feed(alice, .disconnect)
        s.then(.biometricDisconnected(uid: alice, ctx: ctx(1), eval: 2), prompted(alice, ctx(1), 2, passcodePrompt(left: 6)))
        XCTAssertEqual(s.user(alice).biometricFailures, 0)
    }

    func test_S27_attemptsPerEvaluationAre3ForTouchIDAnd2ForFaceIDAndOpticID() {
        for (type, attempts) in [(BiometryType.touchID, 3), (.faceID, 2), (.opticID, 2)] {
            let s = ready(Rules.default.with { $0.biometryType = type })
            XCTAssertEqual(s.state.rules.attemptsPerEvaluation, attempts)
            s.evaluate(ctx(1), .biometrics)
            for attempt in 1..<attempts {
                s.feed(alice, .noMatch)
                s.then(.biometricFailed(uid: alice, ctx: ctx(1), eval: 1),
                       prompted(alice, ctx(1), 1, retryPrompt(attempt: attempt + 1)))
            }
            s.feed(alice, .noMatch)
            s.then(.biometricFailed(uid: alice, ctx: ctx(1), eval: 1), failed(alice, ctx(1), 1, retryLimitExceeded))

            // Policy 2 moves to the passcode phase instead.
            s.given(.reset(uid: alice, by: admin))
            s.evaluate(ctx(1), .owner)
            for _ in 0..<attempts { s.feed(alice, .noMatch) }
            s.then(.biometricFailed(uid: alice, ctx: ctx(1), eval: 2), prompted(alice, ctx(1), 2, passcodePrompt(left: 6)))
        }
        let custom = ready(Rules.default.with { $0.attemptsPerEvaluationOverride = 1 })
        custom.evaluate(ctx(1), .biometrics)
        custom.feed(alice, .noMatch)
        custom.then(.biometricFailed(uid: alice, ctx: ctx(1), eval: 1), failed(alice, ctx(1), 1, retryLimitExceeded))
    }

    func test_S27_lockoutDuringAnEvaluationEndsPolicy1AndMovesPolicy2ToThePasscode() {
        let s = ready()
        s.newContext(ctx(2), uid: alice)
        s.failBiometry(alice, on: ctx(2), times: 4)
        s.given(.cancel(ctx: ctx(2)))
        s.evaluate(ctx(1), .owner)
        s.feed(alice, .noMatch)
        s.then(.biometricFailed(uid: alice, ctx: ctx(1), eval: 1), prompted(alice, ctx(1), 1, passcodePrompt(left: 6)))
        XCTAssertTrue(s.user(alice).biometryLockedOut)
    }

    // MARK: S-28

    func test_S28_wrongPasscodeRepromptsWithAttemptsLeftAndCorrectSucceeds() {
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .owner)
        s.when(.submitPasscode(ctx: ctx(1)))
        s.then(.passcodeSubmitted(uid: alice, ctx: ctx(1), eval: 1))
        XCTAssertEqual(s.evaluation(ctx(1))?.phase, .verifyingPasscode)
        s.when(.submitPasscode(ctx: ctx(1)))
        s.thenRejected(.badState)
        s.when(.passcodeChecked(uid: alice, ctx: ctx(1), eval: 1, correct: false, repeated: false))
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true),
               prompted(alice, ctx(1), 1, passcodePrompt(left: 5, wrong: true)))
        s.enterPasscode(ctx(1), correct: true)
        s.then(.passcodeAccepted(uid: alice, ctx: ctx(1), eval: 1), succeeded(alice, ctx(1), 1, .passcode))
    }

    func test_S28_passcodePhaseInBackoffEndsWithRetryAfter() {
        let s = ready()
        for _ in 0..<6 {
            s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false))
        }
        s.advance(20)
        s.evaluate(ctx(1), .owner)  // biometry usable: biometric prompt first
        s.feed(alice, .noMatch)
        s.when(.fallback(ctx: ctx(1)))
        s.then(.fallbackChosen(uid: alice, ctx: ctx(1), eval: 1), failed(alice, ctx(1), 1, retryAfter(40)))
    }

    func test_S28_wrongPasscodeThatStartsADelayEndsTheEvaluationWithRetryAfter() {
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.failPasscode(on: ctx(1), times: 5)
        XCTAssertNotNil(s.evaluation(ctx(1)))
        s.enterPasscode(ctx(1), correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true), failed(alice, ctx(1), 1, retryAfter(60)))
    }

    func test_S28_wrongPasscodeThatStartsTheAdminLockEndsWithLockedAdmin() {
        let s = Scenario(rules: Rules.default.with { $0.maxPasscodeFailures = 2 })
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .owner)
        XCTAssertEqual(s.prompts, [passcodePrompt(left: 2)])
        s.enterPasscode(ctx(1), correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true),
               prompted(alice, ctx(1), 1, passcodePrompt(left: 1, wrong: true)))
        s.enterPasscode(ctx(1), correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true), failed(alice, ctx(1), 1, adminLockedFailure))
    }

    func test_S28_verdictAfterTheEvaluationEndedStillCounts() {
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .owner)
        s.given(.submitPasscode(ctx: ctx(1)))
        s.given(.cancel(ctx: ctx(1)))
        s.when(.passcodeChecked(uid: alice, ctx: ctx(1), eval: 1, correct: false, repeated: false))
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true))
        XCTAssertEqual(s.user(alice).passcodeFailures, 1, "cancelling after submitting buys no free guess")
    }

    // MARK: S-29 .. S-34

    func test_S29_cancelEndsWithUserCancelAtAnyPrompt() {
        let s = ready()
        s.evaluate(ctx(1), .owner)
        s.when(.cancel(ctx: ctx(1)))
        s.then(failed(alice, ctx(1), 1, .userCancel))
        s.evaluate(ctx(1), .owner)
        s.feed(alice, .noMatch)
        s.given(.fallback(ctx: ctx(1)))
        s.when(.cancel(ctx: ctx(1)))
        s.then(failed(alice, ctx(1), 2, .userCancel))
        s.when(.cancel(ctx: ctx(1)))
        s.thenRejected(.badState)
        XCTAssertEqual(LAErrorCode.userCancel.rawValue, -2)
    }

    func test_S30_aNewPromptForTheSameUserPreemptsTheOlderOne() {
        let s = ready()
        s.setPasscode(bob)
        s.enroll(bob)
        s.newContext(ctx(2), uid: alice)
        s.newContext(ctx(3), uid: bob)
        s.evaluate(ctx(1), .biometrics)
        s.evaluate(ctx(3), .biometrics)  // another user: no preemption
        s.then(started(bob, ctx(3), 1, .biometrics), prompted(bob, ctx(3), 1, firstBiometricPrompt))
        s.evaluate(ctx(2), .owner)
        s.then(started(alice, ctx(2), 1, .owner), failed(alice, ctx(1), 1, preempted),
               prompted(alice, ctx(2), 1, firstBiometricPrompt))
        // The sensor now feeds the newer evaluation.
        s.feed(alice, .match)
        s.then(.biometricMatched(uid: alice, ctx: ctx(2), eval: 1), succeeded(alice, ctx(2), 1, .biometric))
        XCTAssertNotNil(s.evaluation(ctx(3)))
    }

    func test_S30_passcodePromptPreemptsToo() {
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.newContext(ctx(2), uid: alice)
        s.evaluate(ctx(1), .owner)
        s.evaluate(ctx(2), .owner)
        s.then(started(alice, ctx(2), 1, .owner), failed(alice, ctx(1), 1, preempted),
               prompted(alice, ctx(2), 1, passcodePrompt(left: 6)))
        // No prompt, no preemption: a cached success leaves the prompt alone.
        s.enterPasscode(ctx(2), correct: true)
        s.newContext(ctx(3), uid: alice)
        s.evaluate(ctx(3), .owner)
        s.evaluate(ctx(2), .owner)
        s.then(started(alice, ctx(2), 2, .owner), succeeded(alice, ctx(2), 2, .cached))
        XCTAssertNotNil(s.evaluation(ctx(3)))
    }

    func test_S31_unansweredPromptTimesOutAfterPromptTimeout() {
        let s = ready()
        s.evaluate(ctx(1), .biometrics)
        s.advance(59)
        s.when(.expirePrompts)
        s.then()
        XCTAssertEqual(s.state.nextPromptDeadline, t0 + sec(60))
        s.advance(1)
        s.when(.expirePrompts)
        s.then(failed(alice, ctx(1), 1, timedOut))
        XCTAssertNil(s.state.nextPromptDeadline)
    }

    func test_S31_aNewPromptRestartsTheTimeoutAndCheckingAPasscodeIsNotWaiting() {
        let s = ready(Rules.default.with { $0.promptTimeout = sec(30) })
        s.evaluate(ctx(1), .owner)
        s.advance(20)
        s.feed(alice, .noMatch)
        s.advance(20)
        s.when(.expirePrompts)
        s.then()
        s.given(.fallback(ctx: ctx(1)))
        s.advance(29)
        s.given(.submitPasscode(ctx: ctx(1)))
        s.advance(100)
        s.when(.expirePrompts)
        s.then()  // the worker holds it, not the user
        s.when(.passcodeChecked(uid: alice, ctx: ctx(1), eval: 1, correct: false, repeated: false))
        s.advance(30)
        s.when(.expirePrompts)
        s.then(failed(alice, ctx(1), 1, timedOut))
    }

    func test_S32_stopEndsEveryRunningEvaluationWithSystemCancel() {
        let s = ready()
        s.setPasscode(bob)
        s.newContext(ctx(2), uid: bob)
        s.newContext(ctx(3), uid: alice)
        s.evaluate(ctx(1), .biometrics)
        s.evaluate(ctx(2), .owner)
        let shutdown = Failure(.systemCancel, message: "The daemon is shutting down.", reason: "shutdown")
        s.when(.stop)
        s.then(failed(alice, ctx(1), 1, shutdown), .contextInvalidated(uid: alice, ctx: ctx(1), reason: .disconnect),
               failed(bob, ctx(2), 1, shutdown), .contextInvalidated(uid: bob, ctx: ctx(2), reason: .disconnect),
               .contextInvalidated(uid: alice, ctx: ctx(3), reason: .disconnect),
               .daemonStopped)
        XCTAssertTrue(s.state.contexts.isEmpty)
    }

    func test_S33_exactlyOneEndPerEvaluationWhateverComesLater() {
        let s = ready()
        s.evaluate(ctx(1), .owner)
        s.given(.cancel(ctx: ctx(1)))
        s.feed(alice, .match)
        s.thenRejected(.badState)
        s.when(.cancel(ctx: ctx(1)))
        s.thenRejected(.badState)
        s.when(.fallback(ctx: ctx(1)))
        s.thenRejected(.badState)
        s.when(.submitPasscode(ctx: ctx(1)))
        s.thenRejected(.badState)
        s.advance(3600)
        s.when(.expirePrompts)
        s.then()
        s.when(.invalidate(ctx: ctx(1), reason: .app))
        s.then(.contextInvalidated(uid: alice, ctx: ctx(1), reason: .app))
        s.when(.stop)
        s.then(.contextReleased(uid: alice, ctx: ctx(1)), .daemonStopped)
        let ends = s.log.filter { [.evaluationFailed, .evaluationSucceeded].contains($0.body.kind) }
        XCTAssertEqual(ends.map(\.body), [failed(alice, ctx(1), 1, .userCancel)])
    }

    func test_S33_preemptedEvaluationIsEndedOnceEvenWhenItsPasscodeIsBeingChecked() {
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.newContext(ctx(2), uid: alice)
        s.evaluate(ctx(1), .owner)
        s.given(.submitPasscode(ctx: ctx(1)))
        s.evaluate(ctx(2), .owner)
        s.then(started(alice, ctx(2), 1, .owner), failed(alice, ctx(1), 1, preempted),
               prompted(alice, ctx(2), 1, passcodePrompt(left: 6)))
        s.when(.passcodeChecked(uid: alice, ctx: ctx(1), eval: 1, correct: true, repeated: false))
        s.then(.passcodeAccepted(uid: alice, ctx: ctx(1), eval: 1))
        XCTAssertNotNil(s.evaluation(ctx(2)))
    }

    // S-34: who may feed the sensor is the daemon's check; the core holds
    // that biometric results come only from `.sensor` and go to the prompt
    // of the uid the sensor reports for.
    func test_S34_biometricResultsComeOnlyFromTheSensorForThatUsersPrompt() {
        let s = ready()
        s.setPasscode(bob)
        s.enroll(bob)
        s.evaluate(ctx(1), .biometrics)
        s.feed(bob, .match)
        s.thenRejected(.badState)
        XCTAssertNotNil(s.evaluation(ctx(1)))
        // No client command produces a biometric result.
        let clientCommands: [Command] = [
            .canEvaluate(ctx: ctx(1), policy: .biometrics), .setProperty(ctx: ctx(1), property: .cancelTitle("x")),
            .fallback(ctx: ctx(1)), .submitPasscode(ctx: ctx(1)), .expirePrompts,
        ]
        for command in clientCommands {
            s.when(command)
            XCTAssertFalse(s.emitted.contains { [.biometricMatched, .biometricFailed].contains($0.kind) })
        }
        s.feed(alice, .match)
        s.then(.biometricMatched(uid: alice, ctx: ctx(1), eval: 1), succeeded(alice, ctx(1), 1, .biometric))
    }
}
