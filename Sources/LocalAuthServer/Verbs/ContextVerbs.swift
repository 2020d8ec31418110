// new, set, get, invalidate, can-evaluate: a context's life (S-12..S-20).
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension ServerCore {
    func newContext(_ request: Request, _ connection: Connection.ID) {
        // Only open contexts count: an invalidated one costs its owner nothing.
        let open = connections[connection].map { $0.contexts.count - $0.invalidated.count } ?? 0
        guard open < configuration.daemon.maxContextsPerConnection else {
            return reply(connection, request.tag, ProtocolError(.limitExceeded,
                "At most \(configuration.daemon.maxContextsPerConnection) contexts per connection; invalidate some first."))
        }
        guard let subject = contextSubject(request, connection) else { return }
        // S-55: PAM traffic pays its pair's budget, and never from the
        // reserve: the context's creation and its end (a PAM module's
        // context ends with its connection, which nothing else charges).
        if subject.origin.isOnBehalf,
           let refusal = onBehalfRefusal(subject: subject.uid, requester: subject.origin.requester, events: 2) {
            return reply(connection, request.tag, refusal)
        }
        if let refusal = loggedRequestRefusal(connection, events: 1) { return reply(connection, request.tag, refusal) }
        let random = randomBytes(16)
        guard let ctx = ContextID(bytes: random) else { return }
        let outcome = run(.createContext(ctx: ctx, uid: subject.uid, pid: peer(of: connection).pid, origin: subject.origin),
                          connection: connection, tag: request.tag, now: now)
        guard events(outcome, connection, request.tag) != nil else { return }
        connections[connection]?.contexts.insert(ctx)
        roster.own(ctx, by: connection)
        replyOK(connection, request.tag, [("ctx", ctx.hex)])
    }

    func setProperties(_ request: Request, _ connection: Connection.ID) {
        guard let ctx = ownedContext(request, connection) else { return }
        var properties: [ContextProperty] = []
        for argument in request.arguments where argument.key != "ctx" {
            guard let property = ContextProperty(name: argument.key, value: argument.value) else {
                return reply(connection, request.tag, ProtocolError(.badArgument, "Bad value for \(argument.key)."))
            }
            // S-66: an on-behalf context's prompt is its PAM conversation.
            if property == .prompt(.agent), trail.origin(of: ctx) != nil {
                return reply(connection, request.tag, ProtocolError(.badArgument,
                    "prompt=agent: a context opened on behalf of a user is prompted through its PAM conversation."))
            }
            properties.append(property)
        }
        // All values and caps were checked first, so a bad one changes nothing.
        let bytes: Int
        switch checkPropertyCaps(properties, ctx: ctx, connection) {
        case .failure(let refusal): return reply(connection, request.tag, refusal)
        case .success(let total): bytes = total
        }
        if let refusal = loggedRequestRefusal(connection, events: properties.count) { return reply(connection, request.tag, refusal) }
        for property in properties {
            let outcome = run(.setProperty(ctx: ctx, property: property), connection: connection, tag: request.tag, now: now)
            guard events(outcome, connection, request.tag) != nil else { return }
        }
        notePropertyBytes(bytes, ctx: ctx, connection)
        replyOK(connection, request.tag)
    }

    func getContext(_ request: Request, _ connection: Connection.ID) {
        guard let ctx = ownedContext(request, connection), let context = authenticator.state.contexts[ctx] else { return }
        replyOK(connection, request.tag, [
            ("state", context.isOpen ? "open" : "invalidated"), ("biometry", context.biometry.wireName),
            ("domain-state", context.domainState.description), ("fallback-title", context.fallbackTitle ?? ContextState.defaultFallbackTitle),
            ("cancel-title", context.effectiveCancelTitle), ("reuse-duration", String(context.reuseDuration)),
            ("interaction-not-allowed", context.interactionNotAllowed ? "true" : "false"),
        ] + (context.prompt == .agent ? [("prompt", "agent")] : []))
    }

    func invalidate(_ request: Request, _ connection: Connection.ID) {
        guard let ctx = ownedContext(request, connection) else { return }
        let wasOpen = authenticator.state.contexts[ctx]?.isOpen == true
        let outcome = run(.invalidate(ctx: ctx, reason: .app), connection: connection, tag: request.tag, now: now)
        guard events(outcome, connection, request.tag) != nil else { return }
        replyOK(connection, request.tag)
        if wasOpen { connections[connection]?.invalidated.append(ctx) }
        // Invalidated contexts keep answering invalidContext (S-13), but a
        // connection may keep only so many: the oldest are released (their
        // ids then answer unknown-context), so memory stays bounded.
        let limit = configuration.daemon.maxContextsPerConnection
        while let oldest = connections.withValue(connection, { $0.invalidated.count > limit ? $0.invalidated.removeFirst() : nil }) ?? nil {
            run(.invalidate(ctx: oldest, reason: .disconnect), connection: connection, tag: nil, now: now)
            connections[connection]?.contexts.remove(oldest)
            roster.disown(oldest)
            forgetPropertyBytes(of: oldest, connection)
        }
    }

    func canEvaluate(_ request: Request, _ connection: Connection.ID) {
        guard let ctx = ownedContext(request, connection), let policy = policy(request, connection) else { return }
        if !sensor.isSimulated, parkedForEnrollment(request, ctx: ctx, policy: policy, connection) { return }
        if parkedForWhereabouts(request, ctx: ctx, policy: policy, connection) { return }
        var tag = request.tag
        let privileged = connections[connection]?.isPrivileged ?? false
        let blocked = policy.dependsOnFingers ? biometryBlock(ctx, connection) : nil
        tag.withUTF8 { answerCanEvaluate(ctx, policy: policy, tag: $0, connection, privileged: privileged, authenticator, blocked: blocked) }
    }

    /// Runs the check (S-17..S-20) and answers it.
    /// `authenticator` is the server's, passed down so that the hot path
    /// borrows it (see `processLines`).
    func answerCanEvaluate(_ ctx: ContextID, policy: Policy, tag: UnsafeBufferPointer<UInt8>, _ connection: Connection.ID,
                           privileged: Bool, _ authenticator: Authenticator, blocked: BiometryBlock? = nil) {
        // S-48: one test for root's own and the daemon's user (the
        // benchmarks run as root), judged at accept (S-53).
        if !privileged, let refusal = loggedRequestRefusal(connection, events: 1) {
            return reply(connection, String(decoding: tag, as: UTF8.self), refusal)
        }
        switch authenticator.canEvaluate(ctx, policy: policy, now: now, blocked: blocked) {
        case .failure(.rejected(let rejection)):
            reply(connection, String(decoding: tag, as: UTF8.self), rejection)
        case .failure(.unavailable):
            // The cause (paths, errno) goes to the journal, not to clients.
            reply(connection, String(decoding: tag, as: UTF8.self),
                  ProtocolError(.unavailable, "The event log cannot record events; refusing to act."))
        case .success(let check):
            let biometry = check.biometry
            // The core's LAError, message and all (S-18).
            if let failure = check.failure {
                return reply(connection, String(decoding: tag, as: UTF8.self), failure, biometry: biometry)
            }
            let showsToken = policy == .biometrics || policy == .biometricsOrCompanion
            let token = showsToken ? check.domainState : DomainState()
            // The hottest reply: the tag, then the rest as rendered last time.
            sendLine(to: connection) { line in
                line.bytes.append(contentsOf: tag)
                checkedReplies.append(biometry: biometry, token: token, to: &line)
            }
        }
    }
}

/// The rest of a successful can-evaluate reply after its tag,
/// ` OK biometry=NAME[ domain-state=TOKEN]` and the line end, kept as bytes
/// for the last (biometry, token) rendered. A user's token changes only with
/// their templates, and rendering it (the quoting check and the copies) was
/// over a third of the reply's cost; a different user's check renders anew.
final class CheckedReplies {
    private var biometry = BiometryType.none
    private var token = DomainState()
    /// The rendered bytes, inline: an array here was retained and released
    /// around every append. The longest reply rest is 67 bytes
    /// (` OK biometry=opticID domain-state=` and 32 bytes of token, LF).
    private var rendered = RenderedBytes()
    private var count = 0

    private struct RenderedBytes {
        static let capacity = 128
        var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                    UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
            = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    func append(biometry: BiometryType, token: DomainState, to line: inout LineWriter) {
        if count == 0 || biometry != self.biometry || token != self.token {
            var fresh = LineWriter(capacity: 64)
            fresh.bytes.append(UInt8(ascii: " "))
            fresh.bytes.append(contentsOf: Response.Status.ok.rawValue.utf8)
            fresh.append(key: "biometry", value: biometry.wireName)
            if !token.isEmpty { fresh.append(key: "domain-state", value: token.description) }
            fresh.endLine()
            // A token of 32 bytes that needs quoting (never the daemon's hex)
            // could pass the capacity: such a reply is sent as rendered, not kept.
            guard fresh.bytes.count <= RenderedBytes.capacity else {
                count = 0
                return line.bytes.append(contentsOf: fresh.bytes)
            }
            withUnsafeMutableBytes(of: &rendered) { $0.copyBytes(from: fresh.bytes) }
            count = fresh.bytes.count
            self.biometry = biometry
            self.token = token
        }
        let count = self.count
        withUnsafeBytes(of: rendered) { line.bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }
}

/// The line of the next request, as `processLines` takes it from the splitter.
enum NextLine {
    /// None (the batch ends).
    case none
    case tooLong
    case line(UnsafeBufferPointer<UInt8>)
    case canEvaluate(UsualCanEvaluate)
}

/// can-evaluate straight from the line's bytes, when it is the usual one
/// (`CanEvaluateLine`), names a context this connection owns and a known
/// policy (`processLines` also requires a simulated sensor and a log that
/// records). Anything else goes through the scanner, `dispatch` and
/// `canEvaluate(_:_:)`, which give every error its usual answer; nothing
/// was recorded yet. Judged in the look-up that took the line (the
/// connection is borrowed: nothing else is read or changed).
struct UsualCanEvaluate {
    let ctx: ContextID
    let policy: Policy
    let tag: UnsafeBufferPointer<UInt8>
    /// Root's own or the daemon's user's connection (S-53): no budget to judge.
    let privileged: Bool

    @inline(__always)
    init?(_ line: UnsafeBufferPointer<UInt8>, of connection: inout Connection) {
        guard let usual = CanEvaluateLine(line) else { return nil }
        let ctx = ContextID(high: usual.ctxHigh, low: usual.ctxLow)
        guard connection.contexts.contains(ctx), let policy = Policy(rawValue: usual.policyNumber) else { return nil }
        self.ctx = ctx
        self.policy = policy
        tag = usual.tag
        privileged = connection.isPrivileged
    }
}
