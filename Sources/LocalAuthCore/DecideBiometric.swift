// The biometric phase (S-27) and the sensor rules (S-1..S-3, S-34): readings
// go to the evaluation that holds the user's biometric prompt.

extension Decision {
    mutating func sensor(uid: UserID, reading: SensorReading) throws {
        guard let ctx = state.user(uid).promptHolder, let context = state.contexts[ctx],
              let evaluation = context.evaluation, evaluation.isScanning else {
            throw Rejection(.badState, "User \(uid) has no biometric prompt waiting.")
        }
        guard case .biometric(let prompt) = evaluation.phase else {
            return combinedSensor(uid: uid, context, ctx, evaluation, reading: reading)
        }
        let eval = evaluation.id
        let biometricOnly = evaluation.policy != .owner

        // A lock that arrived while the prompt waited (S-6 via set-passcode,
        // S-41): a locked-out user never gets a biometric success.
        if let problem = state.biometryUnusable(uid, now: now) {
            if biometricOnly || problem.code == .passcodeNotSet { return fail(context, ctx, eval, problem) }
            return enterPasscodePhase(context, ctx, eval)
        }

        switch reading {
        case .match:
            emit(.biometricMatched(uid: uid, ctx: ctx, eval: eval))
            emit(.evaluationSucceeded(uid: uid, ctx: ctx, eval: eval, method: .biometric))
        case .retry(let message):
            emit(.biometricRetry(uid: uid, ctx: ctx, eval: eval, message: message))
            var again = prompt
            again.message = message
            emit(.promptShown(uid: uid, ctx: ctx, eval: eval, prompt: again))
        case .error(let message):
            // No verdict: nothing is counted, the prompt ends (S-43).
            return fail(context, ctx, eval, Failure(.systemCancel, message: message))
        case .disconnect:
            emit(.biometricDisconnected(uid: uid, ctx: ctx, eval: eval))
            if biometricOnly { return fail(context, ctx, eval, Failure(.biometryDisconnected)) }
            enterPasscodePhase(context, ctx, eval)
        case .noMatch:
            emit(.biometricFailed(uid: uid, ctx: ctx, eval: eval))
            // The state now counts this failure, for the user (S-1) and the
            // evaluation (S-27).
            if state.user(uid).biometryLockedOut {
                // S-2: this failure locked biometry out.
                if biometricOnly { return fail(context, ctx, eval, Failure(.biometryLockout)) }
                return enterPasscodePhase(context, ctx, eval)
            }
            let evaluationFailures = state.contexts[ctx]?.evaluation?.biometricFailures ?? 0
            if evaluationFailures >= rules.attemptsPerEvaluation {
                if biometricOnly {
                    return fail(context, ctx, eval, Failure(.authenticationFailed, message: "Application retry limit exceeded."))
                }
                return enterPasscodePhase(context, ctx, eval)
            }
            // The fallback option is offered from the first failure on.
            // S-60: a passcode half that ended (a delay) stays said.
            let next = Prompt(kind: .biometric, attempt: evaluationFailures + 1,
                              fallbackOffered: context.effectiveFallbackTitle != nil, message: "Try again.",
                              retryAfter: prompt.retryAfter > 0 ? state.passcodeRetryAfter(uid, now: now) : 0)
            emit(.promptShown(uid: uid, ctx: ctx, eval: eval, prompt: next))
        }
    }

    /// S-27: choosing the fallback; only while a biometric prompt offers it.
    mutating func fallback(_ ctx: ContextID) throws {
        let (context, evaluation) = try running(ctx, "fall back from")
        guard case .biometric(let prompt) = evaluation.phase, prompt.fallbackOffered else {
            throw Rejection(.badState, "No biometric prompt offering fallback is waiting.")
        }
        emit(.fallbackChosen(uid: context.uid, ctx: ctx, eval: evaluation.id))
        if evaluation.policy != .owner {
            return fail(context, ctx, evaluation.id, Failure(.userFallback))
        }
        enterPasscodePhase(context, ctx, evaluation.id)
    }
}
