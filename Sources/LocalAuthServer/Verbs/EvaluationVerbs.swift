// evaluate and the answers to its prompts: fallback, passcode, cancel
// (SEMANTICS §6). The evaluation's own replies (PROMPT, OK, ERR) carry the
// evaluate request's tag and are sent by `deliver` as events happen.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension ServerCore {
    func evaluate(_ request: Request, _ connection: Connection.ID) {
        guard let ctx = ownedContext(request, connection), let policy = policy(request, connection),
              var asked = evaluationRequest(request, connection) else { return }
        // S-43: before anything is counted (S-48), so that the request runs once when it is let go.
        if !sensor.isSimulated, parkedForEnrollment(request, ctx: ctx, policy: policy, connection) { return }
        // S-61..S-63: so is the wait for logind's word on where the client is.
        if parkedForWhereabouts(request, ctx: ctx, policy: policy, connection) { return }
        if policy.dependsOnFingers { asked.options.biometryBlocked = biometryBlock(ctx, connection) }
        // S-66: the session's agent, when the context asked for it (may wait for logind).
        var options = asked.options
        switch agentRouting(for: ctx, request, connection) {
        case .parked: return
        case .route(let route): options.route = route
        }
        // S-21: a missing reason is bad-argument (Apple raises), like an empty one.
        let reason = request.arguments.value(for: "reason") ?? ""
        if let refusal = checkValueCap(reason, key: "reason") ?? onBehalfRefusal(ctx, events: 1)
            ?? loggedRequestRefusal(connection, events: 1) {
            return reply(connection, request.tag, refusal)
        }
        let previousTag = connections[connection]?.evaluationTags[ctx]
        if previousTag == nil { connections[connection]?.evaluationTags[ctx] = request.tag }
        if previousTag == nil, asked.notice { connections[connection]?.notices.insert(ctx) }
        let outcome = run(.evaluate(ctx: ctx, policy: policy, reason: reason, options: options),
                          connection: connection, tag: request.tag, now: now)
        if events(outcome, connection, request.tag) == nil, previousTag == nil {
            connections[connection]?.evaluationTags[ctx] = nil
            connections[connection]?.notices.remove(ctx)
        }
    }

    func fallback(_ request: Request, _ connection: Connection.ID) {
        guard let ctx = answeredContext(request, connection) else { return }
        answer(.fallback(ctx: ctx), request, connection)
    }

    func cancel(_ request: Request, _ connection: Connection.ID) {
        guard let ctx = answeredContext(request, connection) else { return }
        answer(.cancel(ctx: ctx), request, connection)
    }

    /// The context a `fallback` or `cancel` answers: the client's own, or
    /// an agent's request's (S-68); a client may not answer its agent's prompt.
    private func answeredContext(_ request: Request, _ connection: Connection.ID) -> ContextID? {
        switch answerer(request, connection) {
        case nil: return nil
        case .client(let ctx)?, .agent(let ctx)?: return ctx
        case .refusedClient?:
            counters.permissionDenied += 1
            reply(connection, request.tag, promptsBelongToAgent)
            return nil
        }
    }

    /// Replies OK before delivering the evaluation's events, so the answer
    /// to `fallback`/`cancel` precedes the PROMPT or final reply it causes.
    /// (Their events are never durable-before-reply: the OK waits for
    /// nothing the command recorded.)
    private func answer(_ command: Command, _ request: Request, _ connection: Connection.ID) {
        let outcome = authenticator.execute(command, now: now)
        guard events(outcome, connection, request.tag) != nil else { return }
        replyOK(connection, request.tag)
        deliver(outcome)
    }

    func passcode(_ request: Request, _ connection: Connection.ID) {
        secretSeen = true
        let ctx: ContextID
        switch answerer(request, connection) {
        case nil: return
        case .client(let own)?, .agent(let own)?: ctx = own
        case .refusedClient(let routed, let eval)?:
            // S-68: recorded and refused; the secret is dropped (wiped) unchecked.
            return refuseClientPasscode(routed, eval, request, connection)
        }
        // S-50: the secret as the scanner decoded it, in wipeable bytes.
        let secret = request.secret("secret")
        if let problem = judged(secret, { PasscodeSecret.refusal(ofAttempt: $0) }) {
            return reply(connection, request.tag, problem)
        }
        guard let secret else { return }  // refused above as missing
        // S-48: a submission records its attempt, its verdict and the next
        // prompt; the same wrong passcode again counts once (S-7), so only the
        // budget bounds how often it can be sent. Refused, the prompt stays.
        if let refusal = onBehalfRefusal(ctx, events: 3) ?? loggedRequestRefusal(connection, events: 3) {
            return reply(connection, request.tag, refusal)
        }
        // S-47: whether the asker's queue has room is the core's input
        // (S-53: its principal's, not its subject's).
        let subject = authenticator.state.contexts[ctx]?.uid
        let queueFull = subject.map { subject in
            let (principal, unlimited) = passcodeQueueKey(connection, subject: subject)
            return !passcodeJobs.hasRoom(for: principal, unlimited: unlimited)
        } ?? false
        let outcome = authenticator.execute(.submitPasscode(ctx: ctx, queueFull: queueFull), now: now)
        if case .rejected(Rejection.passcodeQueueFull) = outcome { counters.passcodeBusy += 1 }
        guard let events = events(outcome, connection, request.tag) else { return }
        // The OK precedes the final answer a refusal causes (S-46).
        replyOK(connection, request.tag)
        deliver(outcome)
        // A refusal (a delay or lock, S-46) ended the evaluation: no check.
        guard let submitted = events.last, case .passcodeSubmitted(let uid, _, let eval) = submitted.body else {
            counters.passcodeRefused += 1
            return
        }
        queuePasscodeJob(.evaluation(uid: uid, ctx: ctx, eval: eval, requester: authenticator.state.foreignRequester(ctx)), uid: uid, secret: secret, requester: connection, nil, nil)
    }
}
