// localauthd's command line (PROTOCOL.md): flags override the files.
import LocalAuthConfig
import LocalAuthCore

public struct DaemonOptions: Sendable, Equatable {
    public var configFile: String?
    public var socket: String?
    public var stateDirectory: String?
    public var biometry: BiometryType?
    public var showHelp = false
    public var showVersion = false
    public var testConfig = false
    /// S-49: start once on a log behind its journal anchor (recorded as an event).
    public var acceptLogRollback = false

    public static let usage = """
        Usage: localauthd [--config FILE] [--socket PATH] [--state-dir DIR] [--biometry TYPE] [--test-config]
                          [--accept-log-rollback] [--version] [--help]

        The localauthd daemon answers "is this the device owner?" for local programs, with
        Apple LocalAuthentication's rules, error codes and lockouts, over a Unix socket.

          --config FILE     read only FILE (default: /etc/localauthd/localauthd.conf, then the
                            *.conf drop-ins of /etc, /run and /usr/lib/localauthd/localauthd.conf.d/
                            sorted by name; a name in /etc hides it in /run, /run in /usr/lib)
          --socket PATH     listen on PATH, an absolute path (overrides Socket=; a socket passed by systemd wins)
          --state-dir DIR   keep the event log, snapshots and passcodes in DIR, an absolute path (StateDirectory=)
          --biometry TYPE   none, touchID, faceID or opticID ([Biometry] Type=)
          --test-config     check the configuration: print the effective one, report every
                            error with its file and line, exit 1 if there is any (like sshd -t)
          --accept-log-rollback
                            start on a log that is behind the head last recorded in the journal (a state
                            directory restored from a copy, a cut log); recorded as log-rollback-accepted,
                            and every user must then use the passcode first
          --version         print the version and exit
          --help            print this help and exit

        Signals: SIGTERM/SIGINT stop cleanly; SIGHUP reloads the configuration files.
        See localauthd(8) and localauthd.conf(5).
        """

    public init() {}

    /// Parses argv (without the program name). Errors name the bad flag.
    public static func parse(_ arguments: [String]) throws(OptionError) -> DaemonOptions {
        var options = DaemonOptions()
        var index = 0
        func value(_ flag: String) throws(OptionError) -> String {
            index += 1
            guard index < arguments.count, !arguments[index].isEmpty else { throw OptionError("\(flag) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            var argument = arguments[index]
            var inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                inline = String(argument[argument.index(after: equals)...])
                argument = String(argument[..<equals])
            }
            func take(_ flag: String) throws(OptionError) -> String {
                if let inline {
                    guard !inline.isEmpty else { throw OptionError("\(flag) needs a value") }
                    return inline
                }
                return try value(flag)
            }
            switch argument {
            case "--config", "-c": options.configFile = try take(argument)
            case "--socket": options.socket = try take(argument)
            case "--state-dir": options.stateDirectory = try take(argument)
            case "--biometry":
                let text = try take(argument)
                guard let type = BiometryType(wireName: text) else {
                    throw OptionError("--biometry must be none, touchID, faceID or opticID, not \"\(text)\"")
                }
                options.biometry = type
            case "--accept-log-rollback":
                guard inline == nil else { throw OptionError("--accept-log-rollback takes no value") }
                options.acceptLogRollback = true
            case "--help", "-h": options.showHelp = true
            case "--version": options.showVersion = true
            case "--test-config", "-t": options.testConfig = true
            default: throw OptionError("unknown option \"\(arguments[index])\"")
            }
            index += 1
        }
        return options
    }

    /// `Section.Key` -> the flag that sets it, for `--test-config`.
    public var overriddenKeys: [String: String] {
        var keys: [String: String] = [:]
        if socket != nil { keys["Daemon.Socket"] = "--socket" }
        if stateDirectory != nil { keys["Daemon.StateDirectory"] = "--state-dir" }
        if biometry != nil { keys["Biometry.Type"] = "--biometry" }
        return keys
    }

    /// The flags applied on top of the configuration files.
    public func apply(to configuration: inout DaemonConfiguration) throws(OptionError) {
        if let socket {
            guard socket.hasPrefix("/") else { throw OptionError("--socket needs an absolute path") }
            configuration.daemon.socket = socket
        }
        if let stateDirectory {
            guard stateDirectory.hasPrefix("/") else { throw OptionError("--state-dir needs an absolute path") }
            configuration.daemon.stateDirectory = stateDirectory
        }
        if let biometry { configuration.biometry.type = biometry }
    }
}

public struct OptionError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
