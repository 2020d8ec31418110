// Turning the core's events into wire messages (PROTOCOL.md §Prompts and
// §Errors). Prompts and final answers of an evaluation carry the tag of its
// `evaluate` request and go to the connection that owns the context.
import LocalAuthCore
import LocalAuthProtocol

extension ServerCore {
    /// Runs a command and delivers what its events mean to their owners.
    @discardableResult
    func run(_ command: Command, connection: Connection.ID?, tag: String?, now: Int64) -> Authenticator.Outcome {
        let outcome = authenticator.execute(command, now: now)
        deliver(outcome)
        return outcome
    }

    /// Delivers the events of an executed command. A verb whose own reply
    /// must precede the evaluation's lines (`fallback`, `cancel`,
    /// `passcode`) sends it between `execute` and this.
    func deliver(_ outcome: Authenticator.Outcome) {
        let events: [Event]
        switch outcome {
        case .events(let decided), .answered(let decided, _): events = decided
        case .rejected, .unavailable: return
        }
        // The events were appended in order and end at lastSeq.
        let firstSeq = authenticator.recorder.lastSeq &- UInt64(events.count) &+ 1
        for (offset, event) in events.enumerated() { deliver(event, seq: firstSeq &+ UInt64(offset)) }
        for event in events {
            // policy-checked (can-evaluate, the hot path) never changes
            // a prompt holder or an evaluation's phase: nothing to tell.
            if case .policyChecked = event.body { continue }
            if let uid = event.body.uid, event.body.ctx != nil { updateScan(uid) }
        }
    }

    /// Sends the PROMPT lines and final answers that an event carries.
    func deliver(_ event: Event, seq: UInt64 = 0) {
        // S-7: a new passcode or a reset starts the repeat memory afresh.
        passcodeJobs.fold(event.body)
        // The journal's trail first (an evaluation's end before its answer).
        authenticator.read { state in
            trail.note(event, seq: seq, in: state) { entry, afterDurable in
                afterDurable ? journalAfterDurable(entry) : actions.append(.journal(entry))
            }
        }
        switch event.body {
        case .promptsRouted(_, let ctx, _, let route):
            promptsRouted(ctx, route)
        case .promptShown(let uid, let ctx, _, let prompt):
            // S-66: a routed evaluation's prompts go to its agent only.
            if !agents.isEmpty, let destination = agents.destination(of: ctx) {
                guard let context = authenticator.state.contexts[ctx], let evaluation = context.evaluation else { return }
                return sendAgentPrompt(destination, uid: uid, ctx: ctx, prompt, context, evaluation)
            }
            guard let (connection, tag) = evaluationOwner(ctx), let context = authenticator.state.contexts[ctx],
                  let evaluation = context.evaluation else { return }
            writer.bytes.removeAll(keepingCapacity: true)
            writer.beginResponse(tag: tag, status: .prompt)
            writer.append(key: "kind", value: prompt.kind.rawValue)
            // S-60: a combined prompt carries both halves' fields.
            let scans = prompt.kind != .passcode
            if scans {
                writer.append(key: "attempt", value: prompt.attempt)
                writer.append(key: "biometry", value: authenticator.state.rules.biometryType.wireName)
            }
            writer.append(key: "reason", value: evaluation.reason)
            writer.append(key: "cancel", value: context.effectiveCancelTitle)
            if prompt.kind == .biometric, prompt.fallbackOffered, let fallback = context.effectiveFallbackTitle {
                writer.append(key: "fallback", value: fallback)
            }
            if prompt.kind != .biometric { writer.append(key: "attempts-left", value: prompt.attemptsLeft) }
            if let message = prompt.message { writer.append(key: "message", value: message) }
            // Only an evaluation that asked for the combined prompt has a
            // passcode half to end (PROTOCOL.md 1.2).
            if prompt.retryAfter > 0 { writer.append(key: "retry-after", value: Int(prompt.retryAfter)) }
            writer.endLine()
            if scans, sensor.hold(uid, writer.bytes, for: connection) { return }
            send(writer.bytes, to: connection)
        case .evaluationSucceeded(let uid, let ctx, let eval, let method):
            if !agents.isEmpty, let destination = agents.close(ctx) { sendAgentDone(destination, result: "success") }
            if rights.isAuthorizing { rightEvaluationSucceeded(ctx, method: method) }
            // S-75: an on-behalf context's success may offer the login secret.
            let loginSecret = keyringSucceeded(uid: uid, ctx: ctx, eval: eval, method: method)
            guard let (connection, tag) = evaluationOwner(ctx) else { return }
            connections[connection]?.evaluationTags[ctx] = nil
            let notice = connections[connection]?.notices.remove(ctx) != nil
            writer.bytes.removeAll(keepingCapacity: true)
            writer.beginResponse(tag: tag, status: .ok)
            writer.append(key: "method", value: method.rawValue)
            if let context = authenticator.state.contexts[ctx] {
                // Biometric successes carry the user's domain state (S-10);
                // cached and reuse successes the one the context last saw.
                let token = method == .biometric ? authenticator.state.user(context.uid).domainState
                    : method == .passcode ? DomainState() : context.domainState
                if !token.isEmpty { writer.append(key: "domain-state", value: token.description) }
            }
            // S-64: the tally this sign-in closed (cached and reuse are no sign-in).
            if notice, method == .biometric || method == .passcode {
                for (key, value) in FailureNotice.fields(authenticator.state.user(uid).notice) {
                    writer.append(key: key, value: value)
                }
            }
            if let loginSecret { writer.append(key: "login-secret", value: loginSecret) }
            writer.endLine()
            send(writer.bytes, to: connection)
        case .evaluationFailed(_, let ctx, _, let failure):
            if !agents.isEmpty, let destination = agents.close(ctx) { sendAgentDone(destination, result: failure.code.wireName) }
            if rights.isAuthorizing { rightEvaluationFailed(ctx) }
            guard let (connection, tag) = evaluationOwner(ctx) else { return }
            connections[connection]?.evaluationTags[ctx] = nil
            connections[connection]?.notices.remove(ctx)
            writer.bytes.removeAll(keepingCapacity: true)
            appendFailure(tag: tag, failure, biometry: nil)
            send(writer.bytes, to: connection)
        case .contextCreated(_, let ctx, _, let origin) where origin.isOnBehalf:
            noteOrigin(ctx, origin)
        case .contextInvalidated(_, let ctx, _):
            if !keyring.successes.isEmpty { keyringForget(ctx) }
            noteOrigin(ctx, nil)
        default:
            break
        }
    }

    /// The connection that runs `ctx`'s evaluation, and its tag; nil when
    /// there is none, or the connection is gone or being forgotten.
    func evaluationOwner(_ ctx: ContextID) -> (Connection.ID, String)? {
        guard let id = roster.owner(of: ctx), let tag = connections.withValue(id, { connection in
            connection.state != .closed ? connection.evaluationTags[ctx] : nil
        }) ?? nil else { return nil }
        return (id, tag)
    }

    /// `TAG ERR domain=la code=N name=X message="..." [biometry=T] [retry-after=N] [reason=R] [locked=admin]`
    func appendFailure(tag: String, _ failure: Failure, biometry: BiometryType?) {
        writer.beginLAError(tag: tag, code: failure.code.rawValue, name: failure.code.wireName, message: failure.message)
        if let biometry { writer.append(key: "biometry", value: biometry.wireName) }
        if let retry = failure.retryAfter { writer.append(key: "retry-after", value: Int(retry)) }
        if let reason = failure.reason, reason != "admin-locked" { writer.append(key: "reason", value: reason) }
        if failure.adminLocked { writer.append(key: "locked", value: "admin") }
        writer.endLine()
    }
}
