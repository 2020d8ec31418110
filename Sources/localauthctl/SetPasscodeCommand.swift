// `passcode set|clear` (and the older spellings `set-passcode`,
// `clear-passcode`). Set reads the new passcode twice (and the current one
// when a user changes their own) from the terminal with echo off, or as lines
// on stdin with --secret-stdin. Never from argv (S-39: secrets stay out of sight).

import Glibc

struct SetPasscodeCommand: Command {
    static let name = "set-passcode"
    static let summary = "Set or change a passcode (same as 'passcode set')"
    static let details = """
        Without --uid, your own passcode; changing it asks for the current one first.
        Setting another user's passcode needs an administrator.
        With --secret-stdin, line 1 is the new passcode and line 2, when needed, the
        current one. There is deliberately no option that takes a passcode.
        """
    static let isLive = true
    static let options = [
        OptionSpec("--uid", value: "N", help: "the user (id or name; default: you)"),
        OptionSpec("--secret-stdin", help: "read the passcodes as lines from standard input"),
        SocketOption.spec,
    ]

    var uid: UInt32?
    var fromStdin: Bool
    var socket: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requireNoPositionals()
        uid = try arguments.uid("--uid")
        fromStdin = arguments.flag("--secret-stdin")
        socket = SocketOption.path(arguments)
    }

    func run() throws(CommandFailure) -> Int32 {
        let client = try DaemonClient.connect(socket)
        let own = uid == nil || uid == getuid()
        var needsOld = false
        if own {
            let status = try client.expectOK("status")
            needsOld = status.arguments.value(for: "passcode-set") == "true"
        }
        let (new, old) = fromStdin ? try secretsFromStdin(needsOld: needsOld) : try secretsFromTerminal(needsOld: needsOld)
        var arguments = [("secret", new)]
        if let old { arguments.append(("old-secret", old)) }
        if let uid, !own { arguments.append(("uid", String(uid))) }
        _ = try client.expectOK("set-passcode", arguments)
        Console.out("Passcode set for uid \(uid ?? getuid()).")
        return 0
    }

    private func secretsFromStdin(needsOld: Bool) throws(CommandFailure) -> (String, String?) {
        let lines = try SecretInput.lines()
        guard let new = lines.first, !new.isEmpty else {
            throw CommandFailure("--secret-stdin: expected the new passcode on the first line")
        }
        guard needsOld else { return (new, nil) }
        guard lines.count > 1, !lines[1].isEmpty else {
            throw CommandFailure("--secret-stdin: a passcode is already set; expected the current one on the second line")
        }
        return (new, lines[1])
    }

    private func secretsFromTerminal(needsOld: Bool) throws(CommandFailure) -> (String, String?) {
        guard let terminal = Terminal.open() else {
            throw CommandFailure("no terminal to read the passcode from; use --secret-stdin")
        }
        var old: String?
        if needsOld {
            guard let current = terminal.readSecret("Current passcode: ") else { throw CommandFailure("cancelled") }
            old = current
        }
        guard let new = terminal.readSecret("New passcode: "), !new.isEmpty else { throw CommandFailure("cancelled") }
        guard let again = terminal.readSecret("Retype new passcode: ") else { throw CommandFailure("cancelled") }
        guard new == again else { throw CommandFailure("the passcodes do not match; nothing changed") }
        return (new, old)
    }
}
