// The passcode phase (S-28) and passcode accounting (S-4..S-7, S-36, S-46).
// The check itself (yescrypt) runs outside the core; its verdict comes back as
// `passcodeChecked`, and counts even if the evaluation ended meanwhile, so
// cancelling right after submitting never buys a free guess.
//
// S-46: an attempt is judged against the delay and the admin lock three
// times: when it is submitted, just before its check starts
// (`admitPasscodeAttempt`: the daemon runs at most one check per user, so an
// attempt may wait behind another), and when its verdict comes back. Refused
// at any of them, it is recorded as `passcode-refused`, counts nothing, and
// gets the same answer whatever it contained.

extension Decision {
    mutating func submitPasscode(_ ctx: ContextID, queueFull: Bool) throws {
        let context = try self.context(ctx)
        guard let evaluation = context.evaluation, evaluation.takesPasscode else {
            throw Rejection(.badState, "No passcode prompt is waiting.")
        }
        // The delay may have started elsewhere while the prompt waited; a
        // refused attempt does not count (S-5).
        if refusePasscode(uid: context.uid, ctx: ctx, eval: evaluation.id, requester: context.requester) { return }
        // S-47: no room for the check: the prompt stays, nothing counts.
        if queueFull { throw Rejection.passcodeQueueFull }
        emit(.passcodeSubmitted(uid: context.uid, ctx: ctx, eval: evaluation.id))
    }

    /// S-46: the daemon is about to run a check of `uid`'s passcode (for an
    /// evaluation, or nil/nil for set-passcode's old secret). No event means
    /// go ahead; `passcode-refused` means the check must not run.
    mutating func admitPasscodeAttempt(uid: UserID, ctx: ContextID?, eval: EvaluationID?) {
        _ = refusePasscode(uid: uid, ctx: ctx, eval: eval, requester: state.foreignRequester(ctx))
    }

    /// Records a refusal when entry is refused now, and answers it: the
    /// evaluation that waits for this attempt ends with it, and an attempt
    /// without an evaluation (set-passcode's) gets it as its answer.
    private mutating func refusePasscode(uid: UserID, ctx: ContextID?, eval: EvaluationID?, requester: UserID?) -> Bool {
        guard let refusal = passcodeEntryRefusal(uid, requester: requester) else { return false }
        emit(.passcodeRefused(uid: uid, ctx: ctx, eval: eval, retryAfter: refusal.retryAfter ?? 0))
        if let ctx, let eval, let context = state.contexts[ctx], let evaluation = context.evaluation,
           evaluation.id == eval, evaluation.isInPasscodePhase {
            fail(context, ctx, eval, refusal)
        } else if let ctx, let eval, let context = state.contexts[ctx], let evaluation = context.evaluation,
                  evaluation.id == eval, case .combined = evaluation.phase {
            // S-60: only the passcode half ends; the sensor goes on.
            endPasscodeHalf(context, ctx, eval, refusal)
        } else if ctx == nil {
            answer = refusal
        }
        return true
    }

    /// Whether a passcode attempt for `uid` would be refused right now
    /// (delay or admin lock), with the answer every such attempt gets.
    /// S-54: an attempt by `requester` (someone other than `uid`) is held
    /// to the subject's delay and lock and to the pair's own; the subject's
    /// own attempts (requester nil) to the subject's only.
    public func passcodeEntryRefusal(_ uid: UserID, requester: UserID? = nil) -> Failure? {
        if state.user(uid).adminLocked {
            return Failure(.authenticationFailed, message: "Passcode entry is disabled.", reason: "admin-locked", adminLocked: true)
        }
        var seconds = state.passcodeRetryAfter(uid, now: now)
        if let requester, requester != uid {
            if state.requesterAttempts[RequesterPair(subject: uid, requester: requester)]?.locked == true {
                return Failure(.authenticationFailed, message: "Too many wrong passwords for this user from your account: "
                               + "an administrator must reset the user (localauthctl reset).",
                               reason: "admin-locked", adminLocked: true)
            }
            seconds = max(seconds, state.requesterRetryAfter(subject: uid, requester: requester, now: now))
        }
        guard seconds > 0 else { return nil }
        return Failure(.authenticationFailed, message: "Passcode entry is disabled.", retryAfter: seconds)
    }

    /// The refusal for an attempt in `context` (its requester's, S-54).
    func passcodeEntryRefusal(for context: ContextState) -> Failure? {
        passcodeEntryRefusal(context.uid, requester: context.requester)
    }

    mutating func passcodeChecked(uid: UserID, ctx: ContextID?, eval: EvaluationID?, correct: Bool, repeated: Bool,
                                  requester: UserID? = nil) {
        let requester = requester == uid ? nil : requester
        // The evaluation this verdict belongs to, if it still waits for it.
        var waiting: ContextState?
        if let ctx, let eval, let context = state.contexts[ctx], let evaluation = context.evaluation,
           evaluation.id == eval, evaluation.awaitsVerdict {
            waiting = context
        }

        // S-46 (and S-6): a delay or an admin lock reached while this attempt
        // was being checked wins; the verdict is neither accepted nor counted.
        if refusePasscode(uid: uid, ctx: ctx, eval: eval, requester: requester) { return }
        if correct {
            emit(.passcodeAccepted(uid: uid, ctx: ctx, eval: eval))
            if let context = waiting, let ctx, let eval {
                emit(.evaluationSucceeded(uid: context.uid, ctx: ctx, eval: eval, method: .passcode))
            }
            return
        }

        // S-7: the same wrong passcode twice in a row counts once.
        emit(.passcodeRejected(uid: uid, ctx: ctx, eval: eval, counted: !repeated, requester: requester))
        // The state now holds this failure, and the delay or lock it started.
        if let context = waiting, let ctx, let eval {
            if case .combined? = state.contexts[ctx]?.evaluation?.phase {
                return combinedPasscodeWrong(context, ctx, eval)
            }
            return enterPasscodePhase(context, ctx, eval, message: "Wrong passcode.")
        }
        if ctx == nil { answer = wrongOldPasscode(uid) }
    }

    /// S-36: set-passcode's old secret was wrong; the answer says when the
    /// next attempt is allowed (a delay this failure started) or that it
    /// locked the user (S-6).
    private func wrongOldPasscode(_ uid: UserID) -> Failure {
        let retry = state.passcodeRetryAfter(uid, now: now)
        return Failure(.authenticationFailed, message: "The old passcode is wrong.", retryAfter: retry > 0 ? retry : nil,
                       adminLocked: state.user(uid).adminLocked)
    }
}

/// The passcode-attempt question asked by the daemon before it runs a check.
extension AuthState {
    public func passcodeEntryRefusal(_ uid: UserID, now: Int64, requester: UserID? = nil) -> Failure? {
        Decision(state: self, now: now, sink: nil).passcodeEntryRefusal(uid, requester: requester)
    }
}
