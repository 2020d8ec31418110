// The command table: one type per verb, each with its synopsis, options and
// `run`. `Tool.main` picks the command, handles `--help` at both levels and
// maps errors to exit statuses (0 done, 1 failed, 2 bad usage).

import Glibc
import LocalAuthCore
import LocalAuthSystem

protocol Command {
    /// The verb on the command line.
    static var name: String { get }
    /// The operands after the options, for the synopsis (e.g. "VERB [KEY=VALUE...]").
    static var operands: String { get }
    /// One line for `localauthctl --help`.
    static var summary: String { get }
    /// Extra paragraphs for `localauthctl NAME --help`, or "".
    static var details: String { get }
    static var options: [OptionSpec] { get }
    /// Whether the command talks to the running daemon (for the help's grouping).
    static var isLive: Bool { get }

    init(_ arguments: ParsedArguments) throws(UsageError)
    /// Does the work; returns the exit status. Throws `CommandFailure` to fail.
    func run() throws(CommandFailure) -> Int32
}

extension Command {
    static var operands: String { "" }
    static var details: String { "" }

    static var synopsis: String {
        var parts = [name]
        for option in options {
            let spelling = option.names[0] + (option.valueName.map { " " + $0 } ?? "")
            parts.append("[\(spelling)]")
        }
        if !operands.isEmpty { parts.append(operands) }
        return parts.joined(separator: " ")
    }

    static var help: String {
        var text = "Usage: localauthctl \(synopsis)\n\n\(summary)\n"
        if !details.isEmpty { text += "\n\(details)\n" }
        text += "\nOptions:\n"
        let rows = options.map { option in
            ("  " + option.names.joined(separator: ", ") + (option.valueName.map { " " + $0 } ?? ""), option.help)
        } + [("  -h, --help", "show this help")]
        let width = rows.map(\.0.count).max()! + 2
        for (left, right) in rows {
            text += left + String(repeating: " ", count: width - left.count) + right + "\n"
        }
        return text
    }
}

enum Tool {
    static var commands: [any Command.Type] {
        [
        StatusCommand.self, CanEvaluateCommand.self, EvaluateCommand.self, PasscodeCommand.self,
        SetPasscodeCommand.self, AdminCommand<ClearPasscodeVerb>.self,
        AdminCommand<EnrollVerb>.self, AdminCommand<UnenrollVerb>.self, AdminCommand<SensorVerb>.self,
        AdminCommand<UnlockedVerb>.self, AdminCommand<ResetVerb>.self,
        RightCommand.self, KeyringCommand.self, CallCommand.self, AgentCommand.self,
        LogCommand.self, ReplayCommand.self, VerifyCommand.self, RepairCommand.self,
        ]
    }

    static var help: String {
        func list(_ live: Bool) -> String {
            var rows: [(String, String)] = []
            for command in commands where command.isLive == live { rows.append((command.name, command.summary)) }
            var width = 0
            for row in rows { width = max(width, row.0.count + 2) }
            var lines: [String] = []
            for (name, summary) in rows { lines.append("  " + name + String(repeating: " ", count: width - name.count) + summary) }
            return lines.joined(separator: "\n")
        }
        return """
            Usage: localauthctl COMMAND [OPTIONS]

            Control localauthd and audit its event log.

            Commands that talk to the running daemon (socket: --socket PATH, else
            $LOCALAUTHD_SOCKET, else /run/localauthd/socket):
            \(list(true))

            Commands that read the state directory offline (-D DIR, default: the
            configured StateDirectory):
            \(list(false))

            Run 'localauthctl COMMAND --help' for a command's options,
            'localauthctl --version' for the version. See localauthctl(1).

            Exit status: 0 done; 1 the daemon answered no (an LAError), or a check
            failed; 2 bad usage; 3 the daemon refused the request (a protocol error
            such as permission-denied); 4 the daemon is unreachable.

            """
    }

    static func main(_ argv: [String]) -> Int32 {
        Signals.ignoreBrokenPipe()
        guard let verb = argv.first else {
            Console.error("localauthctl: missing command\nTry 'localauthctl --help'.")
            return 2
        }
        if verb == "--version" {
            Console.out("localauthctl \(LocalAuthVersion.string)")
            return 0
        }
        if verb == "--help" || verb == "-h" || verb == "help" {
            if verb == "help", let name = argv.dropFirst().first, let command = commands.first(where: { $0.name == name }) {
                Console.out(command.help, terminator: "")
            } else {
                Console.out(help, terminator: "")
            }
            return 0
        }
        guard let command = commands.first(where: { $0.name == verb }) else {
            Console.error("localauthctl: unknown command '\(verb)'\nTry 'localauthctl --help'.")
            return 2
        }
        let rest = Array(argv.dropFirst())
        // `--help` anywhere before `--` (and not as an option's value) asks for help.
        let beforeDashes = rest.prefix { $0 != "--" }
        if beforeDashes.contains("--help") || beforeDashes.contains("-h") {
            Console.out(command.help, terminator: "")
            return 0
        }
        let instance: any Command
        do throws(UsageError) {
            instance = try command.init(try ParsedArguments.parse(rest, options: command.options))
        } catch {
            Console.error("localauthctl \(verb): \(error.message)\nTry 'localauthctl \(verb) --help'.")
            return 2
        }
        do throws(CommandFailure) {
            let status = try instance.run()
            Console.flush()
            return status
        } catch {
            Console.flush()
            if !error.message.isEmpty { Console.error("localauthctl: \(error.message)") }
            return error.status
        }
    }
}
