// The verbs of PROTOCOL.md's table and the keys each takes, so the server
// answers `unknown-verb` and `bad-argument` from one table and clients spell
// verbs from the same one. Two extensions beyond the table, documented in
// docs/decisions/0001-where-the-spec-is-silent.md: `stats` (admin counters) and `message=` on `sensor`
// (the text of a `retry` reading). Which keys are required, and what a value means,
// is the server's business (e.g. a missing `reason=` is bad-argument, S-21).

public enum Verb: String, Sendable, CaseIterable, Hashable {
    case hello
    case ping
    case new
    case set
    case get
    case canEvaluate = "can-evaluate"
    case evaluate
    case fallback
    case passcode
    case cancel
    case invalidate
    case status
    case setPasscode = "set-passcode"
    case clearPasscode = "clear-passcode"
    case enroll
    case unenroll
    case sensor
    case unlocked
    case reset
    case quit
    case stats
    // Version 1.1 additions (PROTOCOL.md): LAEnvironment's watch, LARight's rights.
    case watch
    case cancelWatch = "cancel-watch"
    case rightSave = "right-save"
    case rightState = "right-state"
    case rightRemove = "right-remove"
    case rightAuthorize = "right-authorize"
    case rightDeauthorize = "right-deauthorize"
    case rightSecret = "right-secret"
    // Version 1.4 additions: the rights' keys.
    case rightPublicKey = "right-public-key"
    case rightSign = "right-sign"
    case rightDecrypt = "right-decrypt"
    case rightExchange = "right-exchange"
    case rightList = "right-list"
    // Version 1.3 additions: session agents (S-65).
    case registerAgent = "register-agent"
    // Issue 30 additions: the login secret (S-74..S-77).
    case loginSecret = "login-secret"
    case keyringEnable = "keyring-enable"
    case keyringDisable = "keyring-disable"
    case keyringStatus = "keyring-status"

    public var wireName: String { rawValue }

    /// The keys whose values are secrets, whatever the verb (PROTOCOL.md:
    /// `passcode`'s and `set-passcode`'s `secret=` and `old-secret=`,
    /// `right-save`'s base64 `secret=`), so a line of an unknown verb or
    /// with a misplaced key holds them apart too. The one list: the server's
    /// scanner keeps these values out of Strings (S-50, `SecretBytes`).
    public static let secretKeys = ["secret", "old-secret"]

    /// The keys PROTOCOL.md lists for the verb, required or optional.
    public var allowedKeys: [String] {
        switch self {
        case .hello: return ["protocol", "client"]
        case .ping, .quit, .stats: return []
        case .new: return ["uid", "service", "tty", "rhost", "requester"]
        case .set:
            return ["ctx", "fallback-title", "cancel-title", "reuse-duration", "interaction-not-allowed",
                    "localized-reason", "prompt"]
        case .get, .invalidate: return ["ctx"]
        // An app names its context; a session agent its request (S-68).
        case .fallback, .cancel: return ["ctx", "request"]
        case .canEvaluate: return ["ctx", "policy"]
        case .evaluate: return ["ctx", "policy", "reason", "prompt", "notice"]
        case .passcode: return ["ctx", "request", "secret"]
        case .status: return ["uid"]
        case .setPasscode: return ["secret", "old-secret", "uid"]
        case .clearPasscode, .unlocked, .reset: return ["uid"]
        case .enroll, .unenroll: return ["uid", "template"]
        case .sensor: return ["uid", "result", "template", "message"]
        case .watch, .cancelWatch: return ["uid"]
        case .rightSave: return ["identifier", "requirement", "secret"]
        case .rightState: return ["identifier"]
        case .rightRemove: return ["identifier", "all"]
        case .rightAuthorize: return ["ctx", "identifier", "reason", "prompt", "notice"]
        case .rightDeauthorize, .rightSecret: return ["ctx", "identifier"]
        case .rightPublicKey: return ["identifier"]
        case .rightSign, .rightDecrypt: return ["ctx", "identifier", "algorithm", "data"]
        case .rightExchange: return ["ctx", "identifier", "algorithm", "public-key", "requested-size", "shared-info"]
        case .rightList: return []
        case .registerAgent: return ["session"]
        case .loginSecret: return ["ctx"]
        case .keyringEnable: return []
        case .keyringDisable, .keyringStatus: return ["uid"]
        }
    }
}

extension Request {
    /// `unknown-verb`, then `bad-argument` for the first key the verb does
    /// not take; otherwise the verb.
    public func checkedVerb() -> Result<Verb, ProtocolError> {
        guard let verb = Verb(rawValue: verb) else {
            return .failure(ProtocolError(.unknownVerb, "Unknown verb '\(self.verb)'."))
        }
        if let error = arguments.check(allowedKeys: verb.allowedKeys, verb: verb.rawValue) {
            return .failure(error)
        }
        return .success(verb)
    }
}
