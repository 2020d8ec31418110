// Session agents (SEMANTICS §12, S-65..S-69): the facts the core records
// about them. An agent is a connection that draws the prompts of its logind
// session's apps; which connection that is, and the sessions themselves,
// are the server's (its agent table) and are not part of the replayed
// state. What the core keeps is what a replay needs: a context's wish for
// the agent (`PromptDestination`, a property, S-66) and, on a running
// evaluation, the route its prompts took (`AgentRoute`), because the route
// decides whether a passcode prompt may be shown under a login-password
// backend (S-68 amending S-44).

/// Where a context asks its prompts to go (the `prompt` property, S-66).
public enum PromptDestination: String, Sendable, Equatable, CaseIterable {
    /// The client draws its own prompts (v1; the default).
    case client
    /// The session's agent, when it has one (S-66).
    case agent
}

/// The agent an evaluation's prompts go to (`prompts-routed`, S-66).
public struct AgentRoute: Sendable, Equatable, Hashable {
    /// logind's session id.
    public var session: String
    /// The agent's process (its connection's SO_PEERCRED pid).
    public var agentPID: ProcessID
    /// S-68: whether the evaluation may show passcode prompts through the
    /// agent (false only under a login-password backend with ClientPrompts=no).
    public var passcodePrompts: Bool

    public init(session: String, agentPID: ProcessID, passcodePrompts: Bool) {
        self.session = session
        self.agentPID = agentPID
        self.passcodePrompts = passcodePrompts
    }

    /// The longest session id recorded (logind's are a few characters).
    public static let maximumSessionBytes = 64

    /// logind's session ids: 1..64 bytes of `A-Z a-z 0-9 _ -` (sd-login's
    /// `session_id_valid`). Anything else is refused before it is recorded.
    public static func isValidSession(_ id: String) -> Bool {
        let bytes = id.utf8
        guard !bytes.isEmpty, bytes.count <= maximumSessionBytes else { return false }
        return bytes.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x5F || byte == 0x2D
        }
    }
}

/// Why an agent's registration ended (`agent-unregistered`, S-65).
public enum AgentUnregistration: String, Sendable, Equatable, CaseIterable {
    case disconnect, shutdown
}

/// A refused agent request, as recorded (`agent-refused`, S-65, S-68).
public struct AgentRefusal: Sendable, Equatable {
    public enum Request: String, Sendable, Equatable, CaseIterable {
        case registerAgent = "register-agent"
        case passcode
    }

    public enum Reason: String, Sendable, Equatable, CaseIterable {
        /// The caller's process belongs to no session.
        case noSession = "no-session"
        /// It belongs to another session than the one named.
        case notInSession = "not-in-session"
        /// The session belongs to another uid.
        case notSessionOwner = "not-session-owner"
        /// The session has an agent already.
        case sessionHasAgent = "session-has-agent"
        /// An app answered a prompt that its session's agent shows.
        case promptsBelongToAgent = "prompts-belong-to-agent"
    }

    /// The caller's uid and pid (SO_PEERCRED).
    public var uid: UserID
    public var pid: ProcessID
    public var request: Request
    public var reason: Reason
    /// The session concerned, when known.
    public var session: String?
    /// The routed evaluation an app tried to answer.
    public var ctx: ContextID?
    public var eval: EvaluationID?

    public init(uid: UserID, pid: ProcessID, request: Request, reason: Reason, session: String? = nil,
                ctx: ContextID? = nil, eval: EvaluationID? = nil) {
        self.uid = uid
        self.pid = pid
        self.request = request
        self.reason = reason
        self.session = session
        self.ctx = ctx
        self.eval = eval
    }
}
