// localauthctl unlocked: Report a biometric device unlock for a user now (admin).
// What the admin verbs share is in AdminCommand.swift.

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
