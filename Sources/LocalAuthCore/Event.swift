// Events: everything that happens, as facts in the past tense. The log stores
// them, `evolve` folds them into `AuthState`, and nothing else changes state.
//
// Every kind has a stable name (AUDIT.md's `type`) and a stable number (the
// log's type code). Kinds are only ever added at the end; a field added to a
// kind bumps that kind's `EventKind.layoutVersion`, and the codec keeps
// reading every older layout of it.

public struct Event: Sendable, Equatable {
    /// The first layout version of every kind (the payload's first byte);
    /// each kind writes its own `EventKind.layoutVersion`.
    public static let version: UInt8 = 1

    /// Wall-clock microseconds at which it happened (S-8).
    public var time: Int64
    public var body: EventBody

    public init(time: Int64, _ body: EventBody) {
        self.time = time
        self.body = body
    }
}

public enum EventBody: Sendable, Equatable {
    case daemonStarted(version: String, bootID: String, pid: ProcessID)
    case daemonStopped
    case contextCreated(uid: UserID, ctx: ContextID, pid: ProcessID, origin: ContextOrigin = .own)
    case contextPropertySet(uid: UserID, ctx: ContextID, property: ContextProperty)
    case contextInvalidated(uid: UserID, ctx: ContextID, reason: InvalidationReason)
    case policyChecked(uid: UserID, ctx: ContextID, policy: Policy, biometry: BiometryType, result: LAErrorCode?, reason: String?)
    case evaluationStarted(uid: UserID, ctx: ContextID, eval: EvaluationID, policy: Policy, reason: String)
    case promptShown(uid: UserID, ctx: ContextID, eval: EvaluationID, prompt: Prompt)
    case biometricMatched(uid: UserID, ctx: ContextID, eval: EvaluationID)
    case biometricFailed(uid: UserID, ctx: ContextID, eval: EvaluationID)
    case biometricRetry(uid: UserID, ctx: ContextID, eval: EvaluationID, message: String)
    case fallbackChosen(uid: UserID, ctx: ContextID, eval: EvaluationID)
    case passcodeAccepted(uid: UserID, ctx: ContextID?, eval: EvaluationID?)
    /// `requester` (layout 2, S-54): the context's requester when it is not
    /// the subject; the failure counts for that pair, not for `uid`.
    case passcodeRejected(uid: UserID, ctx: ContextID?, eval: EvaluationID?, counted: Bool, requester: UserID? = nil)
    case evaluationSucceeded(uid: UserID, ctx: ContextID, eval: EvaluationID, method: SuccessMethod)
    case evaluationFailed(uid: UserID, ctx: ContextID, eval: EvaluationID, failure: Failure)
    /// `source` .fprintd (layout 2): the templates are the finger names
    /// fprintd lists for the user (S-43); `by` is then the daemon's uid.
    case enrollmentChanged(uid: UserID, templates: [String], by: UserID, domainState: String, source: EnrollmentSource = .admin)
    case passcodeChanged(uid: UserID, set: Bool, by: UserID)
    case deviceUnlocked(uid: UserID, by: UserID)
    case userReset(uid: UserID, by: UserID)
    case logRepaired(firstLostSeq: UInt64, by: UserID)
    case rulesApplied(Rules)
    case biometricDisconnected(uid: UserID, ctx: ContextID, eval: EvaluationID)
    case passcodeSubmitted(uid: UserID, ctx: ContextID, eval: EvaluationID)
    case contextReleased(uid: UserID, ctx: ContextID)
    /// S-46: a passcode attempt refused unchecked, during a delay or an admin
    /// lock. `retryAfter`: seconds left of the delay (0 under an admin lock).
    case passcodeRefused(uid: UserID, ctx: ContextID?, eval: EvaluationID?, retryAfter: Int64)
    /// S-49: the snapshot covering `snapshotSeq` was written; `sha256` is the
    /// SHA-256 of its whole file (64 lower-case hex digits). A snapshot is
    /// trusted only when its file still has this digest.
    case snapshotRecorded(snapshotSeq: UInt64, sha256: String)
    /// S-49: the daemon was started with `--accept-log-rollback` on a log
    /// (ending at `logSeq`) behind the head the journal recorded at `journalSeq`.
    case logRollbackAccepted(journalSeq: UInt64, logSeq: UInt64, by: UserID)
    // LARight's rights (AUDIT.md v1.1): never a secret, only who and which.
    case rightSaved(uid: UserID, identifier: String, requirement: RightRequirement)
    case rightRemoved(uid: UserID, identifier: String, requirement: RightRequirement)
    case rightAuthorized(uid: UserID, ctx: ContextID, identifier: String, method: SuccessMethod)
    case rightSecretRead(uid: UserID, ctx: ContextID, identifier: String)
    /// S-78, S-79 (AUDIT.md v1.3): a right's key was made (the SHA-256 of its
    /// public key, 64 lower-case hex digits), or used for one operation with
    /// one of KeyAlgorithm's algorithms. Never the data, a result or a key.
    case rightKeyCreated(uid: UserID, identifier: String, publicKeySHA256: String)
    case rightKeyUsed(uid: UserID, ctx: ContextID, identifier: String, algorithm: KeyAlgorithm)
    /// S-59: a right (its secret and key with it) was dropped because the
    /// account it was bound to at its save is gone: `name` is that
    /// account's user name (nil: the uid had no passwd entry then).
    case rightDropped(uid: UserID, identifier: String, requirement: RightRequirement, name: String?, reason: RightDropReason)
    /// S-48, S-19: identical policy checks that followed each other with
    /// nothing recorded between them, in one record (kind 33; the daemon's
    /// LogRecorder coalesces a loop turn's repeats). Folds exactly as
    /// `count` policy-checked events would (RepeatedChecks.swift).
    case policyCheckedRepeatedly(RepeatedChecks)
    /// S-60: one half of a combined prompt ended; the other goes on.
    /// `retryAfter`: the passcode half's delay in seconds, else 0.
    case promptHalfEnded(uid: UserID, ctx: ContextID, eval: EvaluationID, half: PromptHalf, reason: HalfEnd, retryAfter: Int64)
    /// S-61..S-63: a policy-2 evaluation went straight to the passcode
    /// because biometry is unavailable where its client is; `detail`: the
    /// remote host, when known.
    case biometrySkipped(uid: UserID, ctx: ContextID, eval: EvaluationID, reason: BiometrySkip, detail: String?)
    /// S-63: logind's PrepareForSleep (true: suspending, false: resumed).
    case systemSleep(suspending: Bool)
    // Session agents (SEMANTICS §12): facts for auditors, and the route an
    // evaluation's prompts took (folded into the evaluation, S-68).
    case agentRegistered(uid: UserID, session: String, pid: ProcessID)
    case agentUnregistered(uid: UserID, session: String, pid: ProcessID, reason: AgentUnregistration)
    case promptsRouted(uid: UserID, ctx: ContextID, eval: EvaluationID, route: AgentRoute)
    case agentRefused(AgentRefusal)
    // The login secret (S-74..S-77): facts about a user's sealed login
    // password, never the password, a digest of it or its sealed box.
    case loginSecretStored(uid: UserID, ctx: ContextID, eval: EvaluationID, service: String)
    case loginSecretReleased(uid: UserID, ctx: ContextID, eval: EvaluationID, service: String)
    case loginSecretVoided(uid: UserID, reason: LoginSecretVoiding)
    case loginSecretRefused(LoginSecretRefusal)
    case loginSecretChoice(uid: UserID, enabled: Bool, by: UserID)

    /// AUDIT.md's `type`, one string per kind.
    public var name: String { kind.name }

    public var kind: EventKind {
        switch self {
        case .daemonStarted: return .daemonStarted
        case .daemonStopped: return .daemonStopped
        case .contextCreated: return .contextCreated
        case .contextPropertySet: return .contextPropertySet
        case .contextInvalidated: return .contextInvalidated
        case .policyChecked: return .policyChecked
        case .evaluationStarted: return .evaluationStarted
        case .promptShown: return .promptShown
        case .biometricMatched: return .biometricMatched
        case .biometricFailed: return .biometricFailed
        case .biometricRetry: return .biometricRetry
        case .fallbackChosen: return .fallbackChosen
        case .passcodeAccepted: return .passcodeAccepted
        case .passcodeRejected: return .passcodeRejected
        case .evaluationSucceeded: return .evaluationSucceeded
        case .evaluationFailed: return .evaluationFailed
        case .enrollmentChanged: return .enrollmentChanged
        case .passcodeChanged: return .passcodeChanged
        case .deviceUnlocked: return .deviceUnlocked
        case .userReset: return .userReset
        case .logRepaired: return .logRepaired
        case .rulesApplied: return .rulesApplied
        case .biometricDisconnected: return .biometricDisconnected
        case .passcodeSubmitted: return .passcodeSubmitted
        case .contextReleased: return .contextReleased
        case .passcodeRefused: return .passcodeRefused
        case .snapshotRecorded: return .snapshotRecorded
        case .logRollbackAccepted: return .logRollbackAccepted
        case .rightSaved: return .rightSaved
        case .rightRemoved: return .rightRemoved
        case .rightAuthorized: return .rightAuthorized
        case .rightSecretRead: return .rightSecretRead
        case .policyCheckedRepeatedly: return .policyCheckedRepeatedly
        case .promptHalfEnded: return .promptHalfEnded
        case .biometrySkipped: return .biometrySkipped
        case .systemSleep: return .systemSleep
        case .agentRegistered: return .agentRegistered
        case .agentUnregistered: return .agentUnregistered
        case .promptsRouted: return .promptsRouted
        case .agentRefused: return .agentRefused
        case .rightKeyCreated: return .rightKeyCreated
        case .rightKeyUsed: return .rightKeyUsed
        case .loginSecretStored: return .loginSecretStored
        case .loginSecretReleased: return .loginSecretReleased
        case .loginSecretVoided: return .loginSecretVoided
        case .loginSecretRefused: return .loginSecretRefused
        case .loginSecretChoice: return .loginSecretChoice
        case .rightDropped: return .rightDropped
        }
    }

    /// The user an event is about, when there is one (log index key).
    public var uid: UserID? {
        switch self {
        case .daemonStarted, .daemonStopped, .logRepaired, .rulesApplied, .snapshotRecorded, .logRollbackAccepted,
             .systemSleep: return nil
        case .contextCreated(let uid, _, _, _), .contextPropertySet(let uid, _, _), .contextInvalidated(let uid, _, _),
             .policyChecked(let uid, _, _, _, _, _), .evaluationStarted(let uid, _, _, _, _),
             .promptShown(let uid, _, _, _), .biometricMatched(let uid, _, _), .biometricFailed(let uid, _, _),
             .biometricRetry(let uid, _, _, _), .fallbackChosen(let uid, _, _), .passcodeAccepted(let uid, _, _),
             .passcodeRejected(let uid, _, _, _, _), .evaluationSucceeded(let uid, _, _, _),
             .evaluationFailed(let uid, _, _, _), .enrollmentChanged(let uid, _, _, _, _),
             .passcodeChanged(let uid, _, _), .deviceUnlocked(let uid, _), .userReset(let uid, _),
             .biometricDisconnected(let uid, _, _), .passcodeSubmitted(let uid, _, _), .contextReleased(let uid, _),
             .passcodeRefused(let uid, _, _, _), .rightSaved(let uid, _, _), .rightRemoved(let uid, _, _),
             .rightAuthorized(let uid, _, _, _), .rightSecretRead(let uid, _, _),
             .promptHalfEnded(let uid, _, _, _, _, _), .biometrySkipped(let uid, _, _, _, _),
             .agentRegistered(let uid, _, _), .agentUnregistered(let uid, _, _, _), .promptsRouted(let uid, _, _, _),
             .rightKeyCreated(let uid, _, _), .rightKeyUsed(let uid, _, _, _),
             .loginSecretStored(let uid, _, _, _), .loginSecretReleased(let uid, _, _, _),
             .loginSecretVoided(let uid, _), .loginSecretChoice(let uid, _, _), .rightDropped(let uid, _, _, _, _):
            return uid
        case .loginSecretRefused(let refusal):
            return refusal.uid as UserID?
        case .policyCheckedRepeatedly(let checks):
            return checks.uid
        case .agentRefused(let refusal):
            return refusal.uid
        }
    }

    /// The context an event is about, when there is one (log index key).
    public var ctx: ContextID? {
        switch self {
        case .contextCreated(_, let ctx, _, _), .contextPropertySet(_, let ctx, _), .contextInvalidated(_, let ctx, _),
             .policyChecked(_, let ctx, _, _, _, _), .evaluationStarted(_, let ctx, _, _, _),
             .promptShown(_, let ctx, _, _), .biometricMatched(_, let ctx, _), .biometricFailed(_, let ctx, _),
             .biometricRetry(_, let ctx, _, _), .fallbackChosen(_, let ctx, _), .evaluationSucceeded(_, let ctx, _, _),
             .evaluationFailed(_, let ctx, _, _), .biometricDisconnected(_, let ctx, _),
             .passcodeSubmitted(_, let ctx, _), .contextReleased(_, let ctx):
            return ctx
        case .rightAuthorized(_, let ctx, _, _), .rightSecretRead(_, let ctx, _),
             .promptHalfEnded(_, let ctx, _, _, _, _), .biometrySkipped(_, let ctx, _, _, _), .promptsRouted(_, let ctx, _, _),
             .rightKeyUsed(_, let ctx, _, _), .loginSecretStored(_, let ctx, _, _), .loginSecretReleased(_, let ctx, _, _):
            return ctx
        case .loginSecretRefused(let refusal):
            return refusal.ctx
        case .agentRefused(let refusal):
            return refusal.ctx
        case .policyCheckedRepeatedly(let checks):
            return checks.ctx
        case .passcodeAccepted(_, let ctx, _), .passcodeRejected(_, let ctx, _, _, _), .passcodeRefused(_, let ctx, _, _):
            return ctx
        default:
            return nil
        }
    }

    /// S-40: failures must be durable before any byte revealing them is sent.
    public var isSecurityFailure: Bool {
        switch self {
        case .biometricFailed: return true
        case .passcodeRejected: return true
        default: return false
        }
    }

    /// Output produced after this event waits until it is durable: security
    /// failures (S-40), and admin actions, whose `OK` must mean "survives a
    /// power cut" (SEMANTICS lets other events be made durable in batches).
    public var isDurableBeforeReply: Bool {
        switch self {
        case .biometricFailed, .passcodeRejected: return true
        case .enrollmentChanged, .passcodeChanged, .deviceUnlocked, .userReset, .logRepaired, .rulesApplied: return true
        case .logRollbackAccepted: return true
        default: return false
        }
    }
}

/// How an evaluation ended when it did not succeed.
public struct Failure: Sendable, Equatable {
    public var code: LAErrorCode
    public var message: String
    /// `reason=` on the wire: timeout, preempted, shutdown, restart,
    /// disconnect, passcode-required.
    public var reason: String?
    /// Seconds until passcode entry is allowed again (S-5), or nil.
    public var retryAfter: Int64?
    /// S-6: the user is locked until an administrator resets them.
    public var adminLocked: Bool

    public init(_ code: LAErrorCode, message: String? = nil, reason: String? = nil, retryAfter: Int64? = nil, adminLocked: Bool = false) {
        self.code = code
        self.message = message ?? code.defaultMessage
        self.reason = reason
        self.retryAfter = retryAfter
        self.adminLocked = adminLocked
    }
}

/// Stable names and log type codes. Append only.
public enum EventKind: UInt16, Sendable, CaseIterable {
    case daemonStarted = 1
    case daemonStopped = 2
    case contextCreated = 3
    case contextPropertySet = 4
    case contextInvalidated = 5
    case policyChecked = 6
    case evaluationStarted = 7
    case promptShown = 8
    case biometricMatched = 9
    case biometricFailed = 10
    case biometricRetry = 11
    case fallbackChosen = 12
    case passcodeAccepted = 13
    case passcodeRejected = 14
    case evaluationSucceeded = 15
    case evaluationFailed = 16
    case enrollmentChanged = 17
    case passcodeChanged = 18
    case deviceUnlocked = 19
    case userReset = 20
    case logRepaired = 21
    case rulesApplied = 22
    case biometricDisconnected = 23
    case passcodeSubmitted = 24
    case contextReleased = 25
    case passcodeRefused = 26
    case snapshotRecorded = 27
    case logRollbackAccepted = 28
    case rightSaved = 29
    case rightRemoved = 30
    case rightAuthorized = 31
    case rightSecretRead = 32
    case policyCheckedRepeatedly = 33
    // 34..40: issue 27's kinds (trust-a 34..38; 39 here, 40 unused).
    case rightDropped = 39
    case promptHalfEnded = 41
    case biometrySkipped = 42
    case systemSleep = 43
    case agentRegistered = 46
    case agentUnregistered = 47
    case promptsRouted = 48
    case agentRefused = 49
    // 52..56: the login secret (S-74..S-77).
    case loginSecretStored = 52
    case loginSecretReleased = 53
    case loginSecretVoided = 54
    case loginSecretRefused = 55
    case loginSecretChoice = 56
    // 57..60: the rights' keys (S-78, S-79).
    case rightKeyCreated = 57
    case rightKeyUsed = 58

    public var name: String {
        switch self {
        case .daemonStarted: return "daemon-started"
        case .daemonStopped: return "daemon-stopped"
        case .contextCreated: return "context-created"
        case .contextPropertySet: return "context-property-set"
        case .contextInvalidated: return "context-invalidated"
        case .policyChecked: return "policy-checked"
        case .evaluationStarted: return "evaluation-started"
        case .promptShown: return "prompt-shown"
        case .biometricMatched: return "biometric-matched"
        case .biometricFailed: return "biometric-failed"
        case .biometricRetry: return "biometric-retry"
        case .fallbackChosen: return "fallback-chosen"
        case .passcodeAccepted: return "passcode-accepted"
        case .passcodeRejected: return "passcode-rejected"
        case .evaluationSucceeded: return "evaluation-succeeded"
        case .evaluationFailed: return "evaluation-failed"
        case .enrollmentChanged: return "enrollment-changed"
        case .passcodeChanged: return "passcode-changed"
        case .deviceUnlocked: return "device-unlocked"
        case .userReset: return "user-reset"
        case .logRepaired: return "log-repaired"
        case .rulesApplied: return "rules-applied"
        case .biometricDisconnected: return "biometric-disconnected"
        case .passcodeSubmitted: return "passcode-submitted"
        case .contextReleased: return "context-released"
        case .passcodeRefused: return "passcode-refused"
        case .snapshotRecorded: return "snapshot-recorded"
        case .logRollbackAccepted: return "log-rollback-accepted"
        case .rightSaved: return "right-saved"
        case .rightRemoved: return "right-removed"
        case .rightAuthorized: return "right-authorized"
        case .rightSecretRead: return "right-secret-read"
        // `localauthctl log` shows it as `policy-checked` with its count and
        // time range (AUDIT.md's type for every check, S-19).
        case .policyCheckedRepeatedly: return "policy-checked-repeatedly"
        case .promptHalfEnded: return "prompt-half-ended"
        case .biometrySkipped: return "biometry-skipped"
        case .systemSleep: return "system-sleep"
        case .agentRegistered: return "agent-registered"
        case .agentUnregistered: return "agent-unregistered"
        case .promptsRouted: return "prompts-routed"
        case .agentRefused: return "agent-refused"
        case .rightKeyCreated: return "right-key-created"
        case .rightKeyUsed: return "right-key-used"
        case .loginSecretStored: return "login-secret-stored"
        case .loginSecretReleased: return "login-secret-released"
        case .loginSecretVoided: return "login-secret-voided"
        case .loginSecretRefused: return "login-secret-refused"
        case .loginSecretChoice: return "login-secret-choice"
        case .rightDropped: return "right-dropped"
        }
    }

    /// The payload layout this build writes for the kind (see `Event.version`).
    /// Bumped per kind when fields are added; the decoder reads every older one.
    public var layoutVersion: UInt8 {
        switch self {
        case .enrollmentChanged: return 2
        // v2: the origin (caller, service, tty, rhost, passcode prompts; S-42, S-44);
        // v3: the transport, bus name and app (S-73); v4: the requester (S-54).
        case .contextCreated: return 4
        // v2: the requester whose pair the failure counts for (S-54).
        case .passcodeRejected: return 2
        // v2: `retry_after`, a biometric prompt whose passcode half ended (S-60).
        case .promptShown: return 2
        default: return 1
        }
    }

    public init?(name: String) {
        guard let kind = EventKind.allCases.first(where: { $0.name == name }) else { return nil }
        self = kind
    }
}
