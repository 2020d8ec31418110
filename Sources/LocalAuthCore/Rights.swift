// LARight's persisted rights as the core sees them (PROTOCOL.md v1.1): the
// requirement names of the wire, the identifier grammar, and which policy an
// authorization of each requirement evaluates. The rights themselves and
// their sealed secrets live in the daemon's right store (a file of its own,
// never the log); the log records only that a right was saved, removed,
// authorized or had its secret read (AUDIT.md v1.1), with no secret.

/// `requirement=`: Apple's LAAuthenticationRequirement, as the wire names it.
public enum RightRequirement: String, Sendable, CaseIterable, Hashable {
    /// Biometry or the passcode (`LAAuthenticationRequirement.default`).
    case `default` = "default"
    /// Biometry only (`.biometry`, and `.biometry(fallback: .default)`).
    case biometry = "biometry"
    /// Biometry, then the passcode (`.biometry(fallback: .devicePasscode)`).
    case biometryPasscodeFallback = "biometry-passcode-fallback"
    /// Biometry with the enrolled set of the save (`.biometryCurrentSet`).
    case biometryCurrentSet = "biometry-current-set"

    public var wireName: String { rawValue }

    /// The policy that `right-authorize` evaluates.
    public var policy: Policy {
        switch self {
        case .default, .biometryPasscodeFallback: return .owner
        case .biometry, .biometryCurrentSet: return .biometrics
        }
    }
}

public enum RightIdentifier {
    public static let maximumLength = 128

    /// PROTOCOL.md: 1..128 characters of `A-Z a-z 0-9 . _ -`.
    public static func isValid(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= maximumLength else { return false }
        return utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }
}

/// What `Command.recordRight` records: one of AUDIT.md v1.1's right events.
public enum RightFact: Sendable, Equatable {
    case saved(uid: UserID, identifier: String, requirement: RightRequirement)
    case removed(uid: UserID, identifier: String, requirement: RightRequirement)
    case authorized(uid: UserID, ctx: ContextID, identifier: String, method: SuccessMethod)
    case secretRead(uid: UserID, ctx: ContextID, identifier: String)
    /// S-78: the key a save made (the SHA-256 of its public key, hex).
    case keyCreated(uid: UserID, identifier: String, publicKeySHA256: String)
    /// S-79: the right's private key is used once, on an authorized context.
    case keyUsed(uid: UserID, ctx: ContextID, identifier: String, algorithm: KeyAlgorithm)
    /// S-59: the account the right was bound to is gone; so is the right.
    case dropped(uid: UserID, identifier: String, requirement: RightRequirement, name: String?, reason: RightDropReason)
}

/// S-59: how the daemon saw that a right's account is gone.
public enum RightDropReason: String, Sendable, CaseIterable, Hashable {
    /// The uid has no entry in the user database any more.
    case accountRemoved = "account-removed"
    /// The uid has an entry under another name (or one appeared where there was none).
    case accountReplaced = "account-replaced"
}

/// S-59: a name the user database gives a uid, as the log and the right
/// store keep it: 1..256 bytes of UTF-8 without control characters (what
/// NSS gives is hostile input; anything else is not recorded as a name).
public enum AccountName {
    public static let maximumBytes = 256

    public static func isValid(_ name: String) -> Bool {
        let utf8 = name.utf8
        guard !utf8.isEmpty, utf8.count <= maximumBytes else { return false }
        return name.unicodeScalars.allSatisfy { scalar in
            !(scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0))
        }
    }
}

extension Decision {
    /// Rights change no per-user or per-context state: the event is the
    /// record. A context-bound fact needs the context open and the user's own.
    mutating func recordRight(_ fact: RightFact) throws {
        switch fact {
        case .saved(let uid, let identifier, let requirement):
            emit(.rightSaved(uid: uid, identifier: identifier, requirement: requirement))
        case .removed(let uid, let identifier, let requirement):
            emit(.rightRemoved(uid: uid, identifier: identifier, requirement: requirement))
        case .authorized(let uid, let ctx, let identifier, let method):
            try openContext(ctx, of: uid)
            emit(.rightAuthorized(uid: uid, ctx: ctx, identifier: identifier, method: method))
        case .secretRead(let uid, let ctx, let identifier):
            try openContext(ctx, of: uid)
            emit(.rightSecretRead(uid: uid, ctx: ctx, identifier: identifier))
        case .keyCreated(let uid, let identifier, let digest):
            emit(.rightKeyCreated(uid: uid, identifier: identifier, publicKeySHA256: digest))
        case .keyUsed(let uid, let ctx, let identifier, let algorithm):
            try openContext(ctx, of: uid)
            emit(.rightKeyUsed(uid: uid, ctx: ctx, identifier: identifier, algorithm: algorithm))
        case .dropped(let uid, let identifier, let requirement, let name, let reason):
            emit(.rightDropped(uid: uid, identifier: identifier, requirement: requirement, name: name, reason: reason))
        }
    }

    private func openContext(_ ctx: ContextID, of uid: UserID) throws {
        let context = try self.context(ctx)
        guard context.uid == uid, context.isOpen else {
            throw Rejection(.badState, "The context is invalidated or not the user's.")
        }
    }
}
