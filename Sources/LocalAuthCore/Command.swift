// Commands: what someone asks for. `decide` answers each with the events it
// causes or a rejection. Anything that needs I/O to know (random ids, the
// result of a yescrypt check, the sensor) arrives already inside the command.

public enum Command: Sendable, Equatable {
    /// The daemon starts after replaying the log (S-15).
    case start(version: String, bootID: String, pid: ProcessID, rules: Rules)
    /// A configuration reload changed the rules.
    case applyRules(Rules)
    /// Clean shutdown (S-32).
    case stop
    /// `origin`: on-behalf contexts (S-42) and whether passcode prompts may reach it (S-44).
    case createContext(ctx: ContextID, uid: UserID, pid: ProcessID, origin: ContextOrigin = .own)
    case setProperty(ctx: ContextID, property: ContextProperty)
    /// `invalidate` (reason app, S-13) or the connection closed (disconnect, S-14).
    case invalidate(ctx: ContextID, reason: InvalidationReason)
    case canEvaluate(ctx: ContextID, policy: Policy)
    case evaluate(ctx: ContextID, policy: Policy, reason: String, options: EvaluationOptions = EvaluationOptions())
    /// A reading from the sensor backend for `uid`'s waiting prompt (S-34).
    case sensor(uid: UserID, reading: SensorReading)
    case fallback(ctx: ContextID)
    /// The client answered a passcode prompt; the check runs on a worker.
    /// `queueFull` (S-47): the user already has as many checks waiting as
    /// the daemon allows.
    case submitPasscode(ctx: ContextID, queueFull: Bool = false)
    /// S-46: a check of uid's passcode is about to start on a worker (for an
    /// evaluation, or ctx/eval nil for set-passcode's old secret).
    case admitPasscodeAttempt(uid: UserID, ctx: ContextID?, eval: EvaluationID?)
    /// The worker's verdict on a passcode attempt, for an evaluation
    /// (ctx/eval set) or for `set-passcode`'s old secret (both nil).
    /// `repeated`: the same wrong passcode as the previous attempt (S-7).
    /// `requester` (S-54): the context's requester, taken when the attempt
    /// was submitted, so that a verdict coming back after its context is
    /// gone still counts for the right pair.
    case passcodeChecked(uid: UserID, ctx: ContextID?, eval: EvaluationID?, correct: Bool, repeated: Bool,
                         requester: UserID? = nil)
    case cancel(ctx: ContextID)
    /// S-31: ends every prompt that has waited PromptTimeoutSec.
    case expirePrompts
    case enroll(uid: UserID, template: String, by: UserID, domainState: String)
    /// S-43: fprintd lists these fingers for `uid` now (the daemon asked);
    /// recorded as enrollment-changed (source fprintd) when they differ
    /// from the user's templates.
    case fingersListed(uid: UserID, fingers: [String], by: UserID, domainState: String)
    /// template nil = all.
    case unenroll(uid: UserID, template: String?, by: UserID, domainState: String)
    /// The passcode store now holds (set) or no longer holds one for uid.
    case changePasscode(uid: UserID, set: Bool, by: UserID)
    case reportUnlock(uid: UserID, by: UserID)
    case reset(uid: UserID, by: UserID)
    case repairLog(firstLostSeq: UInt64, by: UserID)
    /// S-49: the snapshot at `seq` was written with this file digest (hex).
    case recordSnapshot(seq: UInt64, sha256: String)
    /// S-49: start on a log behind its journal anchor (`--accept-log-rollback`).
    case acceptLogRollback(journalSeq: UInt64, logSeq: UInt64, by: UserID)
    /// A right was saved, removed, authorized or read (Rights.swift).
    case recordRight(RightFact)
    /// S-63: logind announced PrepareForSleep(`suspending`); with
    /// `endScans` (CancelOnSuspend=yes) every evaluation whose sensor scans
    /// ends with systemCancel, reason suspend.
    case systemSleep(suspending: Bool, endScans: Bool)
    /// S-65: a connection became the agent of `session`, owned by `uid`.
    case registerAgent(uid: UserID, session: String, pid: ProcessID)
    /// S-65, S-68: the agent's registration ended; with `.disconnect`, the
    /// evaluations in `routed` that it still prompts for end (agent-gone).
    case unregisterAgent(uid: UserID, session: String, pid: ProcessID, reason: AgentUnregistration, routed: [ContextID])
    /// S-65, S-68: a refused agent request, recorded.
    case refuseAgent(AgentRefusal)
    /// S-74..S-77: a user's login secret was stored, released, voided or
    /// refused, or their choice changed (LoginSecrets.swift).
    case recordLoginSecret(LoginSecretFact)
}

/// Why a command was refused. Names are PROTOCOL.md's protocol errors, plus
/// an LocalAuthentication outcome for refusals that are LAErrors.
public struct Rejection: Error, Sendable, Equatable {
    public enum Name: String, Sendable {
        case unknownContext = "unknown-context"
        case badArgument = "bad-argument"
        case missingArgument = "missing-argument"
        case badState = "bad-state"
        case busy
    }

    public enum Kind: Sendable, Equatable {
        case protocolError(Name)
        case localAuthentication(Failure)
    }

    public var kind: Kind
    public var message: String

    public init(_ name: Name, _ message: String) {
        self.kind = .protocolError(name)
        self.message = message
    }

    public init(_ failure: Failure) {
        self.kind = .localAuthentication(failure)
        self.message = failure.message
    }

    /// S-47: a passcode check refused because its user has as many waiting
    /// as allowed; nothing was recorded and the prompt still waits.
    public static let passcodeQueueFull = Rejection(.busy,
        "Too many passcode checks are waiting for this user; wait for their answers.")
}

/// What an `evaluate` asked for beyond v1 (PROTOCOL.md 1.2), and where its
/// client is (inputs the daemon learns, like the clock).
public struct EvaluationOptions: Sendable, Equatable {
    /// S-60: `prompt=combined`.
    public var combined: Bool
    /// S-61..S-63: why biometry is unavailable where the client is, or nil.
    public var biometryBlocked: BiometryBlock?
    /// S-66: the context asked for its session's agent and the session has
    /// one: the evaluation's prompts go there from its first (and policy 2
    /// shows the combined prompt where S-60 applies).
    public var route: AgentRoute?

    public init(combined: Bool = false, biometryBlocked: BiometryBlock? = nil, route: AgentRoute? = nil) {
        self.combined = combined
        self.biometryBlocked = biometryBlocked
        self.route = route
    }
}

/// S-61..S-63: biometry is unavailable to this client because of where it
/// is: a remote session, a closed lid, a system going to sleep.
public struct BiometryBlock: Sendable, Equatable {
    public var reason: BiometrySkip
    /// The remote host, when known.
    public var detail: String?

    public init(_ reason: BiometrySkip, detail: String? = nil) {
        self.reason = reason
        self.detail = detail
    }

    /// The LAError a biometric check answers (biometryNotAvailable, with
    /// the wire `reason` and a message that says why and what to do).
    public var failure: Failure {
        switch reason {
        case .remote:
            let from = detail.map { " (from \($0))" } ?? ""
            return Failure(.biometryNotAvailable,
                           message: "Biometry is not available to a remote session\(from); use the passcode.", reason: "remote")
        case .lidClosed:
            return Failure(.biometryNotAvailable,
                           message: "The built-in sensor cannot be reached while the lid is closed; use the passcode.",
                           reason: "lid-closed")
        case .suspend:
            return Failure(.biometryNotAvailable, message: "The system is going to sleep.", reason: "suspend")
        }
    }
}
