// The whole derived state: users, contexts, the rules in force, and the
// clock's high-water mark. `AuthState` is a value; the daemon keeps one and
// folds every event it appends into it (S-38).

public struct AuthState: Sendable, Equatable {
    public var users = UserTable()
    public var contexts: [ContextID: ContextState] = [:]
    public var rules: Rules = .default
    /// The boot the daemon runs in (S-11 PasscodeRequiredAfterBoot).
    public var bootID: String = ""
    /// The newest event time seen (S-8): delays are judged against
    /// max(now, clockHighWater), so setting the clock back never shortens one.
    public var clockHighWater: Int64 = 0
    /// Contexts whose evaluation waits at a prompt (S-31 timeouts).
    public var prompting: Set<ContextID> = []
    /// S-54: the passcode counters of attempts made by one user against
    /// another (RequesterAttempts.swift).
    public var requesterAttempts: [RequesterPair: RequesterAttempts] = [:]
    /// Events folded so far (the log's seq of the last one).
    public var eventCount: UInt64 = 0
    /// Why the sensor cannot read now (S-43: no fprintd, no reader), or nil.
    /// An input like the clock, not a fact of the log: the daemon sets it
    /// from its sensor backend, no event folds it, and a replayed state
    /// (which describes the log, not the hardware) always has nil.
    public var sensorProblem: String?

    public init(rules: Rules = .default) {
        self.rules = rules
    }

    public func user(_ uid: UserID) -> UserState {
        users[uid] ?? UserState()
    }

    /// The time against which delays are judged (S-8).
    public func effectiveNow(_ now: Int64) -> Int64 {
        max(now, clockHighWater)
    }
}

// MARK: - Derived facts used by `decide`, `status` and `replay`.

extension AuthState {
    /// S-5: seconds until passcode entry is allowed, 0 when allowed.
    public func passcodeRetryAfter(_ uid: UserID, now: Int64) -> Int64 {
        guard let until = user(uid).passcodeRetryAt else { return 0 }
        let remaining = until - effectiveNow(now)
        guard remaining > 0 else { return 0 }
        return (remaining + Timestamp.second - 1) / Timestamp.second
    }

    /// S-11: whether the passcode must be entered before biometry is usable.
    public func passcodeRequired(_ uid: UserID, now: Int64) -> Bool {
        users.withUser(uid) { user in passcodeRequired(user, now: now) }
    }

    /// For callers that hold the user in place (`UserTable.withUser`).
    @inline(__always)
    func passcodeRequired(_ user: borrowing UserView, now: Int64) -> Bool {
        guard user.passcodeSet else { return false }
        if rules.passcodeRequiredAfterBoot, !user.lastPasscodeWasInBoot(bootID) {
            return true
        }
        if rules.passcodeRequiredAfter > 0 {
            guard let last = user.lastPasscodeSuccess else { return true }
            return effectiveNow(now) - last > rules.passcodeRequiredAfter
        }
        return false
    }

    /// Why biometry is unusable for this user, as an LAError and wire reason;
    /// nil when a biometric prompt may be shown. Order is S-18 step 3.
    public func biometryUnusable(_ uid: UserID, now: Int64) -> Failure? {
        users.withUser(uid) { user in biometryUnusable(user, now: now) }
    }

    /// For callers that hold the user in place (`UserTable.withUser`).
    @inline(__always)
    func biometryUnusable(_ user: borrowing UserView, now: Int64) -> Failure? {
        if rules.biometryType == .none { return Failure(.biometryNotAvailable) }
        if let sensorProblem { return Failure(.biometryNotAvailable, message: sensorProblem) }
        if !user.passcodeSet { return Failure(.passcodeNotSet) }
        if !user.hasTemplates { return Failure(.biometryNotEnrolled) }
        if user.biometryLockedOut || user.adminLocked { return Failure(.biometryLockout) }
        if passcodeRequired(user, now: now) {
            return Failure(.biometryLockout, message: "Passcode is required to enable biometry.", reason: "passcode-required")
        }
        return nil
    }

    /// The user's domain state (S-10); "" if never enrolled.
    public func domainState(_ uid: UserID) -> DomainState {
        users.withUser(uid) { user in user.domainState }
    }

    /// Passcode failures left before a delay (or the admin lock) starts.
    public func passcodeAttemptsLeft(_ uid: UserID) -> Int {
        let failures = user(uid).passcodeFailures
        var left = max(1, rules.delayAfterFailures - failures)
        if rules.maxPasscodeFailures > 0 {
            left = min(left, max(1, rules.maxPasscodeFailures - failures))
        }
        return left
    }

    public func status(_ uid: UserID, now: Int64) -> UserStatus {
        let user = user(uid)
        return UserStatus(
            uid: uid, biometry: rules.biometryType, templates: user.templates.count,
            passcodeSet: user.passcodeSet, biometricFailures: user.biometricFailures,
            lockedOut: user.biometryLockedOut, passcodeFailures: user.passcodeFailures,
            retryAfter: passcodeRetryAfter(uid, now: now),
            passcodeRetryAt: user.passcodeRetryAt.flatMap { $0 > effectiveNow(now) ? $0 : nil },
            adminLocked: user.adminLocked, contexts: user.openContexts,
            failuresSinceSignIn: user.failuresSinceSignIn, lastSignIn: user.lastSignIn
        )
    }

    /// The earliest moment a waiting prompt times out (S-31), for the timer.
    public var nextPromptDeadline: Int64? {
        prompting.compactMap { contexts[$0]?.evaluation?.promptedAt }.min().map { $0 + rules.promptTimeout }
    }
}
