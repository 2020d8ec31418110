// A passcode as a client sends it (PROTOCOL.md `passcode`, `set-passcode`)
// and what changing one takes (S-36). The core judges only whether a secret
// is there and how long it is, and hands it back: it never keeps one.
// Checking and hashing are the daemon's, on its workers.

public enum PasscodeSecret {
    /// Characters a new passcode needs at least.
    public static let minimumLength = 4
    /// Bytes of any secret (a passcode, `old-secret=`): what crypt_rn takes
    /// (CRYPT_MAX_PASSPHRASE_SIZE with its NUL), and PAM's answer limit.
    public static let maximumBytes = 511

    /// A secret to check (`passcode`'s `secret=`, `old-secret=`): present
    /// and within the limit. Empty is an attempt like any other.
    public static func attempt(_ secret: String?, key: String = "secret") -> Result<String, Rejection> {
        guard let secret else { return .failure(Rejection(.missingArgument, "\(key)= is required.")) }
        if let problem = tooLong(secret, key: key) { return .failure(problem) }
        return .success(secret)
    }

    /// A new passcode (`set-passcode`'s `secret=`): present, at least
    /// `minimumLength` characters (what a person types, not bytes), within
    /// the byte limit.
    public static func new(_ secret: String?) -> Result<String, Rejection> {
        guard let secret else { return .failure(Rejection(.missingArgument, "secret= is required.")) }
        guard secret.count >= minimumLength else {
            return .failure(Rejection(.badArgument, "A passcode needs at least \(minimumLength) characters."))
        }
        if let problem = tooLong(secret, key: "secret") { return .failure(problem) }
        return .success(secret)
    }

    private static func tooLong(_ secret: String, key: String) -> Rejection? {
        guard secret.utf8.count > maximumBytes else { return nil }
        return Rejection(.badArgument, "\(key)= is limited to \(maximumBytes) bytes.")
    }
}

/// What a `set-passcode` takes once its new passcode is acceptable (S-36).
public enum PasscodeChange {
    /// A user changes their own existing passcode: the old one is checked
    /// first, as a counted attempt (S-5), judged against the delay (S-46).
    case proveOldSecret(String)
    /// An administrator sets one, or a user sets their first: no old one.
    case setNew

    /// `own`: the caller is the subject. `stored`: the passcode store holds
    /// one for the subject now (the store's word, not the log's: the two
    /// differ after a crash between them, and the store wins). An
    /// `old-secret=` that is not needed is ignored.
    public static func plan(own: Bool, stored: Bool, oldSecret: String?) -> Result<PasscodeChange, Rejection> {
        guard own, stored else { return .success(.setNew) }
        guard oldSecret != nil else {
            return .failure(Rejection(.missingArgument, "old-secret= is required to change an existing passcode."))
        }
        return PasscodeSecret.attempt(oldSecret, key: "old-secret").map { .proveOldSecret($0) }
    }
}

/// S-7: the same wrong passcode twice in a row counts once. The daemon keeps,
/// per user and in memory only, a keyed fingerprint of the last wrong
/// passcode (never the passcode itself). It is not part of `AuthState`,
/// which snapshots store: nothing derived from a wrong passcode reaches disk.
public struct WrongPasscodeMemory: CustomStringConvertible {
    private var last: [UserID: [UInt8]] = [:]

    public init() {}

    /// A verdict on an attempt of `uid`'s whose fingerprint is given: true
    /// when it is wrong and repeats the last wrong one. A right one forgets.
    public mutating func isRepeat(_ uid: UserID, correct: Bool, fingerprint: [UInt8]) -> Bool {
        if correct {
            last[uid] = nil
            return false
        }
        defer { last[uid] = fingerprint }
        return last[uid] == fingerprint
    }

    /// A new passcode, or a reset: the next wrong attempt counts whatever it is.
    public mutating func fold(_ event: EventBody) {
        switch event {
        case .passcodeChanged(let uid, _, _), .userReset(let uid, _): last[uid] = nil
        default: break
        }
    }

    /// Never the fingerprints (a log line or a crash report must not carry them).
    public var description: String { "WrongPasscodeMemory(\(last.count) users)" }
}
