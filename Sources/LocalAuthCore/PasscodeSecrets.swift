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
        if let refusal = utf8(secret, { refusal(ofAttempt: $0, key: key) }) { return .failure(refusal) }
        return .success(secret ?? "")
    }

    /// A new passcode (`set-passcode`'s `secret=`): present, at least
    /// `minimumLength` characters (what a person types, not bytes), within
    /// the byte limit.
    public static func new(_ secret: String?) -> Result<String, Rejection> {
        if let refusal = utf8(secret, { refusal(ofNew: $0) }) { return .failure(refusal) }
        return .success(secret ?? "")
    }

    /// `attempt`'s judgement over the secret's UTF-8 bytes (S-50: the
    /// daemon holds secrets as bytes, never as Strings): nil when acceptable.
    public static func refusal(ofAttempt secret: UnsafeBufferPointer<UInt8>?, key: String = "secret") -> Rejection? {
        guard let secret else { return Rejection(.missingArgument, "\(key)= is required.") }
        return tooLong(secret, key: key)
    }

    /// `new`'s judgement over the secret's UTF-8 bytes: nil when acceptable.
    public static func refusal(ofNew secret: UnsafeBufferPointer<UInt8>?) -> Rejection? {
        guard let secret else { return Rejection(.missingArgument, "secret= is required.") }
        guard characters(in: secret, upTo: minimumLength) >= minimumLength else {
            return Rejection(.badArgument, "A passcode needs at least \(minimumLength) characters.")
        }
        return tooLong(secret, key: "secret")
    }

    private static func tooLong(_ secret: UnsafeBufferPointer<UInt8>, key: String) -> Rejection? {
        guard secret.count > maximumBytes else { return nil }
        return Rejection(.badArgument, "\(key)= is limited to \(maximumBytes) bytes.")
    }

    /// The characters (extended grapheme clusters, as String counts them)
    /// that `utf8` starts, counted up to `limit`, without making a String of
    /// it. Invalid UTF-8 counts as U+FFFD, as `String(decoding:)` reads it.
    /// `Unicode._CharacterRecognizer` is the standard library's own grapheme
    /// breaker (public, if underscored): the one way to count as String
    /// does without making one.
    static func characters(in utf8: UnsafeBufferPointer<UInt8>, upTo limit: Int) -> Int {
        var decoder = Unicode.UTF8()
        var bytes = utf8.makeIterator()
        var breaks = Unicode._CharacterRecognizer()
        var count = 0
        while count < limit {
            let scalar: Unicode.Scalar
            switch decoder.decode(&bytes) {
            case .scalarValue(let value): scalar = value
            case .error: scalar = "\u{FFFD}"
            case .emptyInput: return count
            }
            if breaks.hasBreak(before: scalar) { count += 1 }
        }
        return count
    }

    /// `body` over a String's UTF-8 (nil for nil), for the String forms.
    static func utf8<R>(_ secret: String?, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        guard var secret else { return body(nil) }
        return secret.withUTF8 { body($0) }
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
        PasscodeSecret.utf8(oldSecret) { mustProveOldSecret(own: own, stored: stored, oldSecret: $0) }
            .map { $0 ? .proveOldSecret(oldSecret ?? "") : .setNew }
    }

    /// `plan` over the old secret's UTF-8 bytes (S-50): true when the old
    /// secret given must be checked first, false when none is needed.
    public static func mustProveOldSecret(own: Bool, stored: Bool,
                                          oldSecret: UnsafeBufferPointer<UInt8>?) -> Result<Bool, Rejection> {
        guard own, stored else { return .success(false) }
        guard oldSecret != nil else {
            return .failure(Rejection(.missingArgument, "old-secret= is required to change an existing passcode."))
        }
        if let refusal = PasscodeSecret.refusal(ofAttempt: oldSecret, key: "old-secret") { return .failure(refusal) }
        return .success(true)
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
