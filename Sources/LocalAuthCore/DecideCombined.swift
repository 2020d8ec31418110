// S-60: the combined prompt, touch or type. Its two halves run at once and
// each keeps its own rules: the biometric half S-27's (a no match is
// counted and durable before it is revealed, lockout and the evaluation's
// attempts end it), the passcode half S-28's and S-46's (a wrong passcode
// is counted; a delay ends it). The first success ends the evaluation;
// cancel, preemption, timeout and the rest end both (they need nothing
// here: the evaluation ends). When a half ends, the other goes on as a
// prompt of its own kind; when both have ended, S-28's entry is judged
// again (`enterPasscodePhase`).

extension Decision {
    /// Where S-27 would show the first biometric prompt of an evaluation
    /// that asked for `prompt=combined`: the combined prompt, or, while
    /// passcode entry is refused (a delay), a biometric prompt that says
    /// until when (its passcode half ended before it began).
    mutating func showFirstCombinedPrompt(_ context: ContextState, _ ctx: ContextID, _ eval: EvaluationID) {
        if let refusal = passcodeEntryRefusal(for: context) {
            // An admin lock makes biometry unusable too (S-18): not here.
            let prompt = Prompt(kind: .biometric, attempt: 1, fallbackOffered: false, message: refusal.message,
                                retryAfter: refusal.retryAfter ?? 0)
            return showPrompt(context, ctx, eval, prompt)
        }
        showPrompt(context, ctx, eval, combinedPrompt(context.uid, failures: 0, message: nil))
    }

    /// The combined prompt after `failures` biometric failures of its evaluation.
    func combinedPrompt(_ uid: UserID, failures: Int, message: String?) -> Prompt {
        Prompt(kind: .biometricOrPasscode, attempt: failures + 1, attemptsLeft: state.passcodeAttemptsLeft(uid),
               message: message)
    }

    /// A reading for an evaluation at a combined prompt (`checking`: a
    /// passcode of it is being checked, so no prompt line is sent now).
    mutating func combinedSensor(uid: UserID, _ context: ContextState, _ ctx: ContextID, _ evaluation: Evaluation,
                                 reading: SensorReading) {
        guard case .combined(let prompt, let checking) = evaluation.phase else { return }
        let eval = evaluation.id
        // A lock that arrived while the prompt waited (S-6, S-41): the
        // biometric half ends, never with a success.
        if let problem = state.biometryUnusable(uid, now: now) {
            if problem.code == .passcodeNotSet { return fail(context, ctx, eval, problem) }
            return endBiometricHalf(context, ctx, eval, .lockout, message: problem.message, checking: checking)
        }
        switch reading {
        case .match:
            emit(.biometricMatched(uid: uid, ctx: ctx, eval: eval))
            emit(.evaluationSucceeded(uid: uid, ctx: ctx, eval: eval, method: .biometric))
        case .retry(let message):
            emit(.biometricRetry(uid: uid, ctx: ctx, eval: eval, message: message))
            guard !checking else { return }
            var again = prompt
            again.message = message
            emit(.promptShown(uid: uid, ctx: ctx, eval: eval, prompt: again))
        case .error(let message):
            // No verdict, nothing counted (S-43); the passcode remains.
            endBiometricHalf(context, ctx, eval, .error, message: message, checking: checking)
        case .disconnect:
            emit(.biometricDisconnected(uid: uid, ctx: ctx, eval: eval))
            endBiometricHalf(context, ctx, eval, .disconnect, message: "The sensor is not available.", checking: checking)
        case .noMatch:
            // Recorded (durable before anything reveals it, S-40) and counted
            // for the user (S-1) and the evaluation (S-27) by its fold.
            emit(.biometricFailed(uid: uid, ctx: ctx, eval: eval))
            if state.user(uid).biometryLockedOut {
                return endBiometricHalf(context, ctx, eval, .lockout, message: "Biometry is locked out.", checking: checking)
            }
            let failures = state.contexts[ctx]?.evaluation?.biometricFailures ?? 0
            if failures >= rules.attemptsPerEvaluation {
                return endBiometricHalf(context, ctx, eval, .attempts, message: "Too many failed attempts.", checking: checking)
            }
            // While a passcode is checked the next prompt waits for its verdict.
            guard !checking else { return }
            emit(.promptShown(uid: uid, ctx: ctx, eval: eval, prompt: combinedPrompt(uid, failures: failures, message: "Try again.")))
        }
    }

    /// The biometric half ends (its fold stops the scan): the passcode half
    /// goes on as a passcode prompt that says why, or, while a passcode of
    /// it is checked, its verdict alone decides (S-28).
    mutating func endBiometricHalf(_ context: ContextState, _ ctx: ContextID, _ eval: EvaluationID, _ reason: HalfEnd,
                                   message: String, checking: Bool) {
        emit(.promptHalfEnded(uid: context.uid, ctx: ctx, eval: eval, half: .biometric, reason: reason, retryAfter: 0))
        if checking { return }
        enterPasscodePhase(context, ctx, eval, message: message)
    }

    /// The passcode half ends with `refusal` (a delay started, or an attempt
    /// was refused in one): the sensor goes on, its prompt saying until
    /// when. S-6's admin lock ends the evaluation (biometry is locked too).
    mutating func endPasscodeHalf(_ context: ContextState, _ ctx: ContextID, _ eval: EvaluationID, _ refusal: Failure) {
        if refusal.adminLocked || state.biometryUnusable(context.uid, now: now) != nil {
            return fail(context, ctx, eval, refusal)
        }
        let retryAfter = refusal.retryAfter ?? 0
        emit(.promptHalfEnded(uid: context.uid, ctx: ctx, eval: eval, half: .passcode, reason: .delay, retryAfter: retryAfter))
        let failures = state.contexts[ctx]?.evaluation?.biometricFailures ?? 0
        // S-27: the fallback option from the first failure on.
        let prompt = Prompt(kind: .biometric, attempt: failures + 1,
                            fallbackOffered: failures > 0 && context.effectiveFallbackTitle != nil,
                            message: refusal.message, retryAfter: retryAfter)
        emit(.promptShown(uid: context.uid, ctx: ctx, eval: eval, prompt: prompt))
    }

    /// A wrong passcode sent at a combined prompt whose sensor still scans
    /// (its rejection is folded: counted, and any delay it started is in
    /// the state): the combined prompt again, or the passcode half's end.
    mutating func combinedPasscodeWrong(_ context: ContextState, _ ctx: ContextID, _ eval: EvaluationID) {
        if let refusal = passcodeEntryRefusal(for: context) { return endPasscodeHalf(context, ctx, eval, refusal) }
        let failures = state.contexts[ctx]?.evaluation?.biometricFailures ?? 0
        emit(.promptShown(uid: context.uid, ctx: ctx, eval: eval,
                          prompt: combinedPrompt(context.uid, failures: failures, message: "Wrong passcode.")))
    }
}

extension Decision {
    /// S-63: the system is going to sleep (or woke up). Every evaluation
    /// whose sensor scans (a biometric or a combined prompt) ends with
    /// systemCancel: no reading arrived, so nothing is counted, and its
    /// end stops the scan and releases the reader.
    mutating func systemSleep(suspending: Bool, endScans: Bool) {
        emit(.systemSleep(suspending: suspending))
        guard suspending, endScans else { return }
        for ctx in state.prompting.sorted() {
            guard let context = state.contexts[ctx], let evaluation = context.evaluation, evaluation.isScanning else { continue }
            fail(context, ctx, evaluation.id, Failure(.systemCancel, message: "The system is going to sleep.", reason: "suspend"))
        }
    }
}
