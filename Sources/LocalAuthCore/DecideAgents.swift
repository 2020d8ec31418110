// Session agents' rules in the core (S-65, S-68): registrations and
// refusals are recorded as they happen (the server's agent table judged
// them against logind's answers), and an agent's going away ends the
// evaluations it was prompting for. Routing itself is part of `evaluate`
// (DecideEvaluate.swift: `prompts-routed` just before the first prompt).

extension Decision {
    mutating func registerAgent(uid: UserID, session: String, pid: ProcessID) throws {
        guard AgentRoute.isValidSession(session) else { throw Rejection(.badArgument, "Not a logind session id.") }
        emit(.agentRegistered(uid: uid, session: session, pid: pid))
    }

    /// S-68: the agent of `session` is gone. At a disconnect, each routed
    /// evaluation it still prompts for ends with systemCancel (agent-gone);
    /// nothing else is recorded or counted (no reading, no passcode came).
    /// At a clean stop, `stop` ends them with S-32's answer instead.
    mutating func unregisterAgent(uid: UserID, session: String, pid: ProcessID, reason: AgentUnregistration,
                                  routed: [ContextID]) throws {
        guard AgentRoute.isValidSession(session) else { throw Rejection(.badArgument, "Not a logind session id.") }
        emit(.agentUnregistered(uid: uid, session: session, pid: pid, reason: reason))
        guard reason == .disconnect else { return }
        for ctx in routed.sorted() {
            guard let context = state.contexts[ctx], let evaluation = context.evaluation,
                  let route = evaluation.route, route.session == session, route.agentPID == pid else { continue }
            fail(context, ctx, evaluation.id, Failure(.systemCancel, message: "The authentication agent went away.",
                                                      reason: "agent-gone"))
        }
    }

    mutating func refuseAgent(_ refusal: AgentRefusal) throws {
        if let session = refusal.session, !AgentRoute.isValidSession(session) {
            throw Rejection(.badArgument, "Not a logind session id.")
        }
        emit(.agentRefused(refusal))
    }
}
