// What a routed evaluation's lines look like (PROTOCOL.md 1.3, S-66, S-67):
// the app hears `PROMPT kind=agent` once and then its final answer; the
// agent hears each prompt, with who asks as the kernel and logind say it
// (uid, pid, the pinned process's pidfs inode) and the app's own words
// (reason, titles) under their own keys, and `DONE` when it ends. Never the
// context id, nor anything the app says of itself. Called from `deliver`
// (Replies.swift) as the core's events happen; every line goes through
// `send`, so S-40's gate holds it like any other.
import LocalAuthCore
import LocalAuthProtocol

extension ServerCore {
    /// `prompts-routed`: a request opens for the agent, and the app is
    /// told that the system prompts.
    func promptsRouted(_ ctx: ContextID, _ route: AgentRoute) {
        _ = agents.open(ctx, session: route.session)
        guard let (connection, tag) = evaluationOwner(ctx) else { return }
        writer.bytes.removeAll(keepingCapacity: true)
        writer.beginResponse(tag: tag, status: .prompt)
        writer.append(key: "kind", value: "agent")
        writer.endLine()
        send(writer.bytes, to: connection)
    }

    /// A prompt of a routed evaluation, to its agent. `holdPrompt`: a
    /// prompt that scans waits for the reader like any (S-43).
    func sendAgentPrompt(_ destination: AgentTable.Destination, uid: UserID, ctx: ContextID, _ prompt: Prompt,
                         _ context: ContextState, _ evaluation: Evaluation) {
        writer.bytes.removeAll(keepingCapacity: true)
        writer.beginResponse(tag: destination.tag, status: .prompt)
        writer.append(key: "request", value: String(destination.request))
        writer.append(key: "kind", value: prompt.kind.rawValue)
        writer.append(key: "policy", value: evaluation.policy.wireName)
        let scans = prompt.kind != .passcode
        if scans {
            writer.append(key: "attempt", value: prompt.attempt)
            writer.append(key: "biometry", value: authenticator.state.rules.biometryType.wireName)
        }
        if prompt.kind != .biometric { writer.append(key: "attempts-left", value: prompt.attemptsLeft) }
        if prompt.retryAfter > 0 { writer.append(key: "retry-after", value: Int(prompt.retryAfter)) }
        if let message = prompt.message { writer.append(key: "message", value: message) }
        // Who asks: the context's connection as the kernel names it (S-67).
        if let owner = roster.owner(of: ctx) {
            let peer = peer(of: owner)
            writer.append(key: "app-uid", value: String(peer.uid))
            writer.append(key: "app-pid", value: String(peer.pid))
            if let process = parked.peerSessions.facts(owner)?.process { writer.append(key: "app-process", value: String(process)) }
        }
        // The app's words.
        writer.append(key: "reason", value: evaluation.reason)
        writer.append(key: "cancel", value: context.effectiveCancelTitle)
        if prompt.kind == .biometric, prompt.fallbackOffered, let fallback = context.effectiveFallbackTitle {
            writer.append(key: "fallback", value: fallback)
        }
        writer.endLine()
        if scans, sensor.hold(uid, writer.bytes, for: destination.connection) { return }
        send(writer.bytes, to: destination.connection)
    }

    /// `TAG DONE request=N result=R`: the routed evaluation ended.
    func sendAgentDone(_ destination: AgentTable.Destination, result: String) {
        writer.bytes.removeAll(keepingCapacity: true)
        writer.beginResponse(tag: destination.tag, status: .done)
        writer.append(key: "request", value: String(destination.request))
        writer.append(key: "result", value: result)
        writer.endLine()
        send(writer.bytes, to: destination.connection)
    }

    /// The log failed (fail closed): every open request ends, `unavailable`.
    func endAgentRequestsForFailure() {
        for destination in agents.closeAll() { sendAgentDone(destination, result: "unavailable") }
    }
}
