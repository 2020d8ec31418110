// The login secret (SEMANTICS S-74..S-77, issue 30) as the core sees it:
// the facts the daemon records about a user's sealed login password, never
// the password. The sealed copy lives in the daemon's login-secret store (a
// file of its own, like the right store); the log says that one was stored,
// released to root's PAM module after a fingerprint, voided or refused, and
// what each user chose. None of them changes the replayed state: the store is
// not derived from the log, the events are the audit record.

/// Why a sealed copy was removed (AUDIT.md `login-secret-voided`).
public enum LoginSecretVoiding: String, Sendable, CaseIterable {
    /// The user's shadow line is not the one the copy was bound to (passwd,
    /// a lock, an aging change): S-76.
    case passwordChanged = "password-changed"
    /// The user has no shadow line, or no name, any more.
    case accountGone = "account-gone"
    /// The user (or an administrator) turned the release off for them.
    case disabled
    /// `[Keyring] ReleaseLoginPassword=` is no (at a start or a reload).
    case turnedOff = "turned-off"
}

/// A `login-secret` request (or the store itself) refused, with why (S-75, S-76).
public struct LoginSecretRefusal: Sendable, Equatable {
    public enum Reason: String, Sendable, CaseIterable {
        /// The caller is not root: only root's PAM module may ask.
        case notRoot = "not-root"
        /// The context was not opened on behalf of a user (S-42).
        case notOnBehalf = "not-on-behalf"
        /// Its PAM service is not in `[Keyring] Services=`.
        case serviceNotListed = "service-not-listed"
        /// The context's latest evaluation did not succeed (or runs).
        case noSuccess = "no-success"
        /// It succeeded by passcode, cached or reuse, not by the sensor.
        case notBiometric = "not-biometric"
        /// The offer of that evaluation was taken already.
        case alreadyReleased = "already-released"
        /// `ReleaseLoginPassword=no`, or the passcode is not the login password.
        case turnedOff = "turned-off"
        /// The user has not turned the release on for themselves.
        case notEnabled = "not-enabled"
        /// No sealed copy is kept for the user.
        case noneStored = "none-stored"
        /// The user's shadow line changed since the copy was sealed (it is voided).
        case stale
        /// The copy does not open with this daemon's key.
        case unopenable
        /// The shadow file could not be read to tell whether the copy is current.
        case shadowUnreadable = "shadow-unreadable"
        /// The store file is not the daemon's own, 0600, without ACL, or its MAC fails.
        case storeUntrusted = "store-untrusted"
        /// The store was sealed under another daemon's key.
        case foreignKey = "foreign-key"
    }

    /// The user whose secret was asked for: the context's, the caller's own
    /// when it named none it may use, the daemon's for the store's refusals.
    public var uid: UserID
    /// Who asked (SO_PEERCRED); the daemon's own uid for the store's refusals.
    public var caller: UserID
    public var ctx: ContextID?
    public var eval: EvaluationID?
    /// The context's PAM service, when it has one.
    public var service: String?
    public var reason: Reason

    public init(uid: UserID, caller: UserID, ctx: ContextID? = nil, eval: EvaluationID? = nil, service: String? = nil,
                reason: Reason) {
        self.uid = uid
        self.caller = caller
        self.ctx = ctx
        self.eval = eval
        self.service = service
        self.reason = reason
    }
}

/// What `Command.recordLoginSecret` records: one of AUDIT.md's login-secret events.
public enum LoginSecretFact: Sendable, Equatable {
    case stored(uid: UserID, ctx: ContextID, eval: EvaluationID, service: String)
    case released(uid: UserID, ctx: ContextID, eval: EvaluationID, service: String)
    case voided(uid: UserID, reason: LoginSecretVoiding)
    case refused(LoginSecretRefusal)
    /// `keyring-enable` (true) or `keyring-disable` (false), by `by`.
    case choice(uid: UserID, enabled: Bool, by: UserID)
}

extension Decision {
    /// The events are the record; a release needs its context open and the user's.
    mutating func recordLoginSecret(_ fact: LoginSecretFact) throws {
        switch fact {
        case .stored(let uid, let ctx, let eval, let service):
            emit(.loginSecretStored(uid: uid, ctx: ctx, eval: eval, service: service))
        case .released(let uid, let ctx, let eval, let service):
            let context = try self.context(ctx)
            guard context.uid == uid, context.isOpen else {
                throw Rejection(.badState, "The context is invalidated or not the user's.")
            }
            emit(.loginSecretReleased(uid: uid, ctx: ctx, eval: eval, service: service))
        case .voided(let uid, let reason):
            emit(.loginSecretVoided(uid: uid, reason: reason))
        case .refused(let refusal):
            emit(.loginSecretRefused(refusal))
        case .choice(let uid, let enabled, let by):
            emit(.loginSecretChoice(uid: uid, enabled: enabled, by: by))
        }
    }
}
