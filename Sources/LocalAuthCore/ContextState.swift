// Per-context state (SEMANTICS §4) and the per-evaluation state machine (§6).
// A context lives in the state from `context-created` until its connection is
// gone (`context-invalidated` with reason disconnect/restart, or
// `context-released`); an app-invalidated context stays so that it can keep
// answering invalidContext (-10) to its owner (S-13).

public struct ContextState: Sendable, Equatable {
    public var uid: UserID
    public var pid: ProcessID
    public var invalidation: InvalidationReason?
    /// S-17: none until the first can-evaluate.
    public var biometry: BiometryType = .none
    /// S-10/S-19: the domain state last handed to this context, or "".
    public var domainState = DomainState()
    /// nil = default "Enter Password"; "" hides the fallback option.
    public var fallbackTitle: String?
    /// nil or "" = "Cancel".
    public var cancelTitle: String?
    /// Seconds, already capped at 300.
    public var reuseDuration: Int64 = 0
    public var interactionNotAllowed: Bool = false
    /// S-44: whether a passcode prompt may reach this context (ContextOrigin).
    public var passcodePrompts: Bool = true
    /// S-64: an on-behalf context's service, tty and remote host, or nil.
    public var labels: ContextLabels?
    /// S-54: who asked for this on-behalf context, when that is not its
    /// subject: its failures count for the pair, and it never preempts.
    public var requester: UserID?
    public var localizedReason: String?
    /// S-66: whether the context asks for its session's agent.
    public var prompt: PromptDestination = .client
    /// S-23: the methods that have succeeded on this context.
    public var succeededBiometric: Bool = false
    public var succeededPasscode: Bool = false
    /// The last evaluation number handed out.
    public var lastEvaluation: EvaluationID = 0
    /// S-22: at most one running evaluation.
    public var evaluation: Evaluation?

    public init(uid: UserID, pid: ProcessID) {
        self.uid = uid
        self.pid = pid
    }

    public var isOpen: Bool { invalidation == nil }

    public static let defaultFallbackTitle = "Enter Password"
    public static let defaultCancelTitle = "Cancel"

    public var effectiveCancelTitle: String {
        guard let title = cancelTitle, !title.isEmpty else { return ContextState.defaultCancelTitle }
        return title
    }

    /// nil when the fallback option is hidden.
    public var effectiveFallbackTitle: String? {
        guard let title = fallbackTitle else { return ContextState.defaultFallbackTitle }
        return title.isEmpty ? nil : title
    }

    /// S-17/S-19: what a can-evaluate leaves on the context (one in-place
    /// access for both fields: each `values[i].x = …` is a modify access).
    mutating func checked(biometry: BiometryType, domainState: DomainState?) {
        self.biometry = biometry
        if let domainState { self.domainState = domainState }
    }
}

/// One running evaluation.
public struct Evaluation: Sendable, Equatable {
    public enum Phase: Sendable, Equatable {
        /// Started, no prompt shown yet (only between two events of one decision).
        case starting
        /// A biometric prompt waits for the sensor.
        case biometric(Prompt)
        /// A passcode prompt waits for the client's `passcode`.
        case passcode(Prompt)
        /// A passcode was submitted and is being checked by a worker.
        case verifyingPasscode
        /// S-60: the combined prompt waits for the sensor and a passcode at
        /// once; `checking`: a passcode sent at it is being checked (the
        /// sensor still scans, no other passcode is taken meanwhile).
        case combined(Prompt, checking: Bool)
    }

    public var id: EvaluationID
    public var policy: Policy
    public var reason: String
    public var phase: Phase = .starting
    /// When the current prompt was shown (S-31).
    public var promptedAt: Int64 = 0
    /// Biometric failures seen by this evaluation (S-27).
    public var biometricFailures: Int = 0
    /// S-66: the agent its prompts go to, once routed (nil: the client).
    public var route: AgentRoute?

    public init(id: EvaluationID, policy: Policy, reason: String) {
        self.id = id
        self.policy = policy
        self.reason = reason
    }

    /// Whether a prompt is waiting for an answer (a prompt timeout applies).
    public var isAtPrompt: Bool {
        switch phase {
        case .biometric, .passcode, .combined: return true
        case .starting, .verifyingPasscode: return false
        }
    }

    /// At the passcode prompt, or waiting for a submitted passcode's verdict
    /// (not at a combined prompt: there the sensor still scans).
    public var isInPasscodePhase: Bool {
        switch phase {
        case .passcode, .verifyingPasscode: return true
        case .starting, .biometric, .combined: return false
        }
    }

    /// Whether a `passcode` is taken now: a passcode prompt, or a combined
    /// one with no passcode of it being checked (S-28, S-60).
    public var takesPasscode: Bool {
        switch phase {
        case .passcode, .combined(_, checking: false): return true
        case .starting, .biometric, .verifyingPasscode, .combined(_, checking: true): return false
        }
    }

    /// Whether a submitted passcode's verdict is awaited (S-28, S-60).
    public var awaitsVerdict: Bool {
        switch phase {
        case .verifyingPasscode, .combined(_, checking: true): return true
        case .starting, .biometric, .passcode, .combined(_, checking: false): return false
        }
    }

    /// Whether the sensor scans for this evaluation: a biometric or a
    /// combined prompt waits (S-27, S-60).
    public var isScanning: Bool {
        switch phase {
        case .biometric, .combined: return true
        case .starting, .passcode, .verifyingPasscode: return false
        }
    }
}
