// S-60: touch or type, the combined prompt. Each half keeps its own rules;
// the first success wins; one final answer under every race (S-33).
// Also S-61..S-63 as the core sees them: biometry blocked where the client
// is, and the system going to sleep.

import XCTest
@testable import LocalAuthCore

final class CombinedPromptRuleTests: XCTestCase {
    private let combined = EvaluationOptions(combined: true)

    /// alice with a passcode and a template, and an open context ctx(1).
    private func ready(_ rules: Rules = .default) -> Scenario {
        let s = Scenario(rules: rules)
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        return s
    }

    private func both(attempt: Int = 1, left: Int = 6, message: String? = nil) -> Prompt {
        Prompt(kind: .biometricOrPasscode, attempt: attempt, attemptsLeft: left, message: message)
    }

    @discardableResult
    private func evaluateCombined(_ s: Scenario, _ c: ContextID = ctx(1), _ policy: Policy = .owner) -> Result<[Event], Rejection> {
        s.when(.evaluate(ctx: c, policy: policy, reason: vaultReason, options: combined))
    }

    private func verdict(_ s: Scenario, _ c: ContextID = ctx(1), eval: EvaluationID = 1, correct: Bool) {
        s.when(.passcodeChecked(uid: alice, ctx: c, eval: eval, correct: correct, repeated: false))
    }

    // MARK: - Both halves at once

    func test_S60_aClientThatDidNotAskNeverSeesTheCombinedPrompt() {
        let s = ready()
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 1, .owner), prompted(alice, ctx(1), 1, firstBiometricPrompt))
    }

    func test_S60_givenPolicy2AndAskingForIt_theSensorAndThePasscodeAreOfferedInOnePrompt() {
        let s = ready()
        evaluateCombined(s)
        s.then(started(alice, ctx(1), 1, .owner), prompted(alice, ctx(1), 1, both()))
        XCTAssertEqual(s.evaluation(ctx(1))?.isScanning, true, "the sensor scans")
        XCTAssertEqual(s.evaluation(ctx(1))?.takesPasscode, true, "a passcode is taken")
        XCTAssertEqual(s.user(alice).promptHolder, ctx(1))
        XCTAssertEqual(s.refolded, s.state, "S-38")
    }

    func test_S60_policy1HasNoPasscodeHalf_andAContextWithoutPasscodePromptsGetsTheSequentialFlow() {
        let s = ready()
        evaluateCombined(s, ctx(1), .biometrics)
        s.then(started(alice, ctx(1), 1, .biometrics), prompted(alice, ctx(1), 1, firstBiometricPrompt))
        // S-44: an ordinary client under Backend=shadow may not take the password.
        s.given(.createContext(ctx: ctx(2), uid: alice, pid: 1, origin: ContextOrigin(passcodePrompts: false)))
        evaluateCombined(s, ctx(2))
        XCTAssertEqual(s.prompts, [firstBiometricPrompt])
    }

    func test_S60_theFirstSuccessWins_aMatchEndsBothHalves() {
        let s = ready()
        evaluateCombined(s)
        s.feed(alice, .match)
        s.then(.biometricMatched(uid: alice, ctx: ctx(1), eval: 1), succeeded(alice, ctx(1), 1, .biometric))
        XCTAssertNil(s.evaluation(ctx(1)))
        s.when(.submitPasscode(ctx: ctx(1)))
        s.thenRejected(.badState)
    }

    func test_S60_aPasscodeTypedWhileTheScanRunsWins_andTheScanGoesOnUntilItsVerdict() {
        let s = ready()
        evaluateCombined(s)
        s.when(.submitPasscode(ctx: ctx(1)))
        s.then(.passcodeSubmitted(uid: alice, ctx: ctx(1), eval: 1))
        XCTAssertEqual(s.evaluation(ctx(1))?.isScanning, true, "the sensor still scans while the passcode is checked")
        XCTAssertTrue(s.state.prompting.contains(ctx(1)), "S-31 still runs")
        verdict(s, correct: true)
        s.then(.passcodeAccepted(uid: alice, ctx: ctx(1), eval: 1), succeeded(alice, ctx(1), 1, .passcode))
        XCTAssertNil(s.evaluation(ctx(1)))
    }

    func test_S33_S60_aMatchWhileAPasscodeIsCheckedWins_andTheLateWrongVerdictIsStillCounted() {
        let s = ready()
        evaluateCombined(s)
        s.given(.submitPasscode(ctx: ctx(1)))
        s.feed(alice, .match)
        s.then(.biometricMatched(uid: alice, ctx: ctx(1), eval: 1), succeeded(alice, ctx(1), 1, .biometric))
        verdict(s, correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true))
        XCTAssertEqual(s.user(alice).passcodeFailures, 1, "S-5: counted, though the evaluation had ended")
    }

    func test_S33_S60_aCorrectVerdictAndAMatchInOneTurn_theFirstRecordedWins() {
        let s = ready()
        evaluateCombined(s)
        s.given(.submitPasscode(ctx: ctx(1)))
        verdict(s, correct: true)
        XCTAssertEqual(s.success(ctx(1), 1), .passcode)
        s.feed(alice, .match)
        s.thenRejected(.badState)  // the reading finds no prompt: nothing counted, no second answer
    }

    func test_S60_aPasscodeIsNotTakenWhileAnotherOfTheEvaluationIsChecked_andFallbackIsNotOffered() {
        let s = ready()
        evaluateCombined(s)
        s.when(.fallback(ctx: ctx(1)))
        s.thenRejected(.badState)
        s.given(.submitPasscode(ctx: ctx(1)))
        s.when(.submitPasscode(ctx: ctx(1)))
        s.thenRejected(.badState)
    }

    // MARK: - The biometric half (S-27 per reading)

    func test_S1_S60_aNoMatchIsCountedAndTheCombinedPromptComesAgainWithTheNextAttempt() {
        let s = ready()
        evaluateCombined(s)
        s.feed(alice, .noMatch)
        s.then(.biometricFailed(uid: alice, ctx: ctx(1), eval: 1), prompted(alice, ctx(1), 1, both(attempt: 2, message: "Try again.")))
        XCTAssertEqual(s.user(alice).biometricFailures, 1)
        s.feed(alice, .retry(message: "Finger moved too quickly."))
        s.then(.biometricRetry(uid: alice, ctx: ctx(1), eval: 1, message: "Finger moved too quickly."),
               prompted(alice, ctx(1), 1, both(attempt: 2, message: "Finger moved too quickly.")))
        XCTAssertEqual(s.user(alice).biometricFailures, 1, "a retry counts nothing")
    }

    func test_S2_S60_aNoMatchThatLocksOutEndsTheBiometricHalfOnly_thePasscodeGoesOn() {
        let s = ready()
        s.newContext(ctx(2), uid: alice)
        s.failBiometry(alice, on: ctx(2), times: 4)
        s.given(.cancel(ctx: ctx(2)))
        evaluateCombined(s)
        s.feed(alice, .noMatch)
        s.then(.biometricFailed(uid: alice, ctx: ctx(1), eval: 1),
               .promptHalfEnded(uid: alice, ctx: ctx(1), eval: 1, half: .biometric, reason: .lockout, retryAfter: 0),
               prompted(alice, ctx(1), 1, Prompt(kind: .passcode, attemptsLeft: 6, message: "Biometry is locked out.")))
        XCTAssertTrue(s.user(alice).biometryLockedOut)
        XCTAssertEqual(s.evaluation(ctx(1))?.isScanning, false, "the scan stops")
        s.enterPasscode(ctx(1), correct: true)
        XCTAssertEqual(s.success(ctx(1), 1), .passcode)
        XCTAssertFalse(s.user(alice).biometryLockedOut, "S-4")
    }

    func test_S27_S60_theEvaluationsAttemptsEndTheBiometricHalf() {
        let s = ready()
        evaluateCombined(s)
        s.feed(alice, .noMatch)
        s.feed(alice, .noMatch)
        s.feed(alice, .noMatch)
        s.then(.biometricFailed(uid: alice, ctx: ctx(1), eval: 1),
               .promptHalfEnded(uid: alice, ctx: ctx(1), eval: 1, half: .biometric, reason: .attempts, retryAfter: 0),
               prompted(alice, ctx(1), 1, Prompt(kind: .passcode, attemptsLeft: 6, message: "Too many failed attempts.")))
    }

    func test_S27_S43_S60_theSensorGoneOrFailingEndsTheBiometricHalfOnly() {
        let s = ready()
        evaluateCombined(s)
        s.feed(alice, .disconnect)
        s.then(.biometricDisconnected(uid: alice, ctx: ctx(1), eval: 1),
               .promptHalfEnded(uid: alice, ctx: ctx(1), eval: 1, half: .biometric, reason: .disconnect, retryAfter: 0),
               prompted(alice, ctx(1), 1, Prompt(kind: .passcode, attemptsLeft: 6, message: "The sensor is not available.")))
        s.given(.cancel(ctx: ctx(1)))
        evaluateCombined(s)
        s.feed(alice, .error(message: "The reader failed."))
        s.then(.promptHalfEnded(uid: alice, ctx: ctx(1), eval: 2, half: .biometric, reason: .error, retryAfter: 0),
               prompted(alice, ctx(1), 2, Prompt(kind: .passcode, attemptsLeft: 6, message: "The reader failed.")))
        XCTAssertEqual(s.user(alice).biometricFailures, 0, "nothing counted")
    }

    func test_S2_S60_aMissThatLocksOutWhileAPasscodeIsChecked_leavesTheVerdictToDecide() {
        let s = ready(Rules.default.with { $0.lockoutThreshold = 1 })
        evaluateCombined(s)
        s.given(.submitPasscode(ctx: ctx(1)))
        s.feed(alice, .noMatch)
        s.then(.biometricFailed(uid: alice, ctx: ctx(1), eval: 1),
               .promptHalfEnded(uid: alice, ctx: ctx(1), eval: 1, half: .biometric, reason: .lockout, retryAfter: 0))
        XCTAssertEqual(s.evaluation(ctx(1))?.phase, .verifyingPasscode, "no prompt line while the verdict is awaited")
        XCTAssertFalse(s.state.prompting.contains(ctx(1)))
        verdict(s, correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true),
               prompted(alice, ctx(1), 1, passcodePrompt(left: 5, wrong: true)))
    }

    func test_S60_aMissWhileAPasscodeIsCheckedIsCountedAtOnce_itsPromptWaitsForTheVerdict() {
        let s = ready()
        evaluateCombined(s)
        s.given(.submitPasscode(ctx: ctx(1)))
        s.feed(alice, .noMatch)
        s.then(.biometricFailed(uid: alice, ctx: ctx(1), eval: 1))
        XCTAssertEqual(s.user(alice).biometricFailures, 1)
        s.feed(alice, .retry(message: "Too fast."))
        s.then(.biometricRetry(uid: alice, ctx: ctx(1), eval: 1, message: "Too fast."))
        verdict(s, correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true),
               prompted(alice, ctx(1), 1, both(attempt: 2, left: 5, message: "Wrong passcode.")))
    }

    // MARK: - The passcode half (S-28 per attempt)

    func test_S5_S60_aWrongPasscodeIsCountedAndTheCombinedPromptComesAgain_theBiometricAttemptUnchanged() {
        let s = ready()
        evaluateCombined(s)
        s.feed(alice, .noMatch)
        s.enterPasscode(ctx(1), correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true),
               prompted(alice, ctx(1), 1, both(attempt: 2, left: 5, message: "Wrong passcode.")))
        XCTAssertEqual(s.user(alice).passcodeFailures, 1)
    }

    func test_S5_S60_aWrongPasscodeThatStartsADelayEndsThePasscodeHalfOnly_theScanGoesOnWithRetryAfter() {
        let s = ready(Rules.default.with { $0.delayAfterFailures = 1 })
        evaluateCombined(s)
        s.then(started(alice, ctx(1), 1, .owner), prompted(alice, ctx(1), 1, both(left: 1)))
        s.enterPasscode(ctx(1), correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true),
               .promptHalfEnded(uid: alice, ctx: ctx(1), eval: 1, half: .passcode, reason: .delay, retryAfter: 60),
               prompted(alice, ctx(1), 1, Prompt(kind: .biometric, attempt: 1, message: "Passcode entry is disabled.",
                                                 retryAfter: 60)))
        XCTAssertEqual(s.evaluation(ctx(1))?.isScanning, true, "the scan goes on")
        s.when(.submitPasscode(ctx: ctx(1)))
        s.thenRejected(.badState)
        s.advance(10)
        s.feed(alice, .noMatch)
        XCTAssertEqual(s.prompts, [Prompt(kind: .biometric, attempt: 2, fallbackOffered: true, message: "Try again.", retryAfter: 50)])
        s.feed(alice, .match)
        XCTAssertEqual(s.success(ctx(1), 1), .biometric)
    }

    func test_S46_S60_givenADelayWhenThePromptIsShown_thePasscodeHalfHasEndedBeforeItBegan() {
        let s = ready(Rules.default.with { $0.delayAfterFailures = 1 })
        s.newContext(ctx(2), uid: alice)
        s.given(.evaluate(ctx: ctx(2), policy: .owner, reason: vaultReason))
        s.feed(alice, .noMatch)
        s.given(.fallback(ctx: ctx(2)))
        s.enterPasscode(ctx(2), correct: false)
        XCTAssertEqual(s.state.passcodeRetryAfter(alice, now: s.now), 60)
        evaluateCombined(s)
        s.then(started(alice, ctx(1), 1, .owner),
               prompted(alice, ctx(1), 1, Prompt(kind: .biometric, attempt: 1, message: "Passcode entry is disabled.", retryAfter: 60)))
    }

    func test_S46_S60_aDelayThatStartsElsewhereWhileTheCombinedPromptWaits_endsItsPasscodeHalfAtTheNextAttempt() {
        let s = ready(Rules.default.with { $0.delayAfterFailures = 1 })
        evaluateCombined(s)
        // Another attempt of alice's (set-passcode's old secret) starts a delay.
        s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false))
        s.when(.submitPasscode(ctx: ctx(1)))
        s.then(.passcodeRefused(uid: alice, ctx: ctx(1), eval: 1, retryAfter: 60),
               .promptHalfEnded(uid: alice, ctx: ctx(1), eval: 1, half: .passcode, reason: .delay, retryAfter: 60),
               prompted(alice, ctx(1), 1, Prompt(kind: .biometric, attempt: 1, message: "Passcode entry is disabled.", retryAfter: 60)))
        XCTAssertEqual(s.user(alice).passcodeFailures, 1, "the refused attempt counts nothing")
    }

    func test_S6_S60_aWrongPasscodeThatReachesTheAdminLockEndsTheEvaluation() {
        let s = ready(Rules.default.with { $0.maxPasscodeFailures = 1 })
        evaluateCombined(s)
        s.enterPasscode(ctx(1), correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true), failed(alice, ctx(1), 1, adminLockedFailure))
    }

    func test_S28_S60_whenBothHalvesHaveEnded_S28sEntryIsJudgedAgain() {
        let s = ready(Rules.default.with { $0.delayAfterFailures = 1 })
        evaluateCombined(s)
        s.enterPasscode(ctx(1), correct: false)
        for _ in 0..<2 { s.feed(alice, .noMatch) }
        s.feed(alice, .noMatch)
        // The remaining prompt was an ordinary biometric one: S-27's end.
        s.then(.biometricFailed(uid: alice, ctx: ctx(1), eval: 1), failed(alice, ctx(1), 1, retryAfter(60)))
        // The same, after the delay ran out while the sensor scanned: a passcode prompt.
        s.given(.reset(uid: alice, by: admin))
        evaluateCombined(s)
        s.enterPasscode(ctx(1), correct: false)
        s.advance(61)
        for _ in 0..<3 { s.feed(alice, .noMatch) }
        XCTAssertEqual(s.prompts, [passcodePrompt(left: 1)])
    }

    // MARK: - What ends both (S-29..S-33)

    func test_S29_S60_cancelEndsBothHalves() {
        let s = ready()
        evaluateCombined(s)
        s.when(.cancel(ctx: ctx(1)))
        s.then(failed(alice, ctx(1), 1, .userCancel))
        XCTAssertFalse(s.state.prompting.contains(ctx(1)))
        XCTAssertNil(s.user(alice).promptHolder)
    }

    func test_S29_S60_aCancelBetweenASubmittedPasscodeAndItsVerdict_oneAnswer_theVerdictStillCounts() {
        let s = ready()
        evaluateCombined(s)
        s.given(.submitPasscode(ctx: ctx(1)))
        s.when(.cancel(ctx: ctx(1)))
        s.then(failed(alice, ctx(1), 1, .userCancel))
        verdict(s, correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true))
        s.feed(alice, .match)
        s.thenRejected(.badState)
    }

    func test_S30_S60_aNewerPromptOfTheSameUserPreemptsTheCombinedOne() {
        let s = ready()
        s.newContext(ctx(2), uid: alice)
        evaluateCombined(s)
        evaluateCombined(s, ctx(2))
        s.then(started(alice, ctx(2), 1, .owner), failed(alice, ctx(1), 1, preempted), prompted(alice, ctx(2), 1, both()))
        s.feed(alice, .match)
        XCTAssertEqual(s.success(ctx(2), 1), .biometric, "readings go to the prompt's holder (S-34)")
    }

    func test_S31_S60_aCombinedPromptLeftUnansweredTimesOut_alsoWhileAPasscodeIsChecked() {
        let s = ready()
        evaluateCombined(s)
        s.given(.submitPasscode(ctx: ctx(1)))
        s.advance(60)
        s.when(.expirePrompts)
        s.then(failed(alice, ctx(1), 1, timedOut))
        verdict(s, correct: true)
        s.then(.passcodeAccepted(uid: alice, ctx: ctx(1), eval: 1))
    }

    func test_S14_S60_aDisconnectEndsTheCombinedPrompt() {
        let s = ready()
        evaluateCombined(s)
        s.when(.invalidate(ctx: ctx(1), reason: .disconnect))
        XCTAssertNil(s.user(alice).promptHolder)
        XCTAssertTrue(s.state.prompting.isEmpty)
        s.feed(alice, .noMatch)
        s.thenRejected(.badState)
        XCTAssertEqual(s.user(alice).biometricFailures, 0)
    }

    func test_S38_S60_theLogOfEveryRaceRefoldsToTheLiveState() {
        let s = ready()
        evaluateCombined(s)
        s.feed(alice, .noMatch)
        s.given(.submitPasscode(ctx: ctx(1)))
        s.feed(alice, .noMatch)
        verdict(s, correct: false)
        s.feed(alice, .retry(message: "x"))
        s.given(.submitPasscode(ctx: ctx(1)))
        XCTAssertEqual(s.refolded, s.state)
        // And through a snapshot (StateCodec version 3) while a passcode is checked.
        let decoded = try? StateCodec.decode(StateCodec.encode(s.state))
        XCTAssertEqual(decoded, s.state)
    }

    // MARK: - S-61..S-63 in the core

    func test_S61_remoteIsBiometryNotAvailableForPolicy1_andPolicy2GoesStraightToThePasscode() {
        let s = ready()
        let remote = EvaluationOptions(combined: true, biometryBlocked: BiometryBlock(.remote, detail: "laptop.example.org"))
        s.when(.evaluate(ctx: ctx(1), policy: .biometrics, reason: vaultReason, options: remote))
        s.then(started(alice, ctx(1), 1, .biometrics), failed(alice, ctx(1), 1, BiometryBlock(.remote, detail: "laptop.example.org").failure))
        XCTAssertEqual(s.failure(ctx(1), 1)?.reason, "remote")
        XCTAssertEqual(s.failure(ctx(1), 1)?.code, .biometryNotAvailable)
        XCTAssertTrue(s.failure(ctx(1), 1)?.message.contains("laptop.example.org") == true)
        s.when(.evaluate(ctx: ctx(1), policy: .owner, reason: vaultReason, options: remote))
        s.then(started(alice, ctx(1), 2, .owner),
               .biometrySkipped(uid: alice, ctx: ctx(1), eval: 2, reason: .remote, detail: "laptop.example.org"),
               prompted(alice, ctx(1), 2, passcodePrompt(left: 6)))
    }

    func test_S62_aClosedLidIsBiometryNotAvailable_withItsOwnReason() {
        let s = ready()
        let lid = EvaluationOptions(biometryBlocked: BiometryBlock(.lidClosed))
        s.when(.evaluate(ctx: ctx(1), policy: .biometrics, reason: vaultReason, options: lid))
        XCTAssertEqual(s.failure(ctx(1), 1)?.reason, "lid-closed")
        // No sensor at all answers as before (S-18 step 3's first check).
        let none = Scenario(rules: Rules.default.with { $0.biometryType = .none })
        none.setPasscode(alice)
        none.newContext(ctx(1), uid: alice)
        none.when(.evaluate(ctx: ctx(1), policy: .biometrics, reason: vaultReason, options: lid))
        XCTAssertEqual(none.failure(ctx(1), 1), Failure(.biometryNotAvailable))
    }

    func test_S63_sleepEndsEveryScanningEvaluationWithSystemCancel_countingNothing_passcodePromptsStay() {
        let s = ready()
        s.readyUser(bob)
        s.newContext(ctx(2), uid: bob)
        s.given(.createContext(ctx: ctx(3), uid: 1002, pid: 1))
        s.setPasscode(1002)
        evaluateCombined(s)
        s.given(.evaluate(ctx: ctx(2), policy: .biometrics, reason: vaultReason))
        s.given(.evaluate(ctx: ctx(3), policy: .owner, reason: vaultReason))  // nothing enrolled: the passcode prompt
        let counts = [s.user(alice).biometricFailures, s.user(bob).biometricFailures]
        s.when(.systemSleep(suspending: true, endScans: true))
        let suspend = Failure(.systemCancel, message: "The system is going to sleep.", reason: "suspend")
        s.then(.systemSleep(suspending: true), failed(alice, ctx(1), 1, suspend), failed(bob, ctx(2), 1, suspend))
        XCTAssertEqual([s.user(alice).biometricFailures, s.user(bob).biometricFailures], counts)
        XCTAssertNotNil(s.evaluation(ctx(3)), "a passcode prompt needs no sensor")
        s.when(.systemSleep(suspending: false, endScans: true))
        s.then(.systemSleep(suspending: false))
        evaluateCombined(s)
        XCTAssertEqual(s.prompts, [both()], "after resume a new prompt scans afresh")
    }

    func test_S63_withCancelOnSuspendOff_theSleepIsRecordedAndNothingEnds() {
        let s = ready()
        evaluateCombined(s)
        s.when(.systemSleep(suspending: true, endScans: false))
        s.then(.systemSleep(suspending: true))
        XCTAssertNotNil(s.evaluation(ctx(1)))
    }
}
