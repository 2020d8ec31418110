// The values that events carry (why a context ended, how an evaluation
// succeeded, a prompt, a context's property, a sensor's reading, the halves
// of a combined prompt, where an enrollment came from): each reaches the log
// inside an event (Event.swift), so each case keeps its name and number.

/// Why a context stopped being usable (AUDIT.md `context-invalidated`).
public enum InvalidationReason: String, Sendable, CaseIterable {
    case app, disconnect, restart
}

/// How an evaluation succeeded (PROTOCOL.md `method=`).
public enum SuccessMethod: String, Sendable, CaseIterable {
    case biometric, passcode, cached, reuse
}

/// What the client is asked to show (PROTOCOL.md §Prompts).
public struct Prompt: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case biometric, passcode
        /// S-60: the sensor and the passcode at once (PROTOCOL.md 1.2).
        case biometricOrPasscode = "biometric-or-passcode"
    }
    public var kind: Kind
    /// Biometric prompts: the attempt number, from 1. Passcode prompts: 0.
    public var attempt: Int
    /// Biometric prompts: whether the fallback option is offered.
    public var fallbackOffered: Bool
    /// Passcode prompts: failures left before a delay starts.
    public var attemptsLeft: Int
    /// Why the prompt is shown again ("Try again."), or nil.
    public var message: String?
    /// S-60: on a biometric prompt whose passcode half has ended (a delay),
    /// the seconds until passcode entry is allowed; 0 otherwise.
    public var retryAfter: Int64

    public init(kind: Kind, attempt: Int = 0, fallbackOffered: Bool = false, attemptsLeft: Int = 0, message: String? = nil,
                retryAfter: Int64 = 0) {
        self.kind = kind
        self.attempt = attempt
        self.fallbackOffered = fallbackOffered
        self.attemptsLeft = attemptsLeft
        self.message = message
        self.retryAfter = retryAfter
    }
}

/// A context's settable properties (S-16), by wire name.
public enum ContextProperty: Sendable, Equatable {
    case fallbackTitle(String)
    case cancelTitle(String)
    case reuseDuration(Int64)
    case interactionNotAllowed(Bool)
    case localizedReason(String)
    /// S-66: whether the context's prompts go to its session's agent.
    case prompt(PromptDestination)

    public static let names = ["fallback-title", "cancel-title", "reuse-duration", "interaction-not-allowed", "localized-reason",
                               "prompt"]

    public var name: String {
        switch self {
        case .fallbackTitle: return "fallback-title"
        case .cancelTitle: return "cancel-title"
        case .reuseDuration: return "reuse-duration"
        case .interactionNotAllowed: return "interaction-not-allowed"
        case .localizedReason: return "localized-reason"
        case .prompt: return "prompt"
        }
    }

    public var value: String {
        switch self {
        case .fallbackTitle(let s), .cancelTitle(let s), .localizedReason(let s): return s
        case .reuseDuration(let n): return String(n)
        case .interactionNotAllowed(let b): return b ? "true" : "false"
        case .prompt(let destination): return destination.rawValue
        }
    }

    /// Parses a wire name and value; nil when either is invalid. Reuse
    /// durations above 300 s are accepted and act as 300 (S-16).
    public init?(name: String, value: String) {
        switch name {
        case "fallback-title": self = .fallbackTitle(value)
        case "cancel-title": self = .cancelTitle(value)
        case "localized-reason": self = .localizedReason(value)
        case "reuse-duration":
            guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            let digits = value.drop(while: { $0 == "0" })  // "0000010" is 10, not "long"
            let seconds = digits.utf8.count > 6 ? AuthLimits.maximumReuseDuration : (Int64(digits) ?? 0)
            self = .reuseDuration(min(seconds, AuthLimits.maximumReuseDuration))
        case "interaction-not-allowed":
            switch value {
            case "true": self = .interactionNotAllowed(true)
            case "false": self = .interactionNotAllowed(false)
            default: return nil
            }
        case "prompt":
            guard let destination = PromptDestination(rawValue: value) else { return nil }
            self = .prompt(destination)
        default: return nil
        }
    }
}

/// What the simulated (or a real) sensor reported.
public enum SensorReading: Sendable, Equatable {
    case match
    case noMatch
    case retry(message: String)
    case disconnect
    /// The sensor failed without a verdict (fprintd's verify-unknown-error):
    /// the prompt ends with systemCancel (S-43).
    case error(message: String)
}

/// S-60: the two halves of a combined prompt.
public enum PromptHalf: String, Sendable, CaseIterable {
    case biometric, passcode
}

/// S-60: why a half of a combined prompt ended (AUDIT.md `prompt-half-ended`).
public enum HalfEnd: String, Sendable, CaseIterable {
    /// Biometric half: the failure locked biometry out (S-2), or a lock
    /// arrived while the prompt waited.
    case lockout
    /// Biometric half: the evaluation's AttemptsPerEvaluation failures.
    case attempts
    /// Biometric half: the sensor disappeared (S-27).
    case disconnect
    /// Biometric half: the sensor failed without a verdict (S-43).
    case error
    /// Passcode half: a delay started, or an attempt was refused in one (S-5, S-46).
    case delay
}

/// S-61..S-63: why biometry was not offered where the client is.
public enum BiometrySkip: String, Sendable, CaseIterable {
    case remote
    case lidClosed = "lid-closed"
    case suspend
}

/// Who changed a user's templates (AUDIT.md v1.1 `enrollment-changed`).
public enum EnrollmentSource: UInt8, Sendable, Equatable, CaseIterable {
    /// An administrator's `enroll` / `unenroll` (simulated sensor).
    case admin = 0
    /// fprintd's enrolled fingers, as the daemon noticed them (S-43).
    case fprintd = 1
}

public enum AuthLimits {
    /// Apple's LATouchIDAuthenticationMaximumAllowableReuseDuration, seconds.
    public static let maximumReuseDuration: Int64 = 300
}
