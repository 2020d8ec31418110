// Session agents on the wire (SEMANTICS §12): `register-agent` (S-65),
// which agent an evaluation's prompts go to (S-66), and who may answer
// them (S-68): an agent by its request number, never the app whose
// evaluation it is. Who is an agent is the AgentTable's; which session a
// connection's process is in, the PeerSessions' (logind's answer); the
// rules and records, the core's. What the agent is sent is
// AgentPrompts.swift.
import LocalAuthCore
import LocalAuthProtocol

extension ServerCore {
    func registerAgent(_ request: Request, _ connection: Connection.ID) {
        if let agent = agents.agent(on: connection) {
            return reply(connection, request.tag, ProtocolError(.badState,
                "This connection is already the agent of session \(agent.session)."))
        }
        var named: String?
        if let text = request.arguments.value(for: "session") {
            guard AgentRoute.isValidSession(text) else {
                return reply(connection, request.tag, ProtocolError(.badArgument,
                    "session= must be a logind session id (letters, digits, _ and -)."))
            }
            named = text
        }
        guard let facts = peerSession(request, connection) else { return }  // runs again once logind answered
        let peer = peer(of: connection)
        var session: String?
        var refusal: (reason: AgentRefusal.Reason, message: String)?
        switch facts.session {
        case .unavailable(let why):
            return reply(connection, request.tag, ProtocolError(.unavailable,
                "Cannot tell which session this process belongs to: \(why)"))
        case .none:
            refusal = (.noSession, "This process belongs to no logind session; an agent registers for the session it runs in.")
        case .session(let id, let owner, _, _):
            session = id
            if let named, named != id {
                refusal = (.notInSession, "This process belongs to session \(id), not to session \(named).")
            } else if owner != peer.uid {
                refusal = (.notSessionOwner, "Session \(id) belongs to uid \(owner): an agent answers only for its own user's session.")
            } else if agents.agent(ofSession: id) != nil {
                refusal = (.sessionHasAgent, "Session \(id) has an agent already; only one agent per session.")
            }
        }
        // S-48: recorded whether it is refused or not.
        if let budget = loggedRequestRefusal(connection, events: 1) { return reply(connection, request.tag, budget) }
        if let refusal {
            counters.permissionDenied += 1
            let record = AgentRefusal(uid: peer.uid, pid: peer.pid, request: .registerAgent, reason: refusal.reason,
                                      session: named ?? session)
            let outcome = run(.refuseAgent(record), connection: connection, tag: request.tag, now: now)
            guard events(outcome, connection, request.tag) != nil else { return }
            return reply(connection, request.tag, ProtocolError(.permissionDenied, refusal.message))
        }
        guard let session else { return }
        let outcome = run(.registerAgent(uid: peer.uid, session: session, pid: peer.pid),
                          connection: connection, tag: request.tag, now: now)
        guard events(outcome, connection, request.tag) != nil else { return }
        _ = agents.register(connection: connection, tag: request.tag, uid: peer.uid, pid: peer.pid, session: session)
        replyOK(connection, request.tag, [("session", session), ("uid", String(peer.uid))])
    }

    /// What logind said of the connection's process; nil when `request` now
    /// waits for the answer (its connection parked; it is dispatched again
    /// once the answer is in, PeerSessions.swift).
    func peerSession(_ request: Request, _ connection: Connection.ID) -> PeerSession? {
        if let known = parked.peerSessions.facts(connection) { return known }
        // A clean stop answers what waits and parks nothing more.
        if isStopping { return PeerSession(session: .unavailable("The daemon is stopping."), process: nil) }
        let waiter = ParkedRequest(connection: connection, request: request, stamp: parked.lineStamp)
        switch parked.peerSessions.need(connection, waiter: waiter, now: turn.monotonic) {
        case .known(let facts):
            return facts
        case .wait:
            pauseReading(connection)
        case .ask:
            pauseReading(connection)
            let peer = peer(of: connection)
            actions.append(.lookUpSession(connection, pid: peer.pid, uid: peer.uid))
        }
        return nil
    }

    /// The shell's answer to `.lookUpSession`: the requests that waited run
    /// again at the end of this turn.
    package func sessionLookedUp(_ id: Connection.ID, _ facts: PeerSession) {
        parked.letGo(parked.peerSessions.answered(id, facts))
    }

    /// At the timer (its deadline): a lookup logind never answered ends as unavailable.
    func expireSessionLookups() {
        guard parked.peerSessions.isAsking else { return }
        parked.letGo(parked.peerSessions.expire(now: turn.monotonic))
    }

    /// Where the prompts of an evaluation that `request` starts on `ctx` go.
    enum AgentRouting {
        /// nil: to the client, as without agents.
        case route(AgentRoute?)
        /// The request waits for logind's answer (it runs again).
        case parked
    }

    /// S-66: the session's agent when the context asked for it, its
    /// connection's process is in a session of the context's user, and
    /// that session has an agent; otherwise none (the client prompts).
    /// Nothing is asked of logind while no agent is registered at all.
    func agentRouting(for ctx: ContextID, _ request: Request, _ connection: Connection.ID) -> AgentRouting {
        guard !agents.isEmpty, let context = authenticator.state.contexts[ctx], context.prompt == .agent,
              context.isOpen, context.evaluation == nil else { return .route(nil) }
        guard let facts = peerSession(request, connection) else { return .parked }
        guard case .session(let id, let owner, _, _) = facts.session, owner == context.uid,
              let agent = agents.agent(ofSession: id) else { return .route(nil) }
        // S-68: an agent is a trusted input path for a login password, unless ClientPrompts=no.
        let passcodePrompts = !(passcodes is ShadowPasscodes) || configuration.passcode.clientPrompts != .no
        return .route(AgentRoute(session: id, agentPID: agent.pid, passcodePrompts: passcodePrompts))
    }

    /// Who answers a prompt with `passcode`, `fallback` or `cancel` (S-68).
    enum Answerer {
        /// The client, for its own context (`ctx=`).
        case client(ContextID)
        /// A session agent, for the routed evaluation of its request (`request=`).
        case agent(ContextID)
        /// The client, for a context whose prompts its session's agent shows: refused.
        case refusedClient(ContextID, EvaluationID)
    }

    /// The context a `passcode`, `fallback` or `cancel` answers, and who
    /// answers it; nil after replying with the error (exactly one of `ctx=`
    /// and `request=`; a request of this agent that is open).
    func answerer(_ request: Request, _ connection: Connection.ID) -> Answerer? {
        guard let number = request.arguments.value(for: "request") else {
            guard let ctx = ownedContext(request, connection) else { return nil }
            if let evaluation = authenticator.state.contexts[ctx]?.evaluation, evaluation.route != nil {
                return .refusedClient(ctx, evaluation.id)
            }
            return .client(ctx)
        }
        guard request.arguments.value(for: "ctx") == nil else {
            reply(connection, request.tag, ProtocolError(.badArgument, "Give ctx= or request=, not both."))
            return nil
        }
        guard let parsed = UInt64(number), String(parsed) == number,
              let ctx = agents.context(ofRequest: parsed, on: connection) else {
            reply(connection, request.tag, ProtocolError(.unknownRequest,
                "No open request \(number) on this connection (it ended, or was never this agent's)."))
            return nil
        }
        return .agent(ctx)
    }

    /// The refusal a client hears for answering its session agent's prompt.
    var promptsBelongToAgent: ProtocolError {
        ProtocolError(.permissionDenied, "The system's authentication agent shows this evaluation's prompts; only it "
            + "answers them. invalidate ends the evaluation (appCancel).")
    }

    /// S-68: a client's `passcode` for a context its agent prompts for:
    /// recorded (within its S-48 budget), refused, its secret never checked.
    func refuseClientPasscode(_ ctx: ContextID, _ eval: EvaluationID, _ request: Request, _ connection: Connection.ID) {
        counters.permissionDenied += 1
        if let budget = loggedRequestRefusal(connection, events: 1) { return reply(connection, request.tag, budget) }
        let peer = peer(of: connection)
        let record = AgentRefusal(uid: peer.uid, pid: peer.pid, request: .passcode, reason: .promptsBelongToAgent,
                                  session: authenticator.state.contexts[ctx]?.evaluation?.route?.session, ctx: ctx, eval: eval)
        let outcome = run(.refuseAgent(record), connection: connection, tag: request.tag, now: now)
        guard events(outcome, connection, request.tag) != nil else { return }
        reply(connection, request.tag, promptsBelongToAgent)
    }

    /// The connection stops being an agent (it closes): the evaluations it
    /// prompted for end with systemCancel, agent-gone (S-68).
    func endAgent(of id: Connection.ID) {
        guard let (agent, routed) = agents.remove(id) else { return }
        run(.unregisterAgent(uid: agent.uid, session: agent.session, pid: agent.pid, reason: .disconnect, routed: routed),
            connection: nil, tag: nil, now: now)
    }

    /// A clean stop ends every registration; the evaluations are ended by
    /// the stop itself (S-32), and their agents told so (`DONE`).
    func unregisterAgentsForShutdown() {
        for agent in agents.all {
            run(.unregisterAgent(uid: agent.uid, session: agent.session, pid: agent.pid, reason: .shutdown, routed: []),
                connection: nil, tag: nil, now: now)
        }
    }
}
