// `new uid=N [service=S] [tty=S] [rhost=S]` (S-42): root, and only root,
// opens a context for another user, the way a PAM module inside sudo or
// login asks for PAM_USER. The values are hostile until checked: bounded in
// length and free of control characters, because they reach the log and
// `localauthctl log` output verbatim.
import LocalAuthCore
import LocalAuthProtocol

extension ServerCore {
    /// The subject and origin of a `new` request, or nil after replying with
    /// the refusal. Without any of the keys: the caller's own context.
    func contextSubject(_ request: Request, _ connection: Connection.ID) -> (uid: UserID, origin: ContextOrigin)? {
        let keys = ["uid", "service", "tty", "rhost", "requester"]
        let passcodePrompts = !(passcodes is ShadowPasscodes) || configuration.passcode.clientPrompts == .yes
        guard keys.contains(where: { request.arguments.value(for: $0) != nil }) else {
            var origin = ContextOrigin(passcodePrompts: passcodePrompts)
            // S-73: a context of the D-Bus API says so, and who on the bus.
            if let bus = roster.busPeer(of: connection) {
                origin.transport = .dbus
                origin.busName = bus.name
                origin.app = bus.app
            }
            return (peer(of: connection).uid, origin)
        }
        // Even an AdminGroup member, even the daemon's own uid: only root
        // may authenticate someone else (S-42).
        guard peer(of: connection).uid == 0 else {
            counters.permissionDenied += 1
            reply(connection, request.tag, ProtocolError(.permissionDenied,
                "Only root may open a context on behalf of a user (uid=, service=, tty=, rhost=)."))
            return nil
        }
        // S-52: not on backends that administrators control (tests aside).
        if let why = onBehalfRefusal {
            reply(connection, request.tag, ProtocolError(.unavailable, why))
            return nil
        }
        var uid = peer(of: connection).uid
        if let text = request.arguments.value(for: "uid") {
            guard let parsed = parseUserID(text) else {
                reply(connection, request.tag, ProtocolError(.badArgument,
                    "uid= must be a user id in canonical decimal (no sign, no leading zero)."))
                return nil
            }
            uid = parsed
        }
        var origin = ContextOrigin(caller: peer(of: connection).uid, passcodePrompts: true)
        for (key, field) in [("service", \ContextOrigin.service), ("tty", \.tty), ("rhost", \.rhost)] {
            guard let value = request.arguments.value(for: key) else { continue }
            guard ServerCore.isRecordable(value) else {
                reply(connection, request.tag, ProtocolError(.badArgument,
                    "\(key)= must be 1 to \(ContextOrigin.maximumFieldBytes) bytes without control characters."))
                return nil
            }
            origin[keyPath: field] = value
        }
        var sent: UserID?
        if let text = request.arguments.value(for: "requester") {
            guard let parsed = parseUserID(text) else {
                reply(connection, request.tag, ProtocolError(.badArgument,
                    "requester= must be a user id in canonical decimal (no sign, no leading zero)."))
                return nil
            }
            sent = parsed
        }
        origin.requester = Self.requester(sent: sent, principal: principal(of: connection))
        return (uid, origin)
    }

    /// S-54: who asked for an on-behalf context. A setuid program (su,
    /// sudo, pkexec) is its real uid's (the principal, S-53), whatever it
    /// sends; root's own process (sshd, login, a root shell) is believed
    /// (the module sends PAM_RUSER's uid or the tty's owner), as is root
    /// whose real uid the kernel could not say (the module sends its own
    /// real uid then).
    static func requester(sent: UserID?, principal: Principal) -> UserID? {
        if principal.isRootsOwn || principal.uid == 0 { return sent }
        return principal.uid
    }

    /// The principal of `connection` (S-53), or root's own when it is gone.
    func principal(of connection: Connection.ID) -> Principal {
        connections.withValue(connection) { $0.principal } ?? Principal.assumed(for: 0)
    }

    /// A service, tty or rhost value that may go into the log as it is.
    static func isRecordable(_ value: String) -> Bool {
        let bytes = value.utf8
        return !bytes.isEmpty && bytes.count <= ContextOrigin.maximumFieldBytes
            && !bytes.contains(where: { $0 < 0x20 || $0 == 0x7f })
    }
}
