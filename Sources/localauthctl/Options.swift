// A small command-line parser in the manner of swift-argument-parser: each
// command declares its options as `OptionSpec`s, the parser turns argv into
// `ParsedArguments` (or a `UsageError` naming the bad option), and typed
// getters check values. Shared groups (socket, state directory) live here so
// every command spells them the same way.

import Glibc
import LocalAuthConfig
import LocalAuthSystem

/// localauthctl's exit statuses (documented in `--help` and localauthctl(1)),
/// distinct so that a script can tell "no" from "could not ask".
enum ExitStatus {
    static let done: Int32 = 0
    /// The daemon answered no (an LAError), or a check found a problem
    /// (verify, a corrupt log), or another failure.
    static let no: Int32 = 1
    static let usage: Int32 = 2
    /// The daemon refused the request (a protocol error: permission-denied,
    /// bad-argument, busy...).
    static let refused: Int32 = 3
    /// The daemon could not be reached (no socket, connection refused or closed).
    static let unreachable: Int32 = 4
}

/// A bad command line: printed with a hint to `--help`, exit status 2.
struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// A failure at run time: printed as `localauthctl: MESSAGE`, exit status 1.
struct CommandFailure: Error {
    var message: String
    var status: Int32 = 1
    init(_ message: String, status: Int32 = 1) {
        self.message = message
        self.status = status
    }
}

/// One option: its spellings (`-D`, `--directory`), the value's name (nil for
/// a flag) and one line of help.
struct OptionSpec: Sendable {
    var names: [String]
    var valueName: String?
    var help: String

    init(_ names: String..., value: String? = nil, help: String) {
        self.names = names
        self.valueName = value
        self.help = help
    }

    /// The name values are stored under: the long spelling.
    var key: String { names.last! }
}

struct ParsedArguments {
    private var values: [String: String] = [:]
    private var flags: Set<String> = []
    /// Operands, in order.
    var positionals: [String] = []

    /// Parses `arguments` (argv after the command's name). `--` ends options.
    static func parse(_ arguments: [String], options: [OptionSpec]) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var optionsEnded = false
        func spec(_ name: String) -> OptionSpec? { options.first { $0.names.contains(name) } }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            // --name=value, --name value, -Xvalue, -X value.
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            } else if !argument.hasPrefix("--"), argument.count > 2 {
                name = String(argument.prefix(2))
                inlineValue = String(argument.dropFirst(2))
            }
            guard let option = spec(name) else { throw UsageError("unknown option '\(name)'") }
            if option.valueName == nil {
                guard inlineValue == nil else { throw UsageError("option '\(name)' takes no value") }
                parsed.flags.insert(option.key)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count else {
                    throw UsageError("option '\(name)' needs a value (\(option.valueName!))")
                }
                value = arguments[index]
                index += 1
            }
            guard parsed.values[option.key] == nil else { throw UsageError("option '\(name)' given more than once") }
            parsed.values[option.key] = value
        }
        return parsed
    }

    func flag(_ key: String) -> Bool { flags.contains(key) }

    func value(_ key: String) -> String? { values[key] }

    /// A user id: a number, or a user name from the password database.
    func uid(_ key: String) throws(UsageError) -> UInt32? {
        guard let text = values[key] else { return nil }
        if let uid = UInt32(text) { return uid }
        if let entry = getpwnam(text) { return entry.pointee.pw_uid }
        throw UsageError("no such user '\(text)' (\(key) takes a user id or user name)")
    }

    func unsigned(_ key: String) throws(UsageError) -> UInt64? {
        guard let text = values[key] else { return nil }
        guard let number = UInt64(text) else {
            throw UsageError("invalid value '\(text)' for \(key): expected a non-negative integer")
        }
        return number
    }

    /// One of `choices`; the first is the default.
    func choice(_ key: String, _ choices: [String]) throws(UsageError) -> String {
        guard let text = values[key] else { return choices[0] }
        guard choices.contains(text) else {
            throw UsageError("invalid value '\(text)' for \(key): expected one of \(choices.joined(separator: ", "))")
        }
        return text
    }

    /// A time for --since/--until (RFC 3339 or relative, see `TimeText`).
    func time(_ key: String, now: Int64) throws(UsageError) -> Int64? {
        guard let text = values[key] else { return nil }
        guard let time = TimeText.parse(text, now: now) else {
            throw UsageError("invalid time '\(text)' for \(key): expected RFC 3339 (2026-11-29T10:42:00Z), "
                + "today, yesterday, now, or relative (-1h, 1h, '30min ago')")
        }
        return time
    }

    func requireNoPositionals() throws(UsageError) {
        if let extra = positionals.first { throw UsageError("unexpected argument '\(extra)'") }
    }
}

// MARK: - Shared option groups

/// `--socket PATH` for commands that talk to the daemon.
enum SocketOption {
    static let spec = OptionSpec(
        "--socket", value: "PATH", help: "the daemon's socket (default: $LOCALAUTHD_SOCKET, else /run/localauthd/socket)")
    static let defaultPath = "/run/localauthd/socket"

    static func path(_ arguments: ParsedArguments) -> String {
        if let path = arguments.value(spec.key) { return path }
        if let path = getenv("LOCALAUTHD_SOCKET").map({ String(cString: $0) }), !path.isEmpty { return path }
        return defaultPath
    }
}

/// `-D DIR` for the offline commands: the configured StateDirectory by default.
enum StateDirectoryOption {
    static let spec = OptionSpec(
        "-D", "--directory", value: "DIR",
        help: "the state directory (default: StateDirectory= of /etc/localauthd/localauthd.conf, else /var/lib/localauthd)")

    /// `-D`'s value, or the configured one (read at run time, so a broken
    /// configuration is a failure, not a usage error).
    static func directory(_ explicit: String?) throws(CommandFailure) -> String {
        if let explicit { return explicit }
        return try InstalledConfiguration.load().daemon.stateDirectory
    }

    /// `<directory>/log`, checked: missing, and not readable by this user,
    /// are different failures (the state directory is the daemon's, 0700;
    /// AuditGroup= and AdminGroup= may traverse it, LogReaders).
    static func logDirectory(_ directory: String) throws(CommandFailure) -> String {
        let log = directory + "/log"
        // access(2) reports what stat(2) would (ENOENT, or EACCES on the way
        // there) and also a log directory this user may not list.
        guard access(log, R_OK | X_OK) != 0 else { return log }
        let failure = SystemError.current("access", path: log)
        switch failure.errno {
        case ENOENT, ENOTDIR:
            throw CommandFailure("No event log in \(directory) (no \(log))")
        case EACCES, EPERM:
            throw CommandFailure("Cannot read the event log in \(directory): permission denied. "
                + LogReaders.advice(directory))
        default:
            throw CommandFailure("Cannot read the event log in \(directory): \(failure.message)")
        }
    }
}

/// The daemon's configuration files as the daemon reads them (PROTOCOL.md).
enum InstalledConfiguration {
    static func load() throws(CommandFailure) -> DaemonConfiguration {
        var files: [(fileName: String, contents: String)] = []
        do throws(SystemError) {
            let paths = ConfigurationFiles.paths { directory in
                File.exists(directory) ? ((try? Directory.entries(directory)) ?? []) : nil
            }
            for path in paths where File.exists(path) { files.append((path, try readText(path))) }
        } catch {
            throw CommandFailure("Failed to read the configuration: \(error) (pass -D DIR to skip it)")
        }
        do throws(ConfigurationError) {
            return try ConfigurationParser.parse(files)
        } catch {
            throw CommandFailure("Failed to read the configuration: \(error) (pass -D DIR to skip it)")
        }
    }

    private static func readText(_ path: String) throws(SystemError) -> String {
        String(decoding: try File.read(path, maxSize: 1 << 20), as: UTF8.self)
    }
}
