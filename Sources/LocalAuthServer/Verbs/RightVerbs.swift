// right-save, right-state, right-remove, right-authorize, right-deauthorize,
// right-secret (PROTOCOL.md v1.1): LARightStore's persisted rights, per uid.
//
// - A right belongs to the caller's uid (SO_PEERCRED); identifiers follow
//   PROTOCOL.md's grammar; a save replaces a right of the same identifier.
// - right-authorize runs an evaluation of the right's requirement on the
//   caller's context (its prompts, its final answer, on the request's tag);
//   its success is recorded as right-authorized and grants the right on that
//   context until right-deauthorize, the context's invalidation, or a new
//   save of the identifier.
// - right-secret releases the secret only on a context with that grant; a
//   `biometry-current-set` right also needs the user's enrolled set (S-10
//   token) unchanged since the save. The plaintext is wiped once written
//   into the reply (S-50).
// - Limits: `[Secrets] MaxSecretBytes`, `MaxRightsPerUser` (limit-exceeded;
//   per principal, S-53: a user's subordinate uids share their cap);
//   every recorded right event is charged to the user's log budget (S-48).
// - right-save and right-remove change the store at once and are answered
//   once it is durable, written off the loop (RightStoreWrites.swift).
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension ServerCore {
    func rightSave(_ request: Request, _ connection: Connection.ID) {
        secretSeen = true
        let uid = peer(of: connection).uid
        guard let identifier = rightIdentifier(request, connection) else { return }
        guard let text = request.arguments.value(for: "requirement") else {
            return reply(connection, request.tag, ProtocolError(.missingArgument, "requirement= is required."))
        }
        guard let requirement = RightRequirement(rawValue: text) else {
            return reply(connection, request.tag, ProtocolError(.badArgument,
                "requirement= must be one of \(RightRequirement.allCases.map(\.wireName).joined(separator: ", "))."))
        }
        var secret: [UInt8]?
        if let encoded = request.secret("secret") {  // S-50: base64 in wipeable bytes
            let limit = configuration.secrets.maxSecretBytes
            switch encoded.withUnsafeBytes({ Base64.decode($0, maximumBytes: limit) }) {
            case .success(let bytes): secret = bytes
            case .failure(.tooLong):
                return reply(connection, request.tag, ProtocolError(.limitExceeded,
                    "The secret is larger than MaxSecretBytes (\(limit) bytes)."))
            case .failure(.malformed):
                return reply(connection, request.tag, ProtocolError(.badArgument, "secret= must be standard base64."))
            }
        }
        defer { if secret != nil { SecretMemory.wipe(&secret!) } }
        let limit = configuration.secrets.maxRightsPerUser
        if rights.store.right(uid, identifier) == nil, rightsHeld(byPrincipalOf: uid) >= limit {
            return reply(connection, request.tag, ProtocolError(.limitExceeded,
                "A user may keep at most \(limit) rights (MaxRightsPerUser), their subordinate uids' included; remove one first."))
        }
        // S-48: right events are charged to the user's log budget like
        // evaluate's: the save and its key's creation (S-78).
        if let refusal = loggedRequestRefusal(connection, events: 2) { return reply(connection, request.tag, refusal) }
        let user = authenticator.state.user(uid)
        // S-59: bound to the caller's account, its life the uid's current one.
        let account = rightAccount(for: connection)
        let sealed = secret.map {
            AESGCM.seal($0, key: rights.secretKey, additionalData: RightStore.additionalData(uid, identifier, account))
        }
        let key = makeRightKey(uid, identifier, account)
        rights.store.save(uid, identifier, requirement: requirement,
                    domainState: user.templates.isEmpty ? "" : user.domainState.description, sealed: sealed, key: key,
                    account: account)
        // Recorded and answered once the store is durable, off the loop
        // (RightStoreWrites.swift): the save, then its key's creation (S-78).
        var facts: [RightFact] = [.saved(uid: uid, identifier: identifier, requirement: requirement)]
        if let key {
            facts.append(.keyCreated(uid: uid, identifier: identifier, publicKeySHA256: lowercaseHex(SHA256.hash(key.publicKey))))
        }
        awaitRightsWrite(RightWaiter(connection: connection, tag: request.tag, facts: facts))
    }

    func rightState(_ request: Request, _ connection: Connection.ID) {
        guard let identifier = rightIdentifier(request, connection) else { return }
        guard let right = callersRight(connection, identifier) else { return unknownRight(connection, request.tag) }
        replyOK(connection, request.tag, [("requirement", right.requirement.wireName),
                                          ("has-secret", right.sealed == nil ? "false" : "true"),
                                          ("has-key", right.key == nil ? "false" : "true")])
    }

    func rightRemove(_ request: Request, _ connection: Connection.ID) {
        let uid = peer(of: connection).uid
        let identifiers: [String]
        switch (request.arguments.value(for: "identifier"), request.arguments.value(for: "all")) {
        case (nil, "true"?):
            identifiers = (rights.store.rights[uid] ?? [:]).filter { isCallers($0.value, connection) }.keys.sorted()
        case (nil, let other?):
            return reply(connection, request.tag, ProtocolError(.badArgument, "all= takes only true, not \"\(other)\"."))
        case (.some, .some):
            return reply(connection, request.tag, ProtocolError(.badArgument, "Give identifier= or all=true, not both."))
        case (.some, nil):
            guard let identifier = rightIdentifier(request, connection) else { return }
            guard callersRight(connection, identifier) != nil else { return unknownRight(connection, request.tag) }
            identifiers = [identifier]
        case (nil, nil):
            return reply(connection, request.tag, ProtocolError(.missingArgument, "identifier= or all=true is required."))
        }
        if !identifiers.isEmpty, let refusal = loggedRequestRefusal(connection, events: identifiers.count) {
            return reply(connection, request.tag, refusal)
        }
        let removed = rights.store.remove(uid, identifiers)
        guard !removed.isEmpty else { return replyOK(connection, request.tag) }
        awaitRightsWrite(RightWaiter(connection: connection, tag: request.tag, facts: removed.map { identifier, right in
            .removed(uid: uid, identifier: identifier, requirement: right.requirement)
        }))
    }

    func rightAuthorize(_ request: Request, _ connection: Connection.ID) {
        guard let ctx = ownedContext(request, connection), let identifier = rightIdentifier(request, connection),
              let uid = rightContextUser(ctx, request, connection), var asked = evaluationRequest(request, connection) else { return }
        guard let right = callersRight(connection, identifier) else { return unknownRight(connection, request.tag) }
        guard !rights.isAuthorizing(ctx), connections[connection]?.evaluationTags[ctx] == nil else {
            return reply(connection, request.tag, ProtocolError(.busy, "An evaluation is already running on this context."))
        }
        // S-61..S-63: before anything is counted, so that it runs once when let go.
        if parkedForWhereabouts(request, ctx: ctx, policy: right.requirement.policy, connection) { return }
        if right.requirement.policy.dependsOnFingers { asked.options.biometryBlocked = biometryBlock(ctx, connection) }
        // S-66: the session's agent, when the context asked for it (may wait for logind).
        var options = asked.options
        switch agentRouting(for: ctx, request, connection) {
        case .parked: return
        case .route(let route): options.route = route
        }
        let reason = request.arguments.value(for: "reason") ?? ""
        if let refusal = checkValueCap(reason, key: "reason") ?? loggedRequestRefusal(connection, events: 1) {
            return reply(connection, request.tag, refusal)
        }
        connections[connection]?.evaluationTags[ctx] = request.tag
        if asked.notice { connections[connection]?.notices.insert(ctx) }
        rights.beginAuthorization(PendingRightAuthorization(uid: uid, identifier: identifier, generation: right.generation), on: ctx)
        let outcome = run(.evaluate(ctx: ctx, policy: right.requirement.policy, reason: reason, options: options),
                          connection: connection, tag: request.tag, now: now)
        if events(outcome, connection, request.tag) == nil {
            connections[connection]?.evaluationTags[ctx] = nil
            connections[connection]?.notices.remove(ctx)
            rights.endAuthorization(on: ctx)
        }
    }

    func rightDeauthorize(_ request: Request, _ connection: Connection.ID) {
        guard let ctx = ownedContext(request, connection), let identifier = rightIdentifier(request, connection) else { return }
        rights.deauthorize(identifier, on: ctx)
        replyOK(connection, request.tag)
    }

    func rightSecret(_ request: Request, _ connection: Connection.ID) {
        guard let ctx = ownedContext(request, connection), let identifier = rightIdentifier(request, connection),
              let uid = rightContextUser(ctx, request, connection) else { return }
        guard let right = callersRight(connection, identifier) else { return unknownRight(connection, request.tag) }
        guard authenticator.state.contexts[ctx]?.isOpen == true, rights.isGranted(identifier, on: ctx, generation: right.generation) else {
            return reply(connection, request.tag, ProtocolError(.notAuthorized,
                "The right is not authorized on this context; authorize it first (right-authorize)."))
        }
        if right.requirement == .biometryCurrentSet {
            let user = authenticator.state.user(uid)
            guard !user.templates.isEmpty, user.domainState.description == right.domainState else {
                return reply(connection, request.tag, ProtocolError(.notAuthorized,
                    "The enrolled biometry changed since the right was saved; a biometry-current-set right no longer releases its secret."))
            }
        }
        guard let sealed = right.sealed else {
            return reply(connection, request.tag, ProtocolError(.badState, "The right has no secret."))
        }
        guard var secret = AESGCM.open(sealed, key: rights.secretKey,
                                       additionalData: RightStore.additionalData(uid, identifier, right.account)) else {
            journal(.error, "A secret in the right store \(rights.store.path) does not open with the daemon's key.")
            return reply(connection, request.tag, ProtocolError(.internal, "The secret cannot be opened with this daemon's key."))
        }
        defer { SecretMemory.wipe(&secret) }
        if let refusal = loggedRequestRefusal(connection, events: 1) { return reply(connection, request.tag, refusal) }
        let outcome = run(.recordRight(.secretRead(uid: uid, ctx: ctx, identifier: identifier)),
                          connection: connection, tag: request.tag, now: now)
        guard events(outcome, connection, request.tag) != nil else { return }
        // S-50: encoded straight into the reply line, through no String.
        replyOK(connection, request.tag) { line in line.append(key: "secret", base64Of: secret) }
    }

    // MARK: - Evaluation outcomes (Replies.deliver)

    /// A right-authorize's evaluation succeeded: recorded, then granted.
    func rightEvaluationSucceeded(_ ctx: ContextID, method: SuccessMethod) {
        guard let pending = rights.endAuthorization(on: ctx) else { return }
        let outcome = run(.recordRight(.authorized(uid: pending.uid, ctx: ctx, identifier: pending.identifier, method: method)),
                          connection: nil, tag: nil, now: now)
        guard case .events = outcome else { return }
        rights.grant(pending, on: ctx)
    }

    func rightEvaluationFailed(_ ctx: ContextID) {
        rights.endAuthorization(on: ctx)
    }

    /// A closing connection's contexts take their grants with them.
    func forgetRightGrants(of connection: Connection.ID) {
        rights.forget(connections[connection]?.contexts ?? [])
    }

    // MARK: - Arguments

    func rightIdentifier(_ request: Request, _ connection: Connection.ID) -> String? {
        guard let identifier = request.arguments.value(for: "identifier") else {
            reply(connection, request.tag, ProtocolError(.missingArgument, "identifier= is required."))
            return nil
        }
        guard RightIdentifier.isValid(identifier) else {
            reply(connection, request.tag, ProtocolError(.badArgument,
                "identifier= must be 1 to \(RightIdentifier.maximumLength) characters of A-Z a-z 0-9 . _ -"))
            return nil
        }
        return identifier
    }

    /// The context's user, who must be the caller: rights are the caller's own.
    func rightContextUser(_ ctx: ContextID, _ request: Request, _ connection: Connection.ID) -> UserID? {
        guard let context = authenticator.state.contexts[ctx], context.uid == peer(of: connection).uid else {
            counters.permissionDenied += 1
            reply(connection, request.tag, ProtocolError(.permissionDenied, "Rights are used on the caller's own contexts."))
            return nil
        }
        return context.uid
    }

    func unknownRight(_ connection: Connection.ID, _ tag: String) {
        reply(connection, tag, ProtocolError(.unknownRight, "No right of that identifier."))
    }
}

extension ServerCore {
    /// S-53: the rights held by `uid` and every uid of the same principal
    /// (the owner of a subordinate range holds its uids' rights too).
    func rightsHeld(byPrincipalOf uid: UserID) -> Int {
        let ranges = subordinateRanges
        let principal = ranges.owner(of: uid) ?? uid
        guard !ranges.isEmpty else { return rights.store.count(uid) }
        return rights.store.rights.keys.reduce(0) { held, holder in
            (ranges.owner(of: holder) ?? holder) == principal ? held + rights.store.count(holder) : held
        }
    }
}
