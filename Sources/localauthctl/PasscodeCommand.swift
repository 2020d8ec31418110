// localauthctl passcode: Set or change a passcode (set), or remove one (clear; admin).
import Glibc

struct PasscodeCommand: Command {
    static let name = "passcode"
    static let operands = "set|clear"
    static let summary = "Set or change a passcode (set), or remove one (clear; admin)"
    static let details = """
        passcode set: without --uid, your own passcode; changing it asks for the current
        one first. Setting another user's passcode needs an administrator. The
        passcode is read from the terminal with echo off, or with --secret-stdin as
        lines on standard input (line 1 the new passcode, line 2 the current one when
        needed). There is deliberately no option that takes a passcode.
        passcode clear --uid N: removes user N's passcode (admin).
        """
    static let isLive = true
    static let options = [
        OptionSpec("--uid", value: "N", help: "the user (id or name; set: default you, clear: required)"),
        OptionSpec("--secret-stdin", help: "set: read the passcodes as lines from standard input"),
        adminOutputOption,
        SocketOption.spec,
    ]

    var action: any Command

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let verb = arguments.positionals.first else { throw UsageError("missing the action (set or clear)") }
        var rest = arguments
        rest.positionals.removeFirst()
        switch verb {
        case "set":
            if arguments.value("--output") != nil { throw UsageError("passcode set prints no state; -o does not apply") }
            action = try SetPasscodeCommand(rest)
        case "clear":
            if arguments.flag("--secret-stdin") { throw UsageError("passcode clear reads no secret; drop --secret-stdin") }
            action = try AdminCommand<ClearPasscodeVerb>(rest)
        default:
            throw UsageError("invalid action '\(verb)': expected set or clear")
        }
    }

    func run() throws(CommandFailure) -> Int32 { try action.run() }
}
