// decide folds each event into its state as it emits it: the daemon decides
// in place (its sink records each event before the fold, S-38) and needs no
// dry run; a set-passcode attempt gets its answer from the decision (S-36,
// S-46); S-47's full queue is the core's refusal, before anything counts.

import XCTest
@testable import LocalAuthCore

/// A sink that keeps what it saw and refuses the event numbered `refuse`.
private final class RecordingSink: EventSink {
    var recorded: [Event] = []
    var foldedCounts: [UInt64] = []
    var refuse: Int?

    init(refuse: Int? = nil) { self.refuse = refuse }

    func record(_ event: Event) -> Bool {
        if recorded.count == refuse { return false }
        recorded.append(event)
        return true
    }

    func folded(_ event: Event, into state: borrowing AuthState) {
        foldedCounts.append(state.eventCount)
    }
}

final class DecisionFoldRuleTests: XCTestCase {
    /// The command decided in place on a copy of the scenario's state.
    private func decided(_ s: Scenario, _ command: Command, sink: (any EventSink)? = nil) -> (Result<Decided, Rejection>, AuthState) {
        var state = s.state
        let result = state.decide(command, now: s.now, sink: sink)
        return (result, state)
    }

    private func answer(_ s: Scenario, _ command: Command, file: StaticString = #filePath, line: UInt = #line) -> Failure? {
        guard case .success(let decision) = decided(s, command).0 else {
            XCTFail("rejected", file: file, line: line)
            return nil
        }
        return decision.answer
    }

    /// Alice with a passcode and `failures` wrong attempts behind her.
    private func aliceWith(failures: Int, rules: Rules = .default) -> Scenario {
        let s = Scenario(rules: rules)
        s.setPasscode(alice)
        for _ in 0..<failures { s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false)) }
        return s
    }

    // MARK: - In place, with a sink

    func test_S38_decidingInPlaceLeavesTheFoldOfItsEventsAndTheSameEventsAsOnACopy() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.newContext(ctx(2), uid: alice)
        s.given(.evaluate(ctx: ctx(1), policy: .owner, reason: vaultReason))
        // ctx(2)'s prompt preempts ctx(1)'s (S-30): several events, one decision.
        let command = Command.evaluate(ctx: ctx(2), policy: .owner, reason: vaultReason)
        let before = s.state
        let sink = RecordingSink()
        let (result, after) = decided(s, command, sink: sink)
        guard case .success(let decision) = result, case .success(let copied) = decide(command, before, now: s.now) else {
            return XCTFail("rejected")
        }
        XCTAssertEqual(decision.events, copied)
        XCTAssertEqual(decision.events.count, 3)
        XCTAssertTrue(decision.complete)
        XCTAssertEqual(after, decision.events.reduce(before, AuthState.evolve))
        XCTAssertEqual(sink.recorded, decision.events, "every event went through the sink, in order")
        XCTAssertEqual(sink.foldedCounts, [1, 2, 3].map { before.eventCount + $0 }, "each after its own fold")
        XCTAssertEqual(s.state, before, "the copy decided on is not the scenario's")
    }

    func test_S38_aRejectionLeavesTheStateAsItWasAndRecordsNothing() {
        let s = Scenario()
        s.newContext(ctx(1), uid: alice)
        let sink = RecordingSink()
        let (result, after) = decided(s, .evaluate(ctx: ctx(1), policy: .owner, reason: ""), sink: sink)
        XCTAssertEqual(result, .failure(Rejection(.badArgument, "A non-empty reason is required.")))
        XCTAssertEqual(after, s.state)
        XCTAssertTrue(sink.recorded.isEmpty)
    }

    func test_S38_aLogThatRefusesAnEventEndsTheDecisionWithTheStateOfWhatItRecorded() {
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        let before = s.state
        let sink = RecordingSink(refuse: 1)  // evaluation-started goes in; its prompt does not
        let (result, after) = decided(s, .evaluate(ctx: ctx(1), policy: .owner, reason: vaultReason), sink: sink)
        guard case .success(let decision) = result else { return XCTFail("rejected") }
        XCTAssertFalse(decision.complete)
        XCTAssertEqual(decision.events.map(\.body), [started(alice, ctx(1), 1, .owner)])
        XCTAssertEqual(after, decision.events.reduce(before, AuthState.evolve), "live state == fold(log)")
        XCTAssertEqual(after.contexts[ctx(1)]?.evaluation?.phase, .starting, "no prompt was folded")
    }

    // MARK: - The fold replaces restated arithmetic

    func test_S5_S28_theFailureThatStartsADelayEndsTheEvaluationWithTheDelayTheStateNowHolds() {
        let s = aliceWith(failures: 5)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 1, .owner), prompted(alice, ctx(1), 1, passcodePrompt(left: 1)))
        s.enterPasscode(ctx(1), correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true), failed(alice, ctx(1), 1, retryAfter(60)))
        XCTAssertEqual(s.state.passcodeRetryAfter(alice, now: s.now), 60, "the answer and the state agree")
    }

    func test_S7_S28_aRepeatedWrongPasscodeCountsNothingAndThePromptSaysSo() {
        let s = aliceWith(failures: 5)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .owner)
        s.enterPasscode(ctx(1), correct: false, repeated: true)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: false),
               prompted(alice, ctx(1), 1, passcodePrompt(left: 1, wrong: true)))
        XCTAssertNil(s.user(alice).passcodeRetryAt)
    }

    func test_S2_S27_theFailureThatLocksBiometryOutMovesPolicy2ToThePasscodeWithItsCount() {
        let s = Scenario(rules: Rules.default.with { $0.lockoutThreshold = 2 })
        s.readyUser(alice)
        s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false))
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .owner)
        s.feed(alice, .noMatch)
        s.then(.biometricFailed(uid: alice, ctx: ctx(1), eval: 1), prompted(alice, ctx(1), 1, retryPrompt(attempt: 2)))
        s.feed(alice, .noMatch)
        s.then(.biometricFailed(uid: alice, ctx: ctx(1), eval: 1), prompted(alice, ctx(1), 1, passcodePrompt(left: 5)))
        XCTAssertTrue(s.user(alice).biometryLockedOut)
    }

    // MARK: - set-passcode's old secret: the decision's answer

    func test_S36_aWrongOldPasscodeIsAnsweredWithTheDelayItStarted() {
        let s = aliceWith(failures: 5)
        XCTAssertEqual(answer(s, .passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false)),
                       Failure(.authenticationFailed, message: "The old passcode is wrong.", retryAfter: 60))
        XCTAssertEqual(answer(aliceWith(failures: 0), .passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false)),
                       Failure(.authenticationFailed, message: "The old passcode is wrong."), "no delay yet: no retry-after")
    }

    func test_S36_S6_aWrongOldPasscodeThatLocksTheUserSaysSo() {
        let s = aliceWith(failures: 2, rules: Rules.default.with { $0.maxPasscodeFailures = 3 })
        XCTAssertEqual(answer(s, .passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false)),
                       Failure(.authenticationFailed, message: "The old passcode is wrong.", adminLocked: true))
    }

    func test_S36_aRightOldPasscodeIsAcceptedWithNoAnswer() {
        let s = aliceWith(failures: 3)
        s.when(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: true, repeated: false))
        s.then(.passcodeAccepted(uid: alice, ctx: nil, eval: nil))
        XCTAssertNil(answer(aliceWith(failures: 3), .passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: true, repeated: false)))
        XCTAssertNil(answer(aliceWith(failures: 3), .admitPasscodeAttempt(uid: alice, ctx: nil, eval: nil)), "admitted")
    }

    func test_S46_anOldSecretDuringADelayGetsTheDelaysAnswerWhetherRightOrWrong() {
        let s = aliceWith(failures: 6)
        s.advance(10)
        let refusal = retryAfter(50)
        XCTAssertEqual(answer(s, .admitPasscodeAttempt(uid: alice, ctx: nil, eval: nil)), refusal)
        XCTAssertEqual(answer(s, .passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false)), refusal)
        XCTAssertEqual(answer(s, .passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: true, repeated: false)), refusal)
        XCTAssertEqual(refusal, s.state.passcodeEntryRefusal(alice, now: s.now))
    }

    func test_S46_anAdminLockAnswersAnOldSecretWithTheLock() {
        let s = aliceWith(failures: 3, rules: Rules.default.with { $0.maxPasscodeFailures = 3 })
        XCTAssertEqual(answer(s, .admitPasscodeAttempt(uid: alice, ctx: nil, eval: nil)), adminLockedFailure)
    }

    func test_S46_anEvaluationsAttemptIsAnsweredByItsEvaluationNotDirectly() {
        let s = aliceWith(failures: 0)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .owner)
        s.given(.submitPasscode(ctx: ctx(1)))
        for _ in 0..<6 { s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false)) }
        XCTAssertNil(answer(s, .admitPasscodeAttempt(uid: alice, ctx: ctx(1), eval: 1)))
        XCTAssertNil(answer(s, .passcodeChecked(uid: alice, ctx: ctx(1), eval: 1, correct: false, repeated: false)))
    }

    // MARK: - passcode: the prompt, the queue (S-47), the delay (S-46)

    func test_S47_aSubmissionWhenTheQueueIsFullIsBusyCountsNothingAndThePromptStillWaits() {
        let s = aliceWith(failures: 0)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .owner)
        let before = s.state
        guard case .failure(let rejection) = s.when(.submitPasscode(ctx: ctx(1), queueFull: true)) else {
            return XCTFail("accepted")
        }
        XCTAssertEqual(s.state, before)
        XCTAssertEqual(rejection, Rejection.passcodeQueueFull)
        XCTAssertEqual(rejection.message, "Too many passcode checks are waiting for this user; wait for their answers.")
        s.when(.submitPasscode(ctx: ctx(1)))
        s.then(.passcodeSubmitted(uid: alice, ctx: ctx(1), eval: 1))
    }

    func test_S46_S47_aDelayWinsOverAFullQueue() {
        let s = aliceWith(failures: 0)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .owner)
        for _ in 0..<6 { s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false)) }
        s.when(.submitPasscode(ctx: ctx(1), queueFull: true))
        s.then(.passcodeRefused(uid: alice, ctx: ctx(1), eval: 1, retryAfter: 60), failed(alice, ctx(1), 1, retryAfter(60)))
    }

    func test_S28_aPasscodeWithNoPromptWaitingIsBadStateInTheWireWords() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        let noPrompt = Rejection(.badState, "No passcode prompt is waiting.")
        XCTAssertEqual(s.when(.submitPasscode(ctx: ctx(1))), .failure(noPrompt), "no evaluation")
        s.evaluate(ctx(1), .owner)
        XCTAssertEqual(s.when(.submitPasscode(ctx: ctx(1))), .failure(noPrompt), "a biometric prompt")
        XCTAssertEqual(s.when(.submitPasscode(ctx: ctx(9))), .failure(Rejection(.unknownContext, "No such context.")))
    }
}
