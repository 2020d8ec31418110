// Per-user state (SEMANTICS §3): only ever the fold of events. Lockout,
// backoff and the admin lock are derived here from failures and the rules in
// force when each failure happened; they are never recorded as events.

public struct UserState: Sendable, Equatable {
    /// Enrolled template names, in enrollment order.
    public var templates: [String] = []
    /// S-10: opaque token, changes whenever `templates` changes; "" if never enrolled.
    public var domainState = DomainState()
    public var passcodeSet: Bool = false
    /// S-1: consecutive biometric failures, across all contexts.
    public var biometricFailures: Int = 0
    /// S-2 (and S-41 after a repair): sticky until a passcode success or reset.
    public var biometryLockedOut: Bool = false
    /// S-5: consecutive counted passcode failures.
    public var passcodeFailures: Int = 0
    /// S-5: passcode entry refused until this time (failure time + delay).
    public var passcodeRetryAt: Int64?
    /// S-6: locked until an administrator resets the user.
    public var adminLocked: Bool = false
    /// S-11: time and boot of the last passcode success.
    public var lastPasscodeSuccess: Int64?
    public var lastPasscodeBootID: String?
    /// S-24: time of the last biometric device unlock.
    public var lastDeviceUnlock: Int64?
    /// S-30: the context whose evaluation holds this user's prompt.
    public var promptHolder: ContextID?
    /// Open contexts owned by this user.
    public var openContexts: Int = 0
    /// S-64: the failures since the last sign-in, the tally that sign-in
    /// closed (the notice), and when it happened.
    public var failuresSinceSignIn = FailureTally()
    public var notice = FailureTally()
    public var lastSignIn: Int64?

    public init() {}

    /// S-64: a sign-in closes the tally (it becomes the notice).
    mutating func signedIn(at time: Int64) {
        notice = failuresSinceSignIn
        failuresSinceSignIn = FailureTally()
        lastSignIn = time
    }

    /// S-1/S-2: one more biometric failure; the threshold's one locks biometry out.
    mutating func countBiometricFailure(lockoutThreshold: Int) {
        biometricFailures += 1
        if biometricFailures >= lockoutThreshold { biometryLockedOut = true }
    }

    /// Whether this user's state still says anything (else it can be dropped).
    var isEmpty: Bool { self == UserState() }
}

/// What `status` reports and `replay` prints for one user (S-38: both read
/// the same fold, so they agree on every field).
public struct UserStatus: Sendable, Equatable {
    public var uid: UserID
    public var biometry: BiometryType
    public var templates: Int
    public var passcodeSet: Bool
    public var biometricFailures: Int
    public var lockedOut: Bool
    public var passcodeFailures: Int
    /// Seconds until passcode entry is allowed again; 0 when it is allowed.
    public var retryAfter: Int64
    public var passcodeRetryAt: Int64?
    public var adminLocked: Bool
    public var contexts: Int
    /// S-64: the failures since the last sign-in, and when that was.
    public var failuresSinceSignIn = FailureTally()
    public var lastSignIn: Int64?
}
