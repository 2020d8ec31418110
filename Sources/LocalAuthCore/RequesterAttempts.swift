// S-54: attempts made by one user against another count for the pair, not
// for the subject. `su VICTIM` run by X is an on-behalf context (S-42) whose
// *requester* is X: its wrong passwords delay and lock X's further attempts
// against VICTIM, and leave VICTIM's own counters (S-5, S-6) alone, so that
// nobody can lock another user out of their own sudo and login
// (pam_faillock's problem). The subject's own delay still holds for the
// requester too: a pair never gets guesses the subject's own counters
// would refuse, it only stops spending the subject's.

/// Who made an attempt against whom (S-54): the subject of the context
/// and the user who asked for it, when that is someone else.
public struct RequesterPair: Sendable, Hashable, Comparable {
    public var subject: UserID
    public var requester: UserID

    public init(subject: UserID, requester: UserID) {
        self.subject = subject
        self.requester = requester
    }

    public static func < (a: RequesterPair, b: RequesterPair) -> Bool {
        (a.subject, a.requester) < (b.subject, b.requester)
    }
}

/// A pair's passcode counters: S-5's and S-6's, kept apart from the subject's.
public struct RequesterAttempts: Sendable, Equatable {
    /// Consecutive counted wrong passcodes of this requester for this subject.
    public var passcodeFailures = 0
    /// The requester's attempts are refused until this time.
    public var retryAt: Int64?
    /// `MaxPasscodeFailures` reached: refused until the subject is reset.
    public var locked = false

    public init() {}
}

extension AuthState {
    /// The requester of context `ctx` when it is someone other than its
    /// subject (S-54), else nil.
    public func foreignRequester(_ ctx: ContextID?) -> UserID? {
        guard let ctx else { return nil }
        return contexts[ctx]?.requester
    }

    /// S-54: seconds until `requester`'s attempts against `subject` are
    /// allowed by the pair's own delay, 0 when they are.
    public func requesterRetryAfter(subject: UserID, requester: UserID, now: Int64) -> Int64 {
        guard let until = requesterAttempts[RequesterPair(subject: subject, requester: requester)]?.retryAt else { return 0 }
        let remaining = until - effectiveNow(now)
        guard remaining > 0 else { return 0 }
        return (remaining + Timestamp.second - 1) / Timestamp.second
    }

    /// S-54: a counted wrong passcode of `requester` against `subject`.
    mutating func countRequesterFailure(subject: UserID, requester: UserID, at time: Int64) {
        let pair = RequesterPair(subject: subject, requester: requester)
        var attempts = requesterAttempts[pair] ?? RequesterAttempts()
        attempts.passcodeFailures += 1
        if let delay = rules.passcodeDelay(afterFailures: attempts.passcodeFailures) {
            attempts.retryAt = max(time, clockHighWater) + delay
        }
        if rules.maxPasscodeFailures > 0, attempts.passcodeFailures >= rules.maxPasscodeFailures {
            attempts.locked = true
        }
        requesterAttempts[pair] = attempts
    }

    /// The requester knew the subject's passcode: their count starts again.
    mutating func requesterSucceeded(subject: UserID, requester: UserID) {
        requesterAttempts[RequesterPair(subject: subject, requester: requester)] = nil
    }

    /// An administrator's reset of `subject` (S-9) lifts every pair's too.
    mutating func resetRequesters(of subject: UserID) {
        guard !requesterAttempts.isEmpty else { return }
        requesterAttempts = requesterAttempts.filter { $0.key.subject != subject }
    }

    /// Passcode attempts left before a delay for a requester's prompt.
    public func requesterAttemptsLeft(subject: UserID, requester: UserID) -> Int {
        let failures = requesterAttempts[RequesterPair(subject: subject, requester: requester)]?.passcodeFailures ?? 0
        var left = max(1, rules.delayAfterFailures - failures)
        if rules.maxPasscodeFailures > 0 {
            left = min(left, max(1, rules.maxPasscodeFailures - failures))
        }
        return left
    }
}
