// evaluate (SEMANTICS §6, S-21..S-26) and the shared prompt rules: a prompt
// is one per user (S-30), and needs interaction (S-26).

extension Decision {
    mutating func evaluate(_ ctx: ContextID, policy: Policy, reason: String, options: EvaluationOptions = EvaluationOptions()) throws {
        let context = try self.context(ctx)
        // S-21 and S-18 step 2: protocol errors, no evaluation starts.
        guard !reason.isEmpty else { throw Rejection(.badArgument, "A non-empty reason is required.") }
        guard policy != .wrist || !context.isOpen else { throw Rejection(.badArgument, "Policy 5 (wrist detection) is not supported.") }
        // S-22: one evaluation per context at a time.
        guard context.evaluation == nil else {
            throw Rejection(.busy, "An evaluation is already running on this context.")
        }
        let eval = context.lastEvaluation &+ 1
        let uid = context.uid
        emit(.evaluationStarted(uid: uid, ctx: ctx, eval: eval, policy: policy, reason: reason))
        // S-66: routed at its first prompt, if it reaches one.
        if let route = options.route { pendingRoute = (ctx, eval, route) }

        if !context.isOpen { return fail(context, ctx, eval, Failure(.invalidContext)) }
        if policy == .companion { return fail(context, ctx, eval, Failure(.companionNotAvailable)) }
        let biometricOnly = policy == .biometrics || policy == .biometricsOrCompanion

        // S-23: a success on this context that satisfies the policy.
        if context.succeededBiometric || (!biometricOnly && context.succeededPasscode) {
            return emit(.evaluationSucceeded(uid: uid, ctx: ctx, eval: eval, method: .cached))
        }
        // S-24: a recent biometric device unlock, unless biometry has since
        // been locked (a careful reading: a lockout after the unlock wins).
        if reuseWindowApplies(context) {
            return emit(.evaluationSucceeded(uid: uid, ctx: ctx, eval: eval, method: .reuse))
        }

        // S-25: the checks of S-18, with the same errors; where the client
        // is (S-61..S-63) stands with "no sensor", first of step 3.
        let blocked = rules.biometryType == .none ? nil : options.biometryBlocked
        let biometryProblem = blocked?.failure ?? state.biometryUnusable(uid, now: now)
        if biometricOnly {
            if let problem = biometryProblem { return fail(context, ctx, eval, problem) }
        } else if !state.user(uid).passcodeSet {
            return fail(context, ctx, eval, Failure(.passcodeNotSet))
        }
        if biometryProblem == nil {
            guard !context.interactionNotAllowed else { return fail(context, ctx, eval, Failure(.notInteractive)) }
            // S-60: touch or type, where the passcode may be typed here.
            // A routed evaluation shows it too: the agent reads the finger
            // and takes the password together (S-66).
            let passcodeMayBeTyped = context.passcodePrompts || options.route?.passcodePrompts == true
            if options.combined || options.route != nil, policy == .owner, passcodeMayBeTyped {
                return showFirstCombinedPrompt(context, ctx, eval)
            }
            let prompt = Prompt(kind: .biometric, attempt: 1, fallbackOffered: false)
            showPrompt(context, ctx, eval, prompt)
        } else {
            if let blocked {
                emit(.biometrySkipped(uid: uid, ctx: ctx, eval: eval, reason: blocked.reason, detail: blocked.detail))
            }
            enterPasscodePhase(context, ctx, eval)
        }
    }

    func reuseWindowApplies(_ context: ContextState) -> Bool {
        guard context.reuseDuration > 0 else { return false }
        let user = state.user(context.uid)
        guard let unlock = user.lastDeviceUnlock, !user.biometryLockedOut, !user.adminLocked else { return false }
        let window = min(context.reuseDuration, AuthLimits.maximumReuseDuration) * Timestamp.second
        return state.effectiveNow(now) - unlock <= window
    }

    /// Shows a prompt, first ending any other evaluation of the same user
    /// that holds the prompt (S-30). S-54: an evaluation asked for by
    /// another user (a requester) never ends one: it ends itself instead.
    mutating func showPrompt(_ context: ContextState, _ ctx: ContextID, _ eval: EvaluationID, _ prompt: Prompt) {
        // An evaluation this decision already ended no longer holds it.
        if let holder = state.user(context.uid).promptHolder, holder != ctx,
           let other = state.contexts[holder], let otherEval = other.evaluation {
            if context.requester != nil { return fail(context, ctx, eval, promptHeld) }
            fail(other, holder, otherEval.id, preempted)
        }
        if let pending = pendingRoute, pending.ctx == ctx, pending.eval == eval {
            pendingRoute = nil
            emit(.promptsRouted(uid: context.uid, ctx: ctx, eval: eval, route: pending.route))
        }
        emit(.promptShown(uid: context.uid, ctx: ctx, eval: eval, prompt: prompt))
    }

    /// S-54: the answer of another user's evaluation that found the
    /// subject's prompt taken (a PAM module answers it PAM_AUTH_ERR).
    private var promptHeld: Failure {
        Failure(.systemCancel, message: "Another authentication of this user is running; try again later.",
                reason: "prompt-held")
    }

    private var preempted: Failure {
        Failure(.systemCancel, message: "Another authentication started.", reason: "preempted")
    }

    /// S-28's entry: refused during a delay or an admin lock (one the
    /// decision's own failure started included: the state already holds
    /// it), else a passcode prompt with the attempts left.
    mutating func enterPasscodePhase(_ context: ContextState, _ ctx: ContextID, _ eval: EvaluationID,
                                     message: String? = nil) {
        if let refusal = passcodeEntryRefusal(for: context) { return fail(context, ctx, eval, refusal) }
        guard !context.interactionNotAllowed else { return fail(context, ctx, eval, Failure(.notInteractive)) }
        // S-44: a login password is typed only into the PAM conversation,
        // or into the session's agent unless ClientPrompts=no (S-68).
        guard context.passcodePrompts || route(ctx, eval)?.passcodePrompts == true else {
            return fail(context, ctx, eval, Failure(.notInteractive,
                message: "The login password can only be entered through the system's login prompt (PAM)."))
        }
        let left = context.requester.map { state.requesterAttemptsLeft(subject: context.uid, requester: $0) }
            ?? state.passcodeAttemptsLeft(context.uid)
        showPrompt(context, ctx, eval, Prompt(kind: .passcode, attemptsLeft: left, message: message))
    }

    /// The agent route of evaluation `eval` of `ctx`: recorded, or to be
    /// recorded at its first prompt in this decision (S-66).
    func route(_ ctx: ContextID, _ eval: EvaluationID) -> AgentRoute? {
        if let pending = pendingRoute, pending.ctx == ctx, pending.eval == eval { return pending.route }
        guard let evaluation = state.contexts[ctx]?.evaluation, evaluation.id == eval else { return nil }
        return evaluation.route
    }

    /// S-29: userCancel at any prompt.
    mutating func cancel(_ ctx: ContextID) throws {
        let (context, evaluation) = try running(ctx, "cancel")
        fail(context, ctx, evaluation.id, Failure(.userCancel))
    }

    /// S-31: prompts unanswered for PromptTimeoutSec end with systemCancel.
    mutating func expirePrompts() {
        let effective = state.effectiveNow(now)
        for ctx in state.prompting.sorted() {
            guard let context = state.contexts[ctx], let evaluation = context.evaluation, evaluation.isAtPrompt,
                  evaluation.promptedAt + rules.promptTimeout <= effective else { continue }
            fail(context, ctx, evaluation.id, Failure(.systemCancel, message: "Prompt timed out.", reason: "timeout"))
        }
    }
}
