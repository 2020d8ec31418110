// localauthctl enroll: Enroll a biometric template for a user (simulated backend; admin).
// What the admin verbs share is in AdminCommand.swift.

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
