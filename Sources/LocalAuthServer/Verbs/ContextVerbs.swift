// new, set, get, invalidate, can-evaluate: a context's life (S-12..S-20).
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension Server {
    func newContext(_ request: Request, _ connection: Connection) {
        // Only open contexts count: an invalidated one costs its owner nothing.
        let open = connection.contexts.count - connection.invalidated.count
        guard open < configuration.daemon.maxContextsPerConnection else {
            return reply(connection, request.tag, ProtocolError(.limitExceeded,
                "At most \(configuration.daemon.maxContextsPerConnection) contexts per connection; invalidate some first."))
        }
        let random = SecureRandom.bytes(16)
        guard let ctx = ContextID(bytes: random) else { return }
        let outcome = run(.createContext(ctx: ctx, uid: connection.peer.uid, pid: connection.peer.pid),
                          connection: connection, tag: request.tag, now: now)
        guard events(outcome, connection, request.tag) != nil else { return }
        connection.contexts.insert(ctx)
        contextOwners[ctx] = connection
        replyOK(connection, request.tag, [("ctx", ctx.hex)])
    }

    func setProperties(_ request: Request, _ connection: Connection) {
        guard let ctx = ownedContext(request, connection) else { return }
        var properties: [ContextProperty] = []
        for argument in request.arguments where argument.key != "ctx" {
            guard let property = ContextProperty(name: argument.key, value: argument.value) else {
                return reply(connection, request.tag, ProtocolError(.badArgument, "Bad value for \(argument.key)."))
            }
            properties.append(property)
        }
        // All values were checked first, so a bad one changes nothing.
        for property in properties {
            let outcome = run(.setProperty(ctx: ctx, property: property), connection: connection, tag: request.tag, now: now)
            guard events(outcome, connection, request.tag) != nil else { return }
        }
        replyOK(connection, request.tag)
    }

    func getContext(_ request: Request, _ connection: Connection) {
        guard let ctx = ownedContext(request, connection), let context = authenticator.state.contexts[ctx] else { return }
        replyOK(connection, request.tag, [
            ("state", context.isOpen ? "open" : "invalidated"), ("biometry", context.biometry.wireName),
            ("domain-state", context.domainState), ("fallback-title", context.fallbackTitle ?? ContextState.defaultFallbackTitle),
            ("cancel-title", context.effectiveCancelTitle), ("reuse-duration", String(context.reuseDuration)),
            ("interaction-not-allowed", context.interactionNotAllowed ? "true" : "false"),
        ])
    }

    func invalidate(_ request: Request, _ connection: Connection) {
        guard let ctx = ownedContext(request, connection) else { return }
        let wasOpen = authenticator.state.contexts[ctx]?.isOpen == true
        let outcome = run(.invalidate(ctx: ctx, reason: .app), connection: connection, tag: request.tag, now: now)
        guard events(outcome, connection, request.tag) != nil else { return }
        replyOK(connection, request.tag)
        if wasOpen { connection.invalidated.append(ctx) }
        // Invalidated contexts keep answering invalidContext (S-13), but a
        // connection may keep only so many: the oldest are released (their
        // ids then answer unknown-context), so memory stays bounded.
        while connection.invalidated.count > configuration.daemon.maxContextsPerConnection {
            let oldest = connection.invalidated.removeFirst()
            run(.invalidate(ctx: oldest, reason: .disconnect), connection: connection, tag: nil, now: now)
            connection.contexts.remove(oldest)
            contextOwners[oldest] = nil
        }
    }

    func canEvaluate(_ request: Request, _ connection: Connection) {
        guard let ctx = ownedContext(request, connection), let policy = policy(request, connection) else { return }
        let outcome = run(.canEvaluate(ctx: ctx, policy: policy), connection: connection, tag: request.tag, now: now)
        guard let events = events(outcome, connection, request.tag) else { return }
        for event in events {
            guard case .policyChecked(let uid, _, _, let biometry, let result, let reason) = event.body else { continue }
            if let code = result {
                var failure = Failure(code, reason: reason)
                if reason == "passcode-required" { failure.message = "Passcode is required to enable biometry." }
                return reply(connection, request.tag, failure, biometry: biometry)
            }
            // Read the token in place: `user(uid)` would copy the whole UserState.
            let token = authenticator.state.users[uid]?.domainState ?? ""
            let showsToken = (policy == .biometrics || policy == .biometricsOrCompanion) && !token.isEmpty
            return replyOK(connection, request.tag) { line in
                line.append(key: "biometry", value: biometry.wireName)
                if showsToken { line.append(key: "domain-state", value: token) }
            }
        }
    }
}
