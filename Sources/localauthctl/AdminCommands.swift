// The administrator's verbs (PROTOCOL.md: enroll, unenroll, sensor,
// unlocked, reset): one request each, `--uid` required, a
// one-line confirmation on success.

/// What the admin commands share: parse `--uid`, send one request, print one
/// line (or, with `-o json`, the reply's fields as one JSON object).
protocol AdminCommand: Command {
    var uid: UInt32 { get }
    var socket: String { get }
    var format: String { get }
    var verb: String { get }
    var extraArguments: [(String, String)] { get }
    func confirmation(_ reply: [String: String]) -> String
}

extension AdminCommand {
    static var isLive: Bool { true }
    var extraArguments: [(String, String)] { [] }

    func run() throws(CommandFailure) -> Int32 {
        let client = try DaemonClient.connect(socket)
        let reply = try client.expectOK(verb, [("uid", String(uid))] + extraArguments)
        if format == "json" {
            let fields = [("uid", JSONValue.number(uid))] + reply.arguments.map { argument in
                (argument.key.replacingOccurrences("-", "_"), StatusCommand.typed(argument.value))
            }
            Console.out(JSONValue.object(fields).text)
            return 0
        }
        var values: [String: String] = [:]
        for argument in reply.arguments { values[argument.key] = argument.value }
        Console.out(confirmation(values))
        return 0
    }
}

let uidOption = OptionSpec("--uid", value: "N", help: "the user (id or name); required")
let adminOutputOption = OptionSpec("-o", "--output", value: "text|json", help: "the output format (default: text)")

func adminFormat(_ arguments: ParsedArguments) throws(UsageError) -> String {
    try arguments.choice("--output", ["text", "json"])
}

func requiredUID(_ arguments: ParsedArguments) throws(UsageError) -> UInt32 {
    guard let uid = try arguments.uid("--uid") else { throw UsageError("missing --uid") }
    return uid
}

struct EnrollCommand: AdminCommand {
    static let name = "enroll"
    static let summary = "Enroll a biometric template for a user (simulated backend; admin)"
    static let options = [uidOption, OptionSpec("--template", value: "NAME", help: "the template's name (default: template-N)"), adminOutputOption, SocketOption.spec]
    let verb = "enroll"
    var uid: UInt32
    var template: String?
    var socket: String
    var format: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        format = try adminFormat(arguments)
        try arguments.requireNoPositionals()
        uid = try requiredUID(arguments)
        template = arguments.value("--template")
        socket = SocketOption.path(arguments)
    }

    var extraArguments: [(String, String)] { template.map { [("template", $0)] } ?? [] }

    func confirmation(_ reply: [String: String]) -> String {
        "Enrolled: uid \(uid) has \(reply["templates"] ?? "?") template(s); domain state \(reply["domain-state"] ?? "?")."
    }
}

struct UnenrollCommand: AdminCommand {
    static let name = "unenroll"
    static let summary = "Remove one or all biometric templates of a user (admin)"
    static let options = [uidOption, OptionSpec("--template", value: "NAME", help: "the template to remove (default: all)"), adminOutputOption, SocketOption.spec]
    let verb = "unenroll"
    var uid: UInt32
    var template: String?
    var socket: String
    var format: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        format = try adminFormat(arguments)
        try arguments.requireNoPositionals()
        uid = try requiredUID(arguments)
        template = arguments.value("--template")
        socket = SocketOption.path(arguments)
    }

    var extraArguments: [(String, String)] { template.map { [("template", $0)] } ?? [] }

    func confirmation(_ reply: [String: String]) -> String {
        "Unenrolled: uid \(uid) has \(reply["templates"] ?? "?") template(s) left."
    }
}

struct SensorCommand: AdminCommand {
    static let name = "sensor"
    static let operands = "match|nomatch|retry|disconnect"
    static let summary = "Feed a simulated sensor reading to a user's waiting biometric prompt (admin)"
    static let options = [uidOption, OptionSpec("--template", value: "NAME", help: "the template that matched"), adminOutputOption, SocketOption.spec]
    static let readings = ["match", "nomatch", "retry", "disconnect"]
    let verb = "sensor"
    var uid: UInt32
    var reading: String
    var template: String?
    var socket: String
    var format: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        format = try adminFormat(arguments)
        uid = try requiredUID(arguments)
        guard arguments.positionals.count == 1, let reading = arguments.positionals.first else {
            throw UsageError(arguments.positionals.isEmpty ? "missing the reading (match, nomatch, retry or disconnect)"
                : "unexpected argument '\(arguments.positionals[1])'")
        }
        guard Self.readings.contains(reading) else {
            throw UsageError("invalid reading '\(reading)': expected match, nomatch, retry or disconnect")
        }
        self.reading = reading
        template = arguments.value("--template")
        socket = SocketOption.path(arguments)
    }

    var extraArguments: [(String, String)] { [("result", reading)] + (template.map { [("template", $0)] } ?? []) }

    func confirmation(_ reply: [String: String]) -> String { "Sensor reading '\(reading)' delivered for uid \(uid)." }
}

struct UnlockedCommand: AdminCommand {
    static let name = "unlocked"
    static let summary = "Report a biometric device unlock for a user now (admin)"
    static let options = [uidOption, adminOutputOption, SocketOption.spec]
    let verb = "unlocked"
    var uid: UInt32
    var socket: String
    var format: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        format = try adminFormat(arguments)
        try arguments.requireNoPositionals()
        uid = try requiredUID(arguments)
        socket = SocketOption.path(arguments)
    }

    func confirmation(_ reply: [String: String]) -> String { "Device unlock recorded for uid \(uid)." }
}

struct ResetCommand: AdminCommand {
    static let name = "reset"
    static let summary = "Clear a user's lockouts, failure counts and admin lock (admin)"
    static let options = [uidOption, adminOutputOption, SocketOption.spec]
    let verb = "reset"
    var uid: UInt32
    var socket: String
    var format: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        format = try adminFormat(arguments)
        try arguments.requireNoPositionals()
        uid = try requiredUID(arguments)
        socket = SocketOption.path(arguments)
    }

    func confirmation(_ reply: [String: String]) -> String { "Reset uid \(uid)." }
}
