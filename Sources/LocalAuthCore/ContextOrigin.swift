// Who opened a context and for which login (S-42, S-44). An ordinary client
// opens contexts for itself; root (a PAM module inside sudo, login, sshd...)
// may open one for another user and names the PAM service, tty and remote
// host, which the `context-created` event keeps for auditors. Whether the
// context may receive passcode prompts is decided when it is created (the
// daemon knows its passcode backend and `ClientPrompts=`) and recorded, so a
// replay reaches the same notInteractive answers as the live daemon (S-38).
// A context made through the D-Bus API records that, the caller's bus name
// and, when known, its Flatpak app id (S-73).

public struct ContextOrigin: Sendable, Equatable, Hashable {
    /// The uid of the connection that opened the context, when it asked for
    /// another subject with `uid=` (on-behalf); nil: the subject itself.
    public var caller: UserID?
    /// S-54: the user who asked for an on-behalf context (who ran `su`:
    /// a setuid module's real uid, else PAM_RUSER or the tty's owner as the
    /// module sent them), when known; nil: the subject itself or unknown.
    public var requester: UserID?
    public var service: String?
    public var tty: String?
    public var rhost: String?
    /// S-44: false when the passcode is a login password and this context is
    /// an ordinary client's: reaching the passcode phase ends with notInteractive.
    public var passcodePrompts: Bool
    /// S-73: how the creating connection reached the daemon.
    public var transport: Transport
    /// S-73, the D-Bus API only: the caller's unique bus name, and its
    /// Flatpak application id when the daemon could read it (recorded,
    /// never trusted).
    public var busName: String?
    public var app: String?

    /// The daemon's two ways in (its raw value is the log's byte).
    public enum Transport: UInt8, Sendable, Hashable {
        case socket = 0
        case dbus = 1

        public var name: String { self == .socket ? "socket" : "dbus" }
    }

    public init(caller: UserID? = nil, service: String? = nil, tty: String? = nil, rhost: String? = nil,
                passcodePrompts: Bool = true, transport: Transport = .socket, busName: String? = nil,
                app: String? = nil, requester: UserID? = nil) {
        self.caller = caller
        self.requester = requester
        self.service = service
        self.tty = tty
        self.rhost = rhost
        self.passcodePrompts = passcodePrompts
        self.transport = transport
        self.busName = busName
        self.app = app
    }

    /// A context opened by its own subject, with passcode prompts (v1's only kind).
    public static let own = ContextOrigin()

    /// Whether the context was opened on behalf of its subject (S-42).
    public var isOnBehalf: Bool { caller != nil }

    /// The longest service, tty or rhost value a context records.
    public static let maximumFieldBytes = 256
    /// The longest bus name or app id (the D-Bus limit on names).
    public static let maximumBusNameBytes = 255
}
