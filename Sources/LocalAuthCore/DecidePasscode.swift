// The passcode phase (S-28) and passcode accounting (S-4..S-7, S-36). The
// check itself (yescrypt) runs outside the core; its verdict comes back as
// `passcodeChecked`, and counts even if the evaluation ended meanwhile, so
// cancelling right after submitting never buys a free guess.

extension Decision {
    mutating func submitPasscode(_ ctx: ContextID) throws {
        let (context, evaluation) = try running(ctx, "answer")
        guard case .passcode = evaluation.phase else {
            throw Rejection(.badState, "No passcode prompt is waiting.")
        }
        let user = state.user(context.uid)
        // The delay may have started elsewhere while the prompt waited; a
        // refused attempt does not count (S-5).
        if user.adminLocked || state.passcodeRetryAfter(context.uid, now: now) > 0 {
            return enterPasscodePhase(context, ctx, evaluation.id, passcodeFailures: user.passcodeFailures)
        }
        emit(.passcodeSubmitted(uid: context.uid, ctx: ctx, eval: evaluation.id))
    }

    /// Whether a passcode attempt for `uid` would be refused right now
    /// (delay or admin lock); the daemon asks before running a check.
    public func passcodeEntryRefusal(_ uid: UserID) -> Failure? {
        if state.user(uid).adminLocked {
            return Failure(.authenticationFailed, message: "Passcode entry is disabled.", reason: "admin-locked", adminLocked: true)
        }
        let seconds = state.passcodeRetryAfter(uid, now: now)
        guard seconds > 0 else { return nil }
        return Failure(.authenticationFailed, message: "Passcode entry is disabled.", retryAfter: seconds)
    }

    mutating func passcodeChecked(uid: UserID, ctx: ContextID?, eval: EvaluationID?, correct: Bool, repeated: Bool) {
        let user = state.user(uid)
        // The evaluation this verdict belongs to, if it still waits for it.
        var waiting: ContextState?
        if let ctx, let eval, let context = state.contexts[ctx], let evaluation = context.evaluation,
           evaluation.id == eval, evaluation.phase == .verifyingPasscode {
            waiting = context
        }

        // S-6: an admin lock reached while this attempt was being checked wins.
        if correct, user.adminLocked {
            if let context = waiting, let ctx, let eval {
                enterPasscodePhase(context, ctx, eval, passcodeFailures: user.passcodeFailures)
            }
            return
        }
        if correct {
            emit(.passcodeAccepted(uid: uid, ctx: ctx, eval: eval))
            if let context = waiting, let ctx, let eval {
                emit(.evaluationSucceeded(uid: context.uid, ctx: ctx, eval: eval, method: .passcode))
            }
            return
        }

        // S-7: the same wrong passcode twice in a row counts once.
        let counted = !repeated
        emit(.passcodeRejected(uid: uid, ctx: ctx, eval: eval, counted: counted))
        let failures = user.passcodeFailures + (counted ? 1 : 0)
        var retryAt = user.passcodeRetryAt
        var adminLocked = user.adminLocked
        if counted {
            if let delay = rules.passcodeDelay(afterFailures: failures) {
                retryAt = state.effectiveNow(now) + delay
            }
            if rules.maxPasscodeFailures > 0, failures >= rules.maxPasscodeFailures { adminLocked = true }
        }
        guard let context = waiting, let ctx, let eval else { return }
        enterPasscodePhase(context, ctx, eval, passcodeFailures: failures, retryAt: retryAt,
                           adminLocked: adminLocked, message: "Wrong passcode.")
    }
}

/// The passcode-attempt question asked by the daemon before it runs a check.
extension AuthState {
    public func passcodeEntryRefusal(_ uid: UserID, now: Int64) -> Failure? {
        Decision(state: self, now: now).passcodeEntryRefusal(uid)
    }
}
