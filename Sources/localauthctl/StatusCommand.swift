// `status` (a user's state as the daemon sees it now) and `call` (any raw
// request, for debugging and scripts).

import LocalAuthProtocol

struct StatusCommand: Command {
    static let name = "status"
    static let summary = "Show a user's authentication state (lockouts, failures, enrollment)"
    static let details = "Without --uid, the calling user; another user's state needs an administrator."
    static let isLive = true
    static let options = [
        OptionSpec("--uid", value: "N", help: "the user (id or name)"),
        OptionSpec("-o", "--output", value: "table|json", help: "the output format (default: table)"),
        SocketOption.spec,
    ]

    /// Wire keys, their labels for the table, and their JSON names.
    static let fields: [(wire: String, label: String, json: String)] = [
        ("uid", "User", "uid"), ("biometry", "Biometry", "biometry"), ("enrolled", "Enrolled templates", "templates"),
        ("passcode-set", "Passcode set", "passcode_set"), ("biometric-failures", "Biometric failures", "biometric_failures"),
        ("locked-out", "Biometry locked out", "biometry_locked_out"),
        ("passcode-failures", "Passcode failures", "passcode_failures"),
        ("retry-after", "Passcode retry after", "retry_after"), ("admin-locked", "Admin locked", "admin_locked"),
        ("contexts", "Open contexts", "contexts"),
        // S-43: the sensor backend and its reader (v1.1 additions).
        ("backend", "Sensor backend", "backend"), ("reader", "Reader", "reader"),
        ("reader-present", "Reader present", "reader_present"),
        // S-62: LAEnvironment's builtInSensorInaccessible (v1.2).
        ("sensor-inaccessible", "Reader unreachable", "sensor_inaccessible"),
        // S-64: the failures since the user's last sign-in (v1.2).
        ("failed-attempts", "Failed since login", "failed_attempts"),
        ("failed-biometric", "  by biometry", "failed_biometric"), ("failed-passcode", "  wrong passcodes", "failed_passcode"),
        ("refused-passcode", "  during a delay", "refused_passcode"), ("last-failed-at", "Last failure at", "last_failed_at"),
        ("last-failed-service", "Last failure via", "last_failed_service"),
        ("last-failed-tty", "Last failure tty", "last_failed_tty"), ("last-failed-rhost", "Last failure from", "last_failed_rhost"),
    ]

    var uid: UInt32?
    var format: String
    var socket: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requireNoPositionals()
        uid = try arguments.uid("--uid")
        format = try arguments.choice("--output", ["table", "json"])
        socket = SocketOption.path(arguments)
    }

    func run() throws(CommandFailure) -> Int32 {
        let client = try DaemonClient.connect(socket)
        let reply = try client.expectOK("status", uid.map { [("uid", String($0))] } ?? [])
        if format == "json" {
            Console.out(Self.json(reply.arguments).text)
            return 0
        }
        let rows = reply.arguments.map { argument -> (String, String) in
            let label = Self.fields.first { $0.wire == argument.key }?.label ?? argument.key
            var value = DisplayText.field(argument.value)
            if argument.key == "retry-after" { value = value == "0" ? "no delay" : "\(value) s" }
            if argument.key == "last-failed-at", let seconds = Int64(argument.value) {
                value = TimeText.format(seconds * TimeText.second)
            }
            return (label, value)
        }
        let width = rows.map(\.0.count).max() ?? 0
        for (label, value) in rows {
            Console.out(String(repeating: " ", count: width - label.count) + label + ": " + value)
        }
        return 0
    }

    /// Numbers and booleans typed, names in snake_case.
    static func json(_ arguments: Arguments) -> JSONValue {
        .object(arguments.map { argument in
            let key = fields.first { $0.wire == argument.key }?.json ?? argument.key.replacingOccurrences("-", "_")
            return (key, typed(argument.value))
        })
    }

    static func typed(_ value: String) -> JSONValue {
        if value == "true" { return .bool(true) }
        if value == "false" { return .bool(false) }
        if let number = Int64(value), String(number) == value { return .int(number) }
        return .string(value)
    }
}
