// localauthctl unenroll: Remove one or all biometric templates of a user (admin).
// What the admin verbs share is in AdminCommand.swift.

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
