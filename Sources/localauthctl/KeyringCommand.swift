// `localauthctl keyring enable|disable|status` (issue 30, S-74..S-77): a
// user's own consent to have their login password kept, sealed, and handed
// to root's PAM module after a fingerprint sign-in, so that the login
// keyring unlocks; and what the daemon keeps for them. `keyring-enable`,
// `keyring-disable` and `keyring-status` (PROTOCOL.md "Issue 30
// additions"); never the password, which no verb gives to anyone but root's
// PAM module.
import LocalAuthProtocol
import LocalAuthSystem

struct KeyringCommand: Command {
    static let name = "keyring"
    static let operands = "enable | disable | status"
    static let summary = "Let a fingerprint sign-in unlock your login keyring, or see what is kept"
    static let details = """
        keyring enable: keep your login password, sealed under the daemon's key, from your
        next password sign-in at a login screen or console ([Keyring] Services=), and
        hand it to the PAM stack after a fingerprint sign-in there, so that
        pam_gnome_keyring or pam_kwallet5 unlock your keyring. The administrator must
        have set [Keyring] ReleaseLoginPassword=yes and [Passcode] Backend=shadow.
        keyring disable: stop, and remove the kept copy at once (--uid: an
        administrator, for another user).
        keyring status: whether the release is on, whether you turned it on, whether a
        copy is kept, whether it is current (a passwd since voids it), and which PAM
        services may receive it.
        """
    static let isLive = true
    static let options = [
        OptionSpec("--uid", value: "N", help: "disable, status: another user (id or name; an administrator)"),
        adminOutputOption,
        SocketOption.spec,
    ]

    enum Action: String { case enable, disable, status }

    var action: Action
    var uid: UInt32?
    var format: String
    var socket: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let verb = arguments.positionals.first else { throw UsageError("missing the action (enable, disable or status)") }
        guard let action = Action(rawValue: verb) else {
            throw UsageError("invalid action '\(verb)': expected enable, disable or status")
        }
        guard arguments.positionals.count == 1 else { throw UsageError("unexpected argument '\(arguments.positionals[1])'") }
        self.action = action
        uid = try arguments.uid("--uid")
        if action == .enable, uid != nil { throw UsageError("--uid does not apply to 'keyring enable': only you can consent") }
        format = try arguments.choice("--output", ["text", "json"])
        socket = SocketOption.path(arguments)
    }

    func run() throws(CommandFailure) -> Int32 {
        let client = try DaemonClient.connect(socket)
        let target = uid.map { [("uid", String($0))] } ?? []
        switch action {
        case .enable, .disable:
            _ = try client.expectOK("keyring-\(action.rawValue)", target)
            if format == "json" {
                Console.out(JSONValue.object([("enabled", .bool(action == .enable))]).text)
            } else if action == .enable {
                Console.out("Enabled: your login password is kept, sealed, from your next password sign-in at a login "
                    + "screen, and unlocks your keyring after a fingerprint sign-in there.")
            } else {
                Console.out("Disabled: no login password is kept or released\(uid.map { " for uid \($0)" } ?? " for you").")
            }
        case .status:
            let reply = try client.expectOK("keyring-status", target)
            if format == "json" {
                Console.out(StatusCommand.json(reply.arguments).text)
                return 0
            }
            let value = { (key: String) in reply.arguments.value(for: key) ?? "?" }
            let release = value("release") == "true"
            Console.out("Release:  \(release ? "on" : "off (the administrator's [Keyring] ReleaseLoginPassword=yes under Backend=shadow)")")
            Console.out("Enabled:  \(value("enabled") == "true" ? "yes" : "no (localauthctl keyring enable)")")
            let stored = value("stored") == "true"
            let current: String
            switch value("current") {
            case "true": current = "yes, current"
            case "false": current = "yes, but stale (the password changed; it is kept again at the next password sign-in)"
            default: current = "yes (whether it is current could not be read)"
            }
            Console.out("Stored:   \(stored ? current : "no (kept at your next password sign-in through a service below)")")
            Console.out("Services: \(DisplayText.field(value("services")))")
        }
        return 0
    }
}
