// localauthctl clear-passcode: Remove a user's passcode (admin; same as 'passcode clear').
// What the admin verbs share is in AdminCommand.swift.
import Glibc

struct ClearPasscodeCommand: AdminCommand {
    static let name = "clear-passcode"
    static let summary = "Remove a user's passcode (admin; same as 'passcode clear')"
    static let options = [uidOption, adminOutputOption, SocketOption.spec]
    let verb = "clear-passcode"
    var uid: UInt32
    var socket: String
    var format: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        format = try adminFormat(arguments)
        try arguments.requireNoPositionals()
        uid = try requiredUID(arguments)
        socket = SocketOption.path(arguments)
    }

    func confirmation(_ reply: [String: String]) -> String { "Passcode cleared for uid \(uid)." }
}
