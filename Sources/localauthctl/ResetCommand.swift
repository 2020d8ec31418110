// localauthctl reset: Clear a user's lockouts, failure counts and admin lock (admin).
// What the admin verbs share is in AdminCommand.swift.

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
