// keyring-enable, keyring-disable, keyring-status and login-secret
// (PROTOCOL.md "Issue 30 additions", SEMANTICS S-74..S-77).
//
// - keyring-enable is the caller's own consent, and only while the release
//   is on; keyring-disable (another uid: an administrator) also removes the
//   user's copy. Both answer once the store is durable and are charged to
//   the caller's S-48 budget.
// - login-secret: root only (anyone else is refused and recorded, whatever
//   context it names), on an on-behalf context of its connection whose
//   latest evaluation succeeded with the sensor and was offered the secret,
//   once. Every refusal is recorded with its reason; the release itself
//   happens in KeyringRelease.swift.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension ServerCore {
    func keyringEnable(_ request: Request, _ connection: Connection.ID) {
        let uid = peer(of: connection).uid
        guard keyringIsOn else {
            return reply(connection, request.tag, ProtocolError(.unavailable,
                "The administrator has not turned the release on: it needs [Keyring] ReleaseLoginPassword=yes "
                    + "and [Passcode] Backend=shadow in localauthd.conf(5)."))
        }
        if keyring.store.isEnabled(uid) { return replyOK(connection, request.tag) }
        if let refusal = loggedRequestRefusal(connection, events: 1) { return reply(connection, request.tag, refusal) }
        keyring.store.enable(uid)
        awaitKeyringWrite(KeyringWriteWaiter(reply: (connection, request.tag), facts: [.choice(uid: uid, enabled: true, by: uid)]))
    }

    func keyringDisable(_ request: Request, _ connection: Connection.ID) {
        guard let uid = targetUID(request, connection), keyring.keys != nil else { return }
        guard keyring.store.isEnabled(uid) else { return replyOK(connection, request.tag) }
        if let refusal = loggedRequestRefusal(connection, events: 2) { return reply(connection, request.tag, refusal) }
        var facts: [LoginSecretFact] = [.choice(uid: uid, enabled: false, by: peer(of: connection).uid)]
        if keyring.store.disable(uid) != nil { facts.append(.voided(uid: uid, reason: .disabled)) }
        awaitKeyringWrite(KeyringWriteWaiter(reply: (connection, request.tag), facts: facts))
    }

    func keyringStatus(_ request: Request, _ connection: Connection.ID) {
        guard let uid = targetUID(request, connection) else { return }
        let copy = keyring.store.copy(of: uid)
        let fields = [("uid", String(uid)), ("release", keyringIsOn ? "true" : "false"),
                      ("enabled", keyring.store.isEnabled(uid) ? "true" : "false"), ("stored", copy == nil ? "false" : "true"),
                      ("services", configuration.keyring.services.joined(separator: " "))]
        guard let copy else { return replyOK(connection, request.tag, fields) }
        // Whether it is current is the shadow line's to say, read off the loop.
        startKeyringJob(.check([uid: copy.binding]), checking: .status(connection: connection, tag: request.tag, fields: fields))
    }

    func loginSecret(_ request: Request, _ connection: Connection.ID) {
        let caller = peer(of: connection).uid
        guard caller == 0 else { return refuseOrdinaryCaller(request, connection, caller) }
        guard let ctx = ownedContext(request, connection), let context = authenticator.state.contexts[ctx] else { return }
        let origin = trail.origin(of: ctx)
        let eval = context.lastEvaluation
        let refusal = LoginSecretRefusal(uid: context.uid, caller: caller, ctx: ctx, eval: eval > 0 ? eval : nil,
                                         service: origin?.service, reason: .noSuccess)
        if let budget = loggedRequestRefusal(connection, events: 1) { return reply(connection, request.tag, budget) }
        let success = keyring.successes[ctx]
        let reason: LoginSecretRefusal.Reason? = {
            if !keyringIsOn { return .turnedOff }
            guard context.isOpen, let origin else { return context.isOpen ? .notOnBehalf : .noSuccess }
            if !keyringListed(origin) { return .serviceNotListed }
            guard let success, success.eval == eval, context.evaluation == nil else { return .noSuccess }
            if success.method != .biometric { return .notBiometric }
            if success.taken { return .alreadyReleased }
            if !keyring.store.isEnabled(context.uid) { return .notEnabled }
            if keyring.store.copy(of: context.uid) == nil { return .noneStored }
            return nil
        }()
        if let reason { return refuseRelease(refusal, reason: reason, connection, request.tag) }
        guard let copy = keyring.store.copy(of: context.uid), let service = origin?.service else { return }
        // Taken now: a second request, even pipelined, finds it taken.
        keyring.successes[ctx]?.taken = true
        startKeyringJob(.open(uid: context.uid, copy: copy), opening: ReleaseWaiter(
            connection: connection, tag: request.tag, uid: context.uid, ctx: ctx, eval: eval, service: service, binding: copy.binding))
    }

    /// S-75: a caller other than root gets nothing, and the attempt is
    /// recorded (within its S-48 budget) with the context it named, when
    /// that is one of its own.
    private func refuseOrdinaryCaller(_ request: Request, _ connection: Connection.ID, _ caller: UserID) {
        counters.permissionDenied += 1
        if let budget = loggedRequestRefusal(connection, events: 1) { return reply(connection, request.tag, budget) }
        var refusal = LoginSecretRefusal(uid: caller, caller: caller, reason: .notRoot)
        if let text = request.arguments.value(for: "ctx"), let ctx = ContextID(hex: text),
           connections.withValue(connection, { $0.contexts.contains(ctx) }) == true,
           let context = authenticator.state.contexts[ctx] {
            refusal.uid = context.uid
            refusal.ctx = ctx
            if context.lastEvaluation > 0 { refusal.eval = context.lastEvaluation }
        }
        refuseRelease(refusal, reason: .notRoot, connection, request.tag)
    }
}
