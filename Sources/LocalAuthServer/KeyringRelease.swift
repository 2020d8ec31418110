// The login secret's way in and out (S-74, S-75, S-77):
//
// - In: a password check of an on-behalf context from a listed service, for
//   a user who turned the release on, also seals the password on its worker
//   (`keyringSealingJob`); once the core accepted it, the copy is kept and
//   `login-secret-stored` recorded when the store is durable.
// - Offer: a success of an on-behalf context is remembered; a biometric one
//   that could be followed by a release carries `login-secret=offered`, a
//   passcode one under Backend=shadow `login-secret=typed` (Replies.swift).
// - Out: `login-secret` (Verbs/KeyringVerbs.swift) has the copy opened on
//   the keyring thread against the user's shadow line as it is now; an
//   opened password is recorded as released, and its line is written only
//   once that record is durable and nothing holds the connection's output,
//   into the connection's output alone, which is wiped once written.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension ServerCore {
    // MARK: - Sealing (S-74)

    /// The passcode job of an evaluation's check: one that also seals the
    /// password when S-74 asks for it, else nil (the backend's own check).
    func keyringSealingJob(_ job: PasscodeJob, uid: UserID) -> PasscodeWorkers.Job? {
        guard case .evaluation(_, let ctx, _, _) = job.purpose, keyringIsOn, let keys = keyring.keys,
              let origin = trail.origin(of: ctx), keyringListed(origin), keyring.store.isEnabled(uid) else { return nil }
        return .verifySealing(secret: job.secret, check: KeyringJob.sealingChecker(uid: uid, shadowPath: shadowPath, keys: keys))
    }

    /// A sealed password's verdict was recorded: the copy is kept if the
    /// core accepted the password and S-74 still holds.
    func keyringPasswordChecked(uid: UserID, ctx: ContextID, eval: EvaluationID, sealed: LoginSecretCopy,
                                _ outcome: Authenticator.Outcome) {
        guard case .events(let events) = outcome, events.contains(where: {
            if case .passcodeAccepted(uid, ctx, eval) = $0.body { return true } else { return false }
        }) else { return }
        guard keyringIsOn, let origin = trail.origin(of: ctx), keyringListed(origin), let service = origin.service,
              keyring.store.isEnabled(uid) else { return }
        keyring.store.keep(sealed, for: uid)
        awaitKeyringWrite(KeyringWriteWaiter(reply: nil, facts: [.stored(uid: uid, ctx: ctx, eval: eval, service: service)]))
    }

    // MARK: - Offers (S-75)

    /// An evaluation of an on-behalf context succeeded: remembered, and the
    /// success reply's `login-secret=` value, if any.
    func keyringSucceeded(uid: UserID, ctx: ContextID, eval: EvaluationID, method: SuccessMethod) -> String? {
        guard let origin = trail.origin(of: ctx) else { return nil }
        if keyringIsOn { keyring.successes[ctx] = KeyringSuccess(eval: eval, method: method) }
        switch method {
        case .passcode:
            // The password the module sent is the login password.
            return passcodes is ShadowPasscodes ? "typed" : nil
        case .biometric:
            guard keyringIsOn, keyringListed(origin), keyring.store.copy(of: uid) != nil else { return nil }
            return "offered"
        case .cached, .reuse:
            return nil
        }
    }

    /// A context ended: its success goes with it.
    func keyringForget(_ ctx: ContextID) {
        keyring.successes[ctx] = nil
    }

    // MARK: - Releases (S-75, S-77)

    /// The copy of a `login-secret` was opened (or not) on the keyring thread.
    func copyOpened(_ waiter: ReleaseWaiter, _ opened: OpenedCopy) {
        let alive = connections.contains(waiter.connection)
        let refusal = LoginSecretRefusal(uid: waiter.uid, caller: 0, ctx: waiter.ctx, eval: waiter.eval, service: waiter.service,
                                         reason: .stale)
        switch opened {
        case .password(let secret):
            guard alive else { return }  // nobody to give it to; `secret` is wiped as it goes
            let context = authenticator.state.contexts[waiter.ctx]
            guard let context, context.isOpen, context.uid == waiter.uid, context.lastEvaluation == waiter.eval,
                  context.evaluation == nil else {
                return refuseRelease(refusal, reason: .noSuccess, waiter.connection, waiter.tag)
            }
            let outcome = run(.recordLoginSecret(.released(uid: waiter.uid, ctx: waiter.ctx, eval: waiter.eval, service: waiter.service)),
                              connection: waiter.connection, tag: waiter.tag, now: now)
            guard events(outcome, waiter.connection, waiter.tag) != nil else { return }
            // Written once the record is durable (sendDurableReleases).
            let seq = authenticator.recorder.lastSeq
            authenticator.recorder.flush(durableThrough: seq)
            keyring.releases.append(PendingRelease(connection: waiter.connection, tag: waiter.tag, seq: seq, secret: secret))
        case .stale, .gone:
            // S-76: never released stale; the copy is void.
            if keyring.store.void(waiter.uid, binding: waiter.binding) {
                let reason: LoginSecretVoiding = { if case .gone = opened { return .accountGone } else { return .passwordChanged } }()
                awaitKeyringWrite(KeyringWriteWaiter(reply: nil, facts: [.voided(uid: waiter.uid, reason: reason)]))
            }
            refuseRelease(refusal, reason: .stale, alive ? waiter.connection : nil, waiter.tag)
        case .unopenable:
            journal(.error, "A copy in the login-secret store \(keyring.store.path) does not open with the daemon's key (uid \(waiter.uid)).")
            refuseRelease(refusal, reason: .unopenable, alive ? waiter.connection : nil, waiter.tag)
        case .unreadable(let why):
            journal(.error, "Failed to read the shadow file for a login-secret release (uid \(waiter.uid)): \(why)")
            refuseRelease(refusal, reason: .shadowUnreadable, alive ? waiter.connection : nil, waiter.tag)
        }
    }

    /// Records a refusal and answers it with the protocol error its reason names.
    func refuseRelease(_ refusal: LoginSecretRefusal, reason: LoginSecretRefusal.Reason, _ connection: Connection.ID?, _ tag: String) {
        var refusal = refusal
        refusal.reason = reason
        let outcome = run(.recordLoginSecret(.refused(refusal)), connection: connection, tag: tag, now: now)
        guard let connection, events(outcome, connection, tag) != nil else { return }
        reply(connection, tag, Self.releaseRefusal(reason))
    }

    /// S-75's answers: permission-denied, not-authorized or unavailable.
    static func releaseRefusal(_ reason: LoginSecretRefusal.Reason) -> ProtocolError {
        switch reason {
        case .notRoot:
            return ProtocolError(.permissionDenied, "Only root's PAM module may ask for a login secret.")
        case .notOnBehalf, .serviceNotListed, .noSuccess, .notBiometric, .alreadyReleased:
            let why: String
            switch reason {
            case .notOnBehalf: why = "the context was not opened on behalf of a user"
            case .serviceNotListed: why = "its PAM service is not in [Keyring] Services="
            case .notBiometric: why = "its latest evaluation did not succeed with the sensor"
            case .alreadyReleased: why = "it was released once already for that evaluation"
            default: why = "its latest evaluation did not succeed"
            }
            return ProtocolError(.notAuthorized, "No login secret was offered to this context: \(why).")
        case .turnedOff:
            return ProtocolError(.unavailable, "The login secret is not released here ([Keyring] ReleaseLoginPassword=no, or the passcode is not the login password).")
        case .notEnabled:
            return ProtocolError(.unavailable, "The user has not turned the release on (localauthctl keyring enable).")
        case .noneStored:
            return ProtocolError(.unavailable, "No login password is kept for the user; it is kept at their next password sign-in.")
        case .stale:
            return ProtocolError(.unavailable, "The login password changed since it was kept; it is kept again at the next password sign-in.")
        case .unopenable, .storeUntrusted, .foreignKey:
            return ProtocolError(.unavailable, "The kept login password cannot be opened with this daemon's key.")
        case .shadowUnreadable:
            return ProtocolError(.unavailable, "The shadow file cannot be read; nothing is released.")
        }
    }

    /// End of a turn: each released password whose record is durable goes
    /// out, once nothing holds output back (S-40: its line is never copied
    /// into the reply gate).
    func sendDurableReleases() {
        let durable = authenticator.recorder.durableSeq
        var index = 0
        while index < keyring.releases.count {
            let pending = keyring.releases[index]
            guard connections.contains(pending.connection) else {
                keyring.releases.remove(at: index)  // its connection went; the secret is wiped with it
                continue
            }
            guard pending.seq <= durable,
                  replyGate.admits(pending.connection, barrier: authenticator.revealGate, durable: { authenticator.recorder.durableSeq })
            else {
                index += 1
                continue
            }
            keyring.releases.remove(at: index)
            connections.withValue(pending.connection) { connection in
                // Room for the line now, so the buffer holding it is not
                // moved (and an unwiped copy left) before it is written.
                connection.output.bytes.reserveCapacity(connection.output.bytes.count + 4 * pending.secret.count + 16384)
                connection.output.holdsSecret = true
            }
            replyOK(pending.connection, pending.tag) { line in
                pending.secret.withUnsafeBytes { line.append(key: "secret", base64Of: $0) }
            }
        }
    }
}
