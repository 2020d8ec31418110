// S-64: the failures recorded for a user since their last sign-in, derived
// from the log alone (so replay shows what the live daemon shows). A
// sign-in (biometric-matched, passcode-accepted) closes the tally: it
// becomes the user's notice, which a success reply that asked for it
// carries ("2 failed fingerprint attempts and 1 wrong password since your
// last sign-in, the last at 14:02 via sudo on pts/2"), and a new tally
// starts.

public struct FailureTally: Sendable, Equatable {
    /// biometric-failed events.
    public var biometric = 0
    /// passcode-rejected events, counted or not (S-7): each was an attempt.
    public var passcode = 0
    /// passcode-refused events: attempts made during a delay or a lock (S-46).
    public var refused = 0
    /// The last failure's time, and the PAM service, tty and remote host of
    /// its context when it had them (S-42) and still existed.
    public var lastAt: Int64?
    public var lastService: String?
    public var lastTTY: String?
    public var lastRHost: String?

    public init() {}

    public var total: Int { biometric + passcode + refused }

    public enum Kind: Sendable { case biometric, passcode, refused }

    /// One more failure at `time`, of a context with these labels.
    mutating func count(_ kind: Kind, at time: Int64, labels: ContextLabels?) {
        switch kind {
        case .biometric: biometric += 1
        case .passcode: passcode += 1
        case .refused: refused += 1
        }
        lastAt = time
        lastService = labels?.service
        lastTTY = labels?.tty
        lastRHost = labels?.rhost
    }
}

/// An on-behalf context's PAM service, tty and remote host (S-42), kept on
/// the context for S-64's "via sudo on pts/2": boxed, so that the contexts
/// of ordinary clients (the many) carry one nil reference.
public final class ContextLabels: Sendable, Equatable {
    public let service: String?
    public let tty: String?
    public let rhost: String?

    public init(service: String?, tty: String?, rhost: String?) {
        self.service = service
        self.tty = tty
        self.rhost = rhost
    }

    /// The labels an origin records, or nil when it records none.
    static func of(_ origin: ContextOrigin) -> ContextLabels? {
        guard origin.service != nil || origin.tty != nil || origin.rhost != nil else { return nil }
        return ContextLabels(service: origin.service, tty: origin.tty, rhost: origin.rhost)
    }

    public static func == (a: ContextLabels, b: ContextLabels) -> Bool {
        a.service == b.service && a.tty == b.tty && a.rhost == b.rhost
    }
}
