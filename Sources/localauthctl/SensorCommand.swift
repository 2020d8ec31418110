// localauthctl sensor: Feed a simulated sensor reading to a user's waiting biometric prompt (admin).
// What the admin verbs share is in AdminCommand.swift.

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
