// The administrator's verbs (PROTOCOL.md: enroll, unenroll, sensor,
// unlocked, reset, clear-passcode) as one table: each is one request with
// `--uid` required and a one-line confirmation on success (or, with
// `-o json`, the reply's fields as one JSON object). What differs between
// them is a row of `AdminVerb`: its name and summary, whether it takes
// `--template`, its readings (sensor's one operand), its confirmation. The
// options they share are parsed once, as swift-argument-parser's
// `@OptionGroup` does.

/// One row of the table.
protocol AdminVerb {
    static var name: String { get }
    static var summary: String { get }
    /// `--template`'s help, for the verbs that take one; nil: no `--template`.
    static var templateHelp: String? { get }
    /// The readings `sensor` takes as its one operand; empty: no operand.
    static var readings: [String] { get }
    static func confirmation(_ request: AdminRequest, _ reply: [String: String]) -> String
}

extension AdminVerb {
    static var templateHelp: String? { nil }
    static var readings: [String] { [] }
}

enum EnrollVerb: AdminVerb {
    static let name = "enroll"
    static let summary = "Enroll a biometric template for a user (simulated backend; admin)"
    static let templateHelp: String? = "the template's name (default: template-N)"
    static func confirmation(_ request: AdminRequest, _ reply: [String: String]) -> String {
        "Enrolled: uid \(request.uid) has \(reply["templates"] ?? "?") template(s); domain state \(reply["domain-state"] ?? "?")."
    }
}

enum UnenrollVerb: AdminVerb {
    static let name = "unenroll"
    static let summary = "Remove one or all biometric templates of a user (admin)"
    static let templateHelp: String? = "the template to remove (default: all)"
    static func confirmation(_ request: AdminRequest, _ reply: [String: String]) -> String {
        "Unenrolled: uid \(request.uid) has \(reply["templates"] ?? "?") template(s) left."
    }
}

enum SensorVerb: AdminVerb {
    static let name = "sensor"
    static let summary = "Feed a simulated sensor reading to a user's waiting biometric prompt (admin)"
    static let templateHelp: String? = "the template that matched"
    static let readings = ["match", "nomatch", "retry", "disconnect"]
    static func confirmation(_ request: AdminRequest, _ reply: [String: String]) -> String {
        "Sensor reading '\(request.reading ?? "")' delivered for uid \(request.uid)."
    }
}

enum UnlockedVerb: AdminVerb {
    static let name = "unlocked"
    static let summary = "Report a biometric device unlock for a user now (admin)"
    static func confirmation(_ request: AdminRequest, _ reply: [String: String]) -> String {
        "Device unlock recorded for uid \(request.uid)."
    }
}

enum ResetVerb: AdminVerb {
    static let name = "reset"
    static let summary = "Clear a user's lockouts, failure counts and admin lock (admin)"
    static func confirmation(_ request: AdminRequest, _ reply: [String: String]) -> String { "Reset uid \(request.uid)." }
}

enum ClearPasscodeVerb: AdminVerb {
    static let name = "clear-passcode"
    static let summary = "Remove a user's passcode (admin; same as 'passcode clear')"
    static func confirmation(_ request: AdminRequest, _ reply: [String: String]) -> String {
        "Passcode cleared for uid \(request.uid)."
    }
}

/// The options every admin verb shares, parsed once (the `@OptionGroup`).
struct AdminRequest {
    var uid: UInt32
    var template: String?
    /// `sensor`'s reading.
    var reading: String?
    var socket: String
    var format: String
}

/// The command of one row of the table.
struct AdminCommand<Verb: AdminVerb>: Command {
    static var name: String { Verb.name }
    static var summary: String { Verb.summary }
    static var operands: String { Verb.readings.joined(separator: "|") }
    static var isLive: Bool { true }
    static var options: [OptionSpec] {
        [uidOption] + (Verb.templateHelp.map { [OptionSpec("--template", value: "NAME", help: $0)] } ?? [])
            + [adminOutputOption, SocketOption.spec]
    }

    var request: AdminRequest

    init(_ arguments: ParsedArguments) throws(UsageError) {
        let format = try arguments.choice("--output", ["text", "json"])
        guard let uid = try arguments.uid("--uid") else { throw UsageError("missing --uid") }
        var reading: String?
        if Verb.readings.isEmpty {
            try arguments.requireNoPositionals()
        } else {
            let choices = Verb.readings.dropLast().joined(separator: ", ") + " or " + Verb.readings.last!
            guard arguments.positionals.count == 1, let operand = arguments.positionals.first else {
                throw UsageError(arguments.positionals.isEmpty ? "missing the reading (\(choices))"
                    : "unexpected argument '\(arguments.positionals[1])'")
            }
            guard Verb.readings.contains(operand) else {
                throw UsageError("invalid reading '\(operand)': expected \(choices)")
            }
            reading = operand
        }
        request = AdminRequest(uid: uid, template: arguments.value("--template"), reading: reading,
                               socket: SocketOption.path(arguments), format: format)
    }

    func run() throws(CommandFailure) -> Int32 {
        let client = try DaemonClient.connect(request.socket)
        var arguments = [("uid", String(request.uid))]
        if let reading = request.reading { arguments.append(("result", reading)) }
        if let template = request.template { arguments.append(("template", template)) }
        let reply = try client.expectOK(Verb.name, arguments)
        if request.format == "json" {
            let fields = [("uid", JSONValue.number(request.uid))] + reply.arguments.map { argument in
                (argument.key.replacingOccurrences("-", "_"), StatusCommand.typed(argument.value))
            }
            Console.out(JSONValue.object(fields).text)
            return 0
        }
        var values: [String: String] = [:]
        for argument in reply.arguments { values[argument.key] = argument.value }
        Console.out(Verb.confirmation(request, values))
        return 0
    }
}

let uidOption = OptionSpec("--uid", value: "N", help: "the user (id or name); required")
let adminOutputOption = OptionSpec("-o", "--output", value: "text|json", help: "the output format (default: text)")
