// evaluate and the answers to its prompts: fallback, passcode, cancel
// (SEMANTICS §6). The evaluation's own replies (PROMPT, OK, ERR) carry the
// evaluate request's tag and are sent by `deliver` as events happen.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension Server {
    func evaluate(_ request: Request, _ connection: Connection) {
        guard let ctx = ownedContext(request, connection), let policy = policy(request, connection) else { return }
        // S-43: before anything is counted (S-48), so that the request runs once when it is let go.
        if !sensorIsSimulated, parkedForEnrollment(request, ctx: ctx, policy: policy, connection) { return }
        // S-21: a missing reason is bad-argument (Apple raises), like an empty one.
        let reason = request.arguments.value(for: "reason") ?? ""
        if let refusal = checkValueCap(reason, key: "reason") ?? loggedRequestRefusal(connection, events: 1) {
            return reply(connection, request.tag, refusal)
        }
        let previousTag = connection.evaluationTags[ctx]
        if previousTag == nil { connection.evaluationTags[ctx] = request.tag }
        let outcome = run(.evaluate(ctx: ctx, policy: policy, reason: reason), connection: connection, tag: request.tag, now: now)
        if events(outcome, connection, request.tag) == nil, previousTag == nil {
            connection.evaluationTags[ctx] = nil
        }
    }

    func fallback(_ request: Request, _ connection: Connection) {
        guard let ctx = ownedContext(request, connection) else { return }
        answer(.fallback(ctx: ctx), request, connection)
    }

    func cancel(_ request: Request, _ connection: Connection) {
        guard let ctx = ownedContext(request, connection) else { return }
        answer(.cancel(ctx: ctx), request, connection)
    }

    /// Replies OK before delivering the evaluation's events, so the answer
    /// to `fallback`/`cancel` precedes the PROMPT or final reply it causes.
    private func answer(_ command: Command, _ request: Request, _ connection: Connection) {
        switch decide(command, authenticator.state, now: now) {
        case .failure(let rejection):
            return reply(connection, request.tag, rejection)
        case .success:
            replyOK(connection, request.tag)
            _ = events(run(command, connection: connection, tag: request.tag, now: now), connection, request.tag)
        }
    }

    func passcode(_ request: Request, _ connection: Connection) {
        secretSeen = true
        guard let ctx = ownedContext(request, connection) else { return }
        guard let secret = request.arguments.value(for: "secret") else {
            return reply(connection, request.tag, ProtocolError(.missingArgument, "secret= is required."))
        }
        if let error = Server.passcodeLengthError(secret, key: "secret") { return reply(connection, request.tag, error) }
        // S-48: a submission records its attempt, its verdict and the next
        // prompt; the same wrong passcode again counts once (S-7), so only the
        // budget bounds how often it can be sent. Refused, the prompt stays.
        if let refusal = loggedRequestRefusal(connection, events: 3) { return reply(connection, request.tag, refusal) }
        let current = now
        guard case .success(let planned) = decide(.submitPasscode(ctx: ctx), authenticator.state, now: current) else {
            return reply(connection, request.tag, ProtocolError(.badState, "No passcode prompt is waiting."))
        }
        // S-47: the subject's queue is full: the prompt stays, nothing counts.
        if let submitted = planned.last, case .passcodeSubmitted(let uid, _, _) = submitted.body,
           !passcodeQueue.hasRoom(for: uid) {
            counters.passcodeBusy += 1
            return reply(connection, request.tag, Server.passcodeQueueFull)
        }
        replyOK(connection, request.tag)
        let outcome = run(.submitPasscode(ctx: ctx), connection: connection, tag: request.tag, now: current)
        guard case .events = outcome else { return }
        // A refusal (a delay or lock, S-46) ended the evaluation: no check.
        guard let submitted = planned.last, case .passcodeSubmitted(let uid, _, let eval) = submitted.body else {
            counters.passcodeRefused += 1
            return
        }
        queuePasscodeJob(.evaluation(uid: uid, ctx: ctx, eval: eval), uid: uid, secret: SecretBytes(secret), nil, nil)
    }
}
