// `evaluate`: what an app does through LAContext, from a shell. One
// connection: `new`, then `evaluate`, then a small loop over the socket, the
// terminal and SIGINT/SIGTERM (via signalfd):
//   - a biometric PROMPT is shown on stderr; Enter chooses the fallback when offered;
//   - a passcode PROMPT reads the passcode with echo off and sends `passcode`;
//     without a terminal it sends `cancel` (never hang);
//   - Ctrl-C sends `cancel`; a second one quits at once;
//   - the evaluate's final reply ends the loop: OK exits 0, ERR exits 1.

import Glibc
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

struct EvaluateCommand: Command {
    static let name = "evaluate"
    static let summary = "Authenticate the calling user as an app would (biometry, then passcode)"
    static let details = """
        Policies: biometrics, owner (default), companion, biometrics-or-companion, wrist,
        or Apple's names (deviceOwnerAuthentication...). On a biometric prompt an
        administrator feeds the simulated sensor from another shell:
            localauthctl sensor --uid N match
        Press Enter to choose the fallback when one is offered; Ctrl-C cancels.
        """
    static let isLive = true
    static let options = [
        OptionSpec("--policy", value: "P", help: "the LAPolicy (default: owner)"),
        OptionSpec("--reason", value: "TEXT", help: "the reason shown in the prompt"),
        SocketOption.spec,
    ]

    var policy: Policy
    var reason: String
    var socket: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requireNoPositionals()
        let text = arguments.value("--policy") ?? "owner"
        guard let policy = Policy(wireName: text) else {
            throw UsageError("invalid value '\(text)' for --policy: expected one of "
                + Policy.allCases.map(\.wireName).joined(separator: ", "))
        }
        self.policy = policy
        reason = arguments.value("--reason") ?? "localauthctl wants to confirm it is you"
        guard !reason.isEmpty else { throw UsageError("--reason must not be empty") }
        socket = SocketOption.path(arguments)
    }

    func run() throws(CommandFailure) -> Int32 {
        let client = try DaemonClient.connect(socket)
        let created = try client.expectOK("new")
        guard let ctx = created.arguments.value(for: "ctx") else {
            throw CommandFailure("localauthd answered 'new' without a ctx")
        }
        let signals: SignalFD
        do throws(SystemError) { signals = try SignalFD(signals: [SIGINT, SIGTERM, SIGHUP]) } catch {
            throw CommandFailure("Failed to set up signal handling: \(error)")
        }
        var session = EvaluationSession(client: client, ctx: ctx, terminal: Terminal.open())
        let tag = try client.send("evaluate", [("ctx", ctx), ("policy", policy.wireName), ("reason", reason)])
        return try session.run(evaluateTag: tag, signals: signals)
    }
}

/// The loop's state: which prompt waits, and whether we already cancelled.
struct EvaluationSession {
    enum Waiting { case nothing, biometric(fallback: Bool), passcode }

    let client: DaemonClient
    let ctx: String
    let terminal: Terminal?
    var waiting = Waiting.nothing
    var cancelled = false
    /// False once the terminal reported end of input (stop polling it).
    var terminalOpen = true
    var reasonShown = false

    init(client: DaemonClient, ctx: String, terminal: Terminal?) {
        self.client = client
        self.ctx = ctx
        self.terminal = terminal
    }

    mutating func run(evaluateTag: String, signals: SignalFD) throws(CommandFailure) -> Int32 {
        defer { terminal?.echo(true) }
        while true {
            while let response = try client.buffered() {
                if let status = try handle(response, evaluateTag: evaluateTag) { return status }
            }
            var descriptors = [
                pollfd(fd: client.fileDescriptor.rawValue, events: Int16(POLLIN), revents: 0),
                pollfd(fd: signals.fileDescriptor.rawValue, events: Int16(POLLIN), revents: 0),
            ]
            if let terminal, terminalOpen { descriptors.append(pollfd(fd: terminal.fd, events: Int16(POLLIN), revents: 0)) }
            if poll(&descriptors, nfds_t(descriptors.count), -1) < 0 {
                if errno == EINTR { continue }
                throw CommandFailure("Failed to wait for localauthd: poll: errno \(errno)")
            }
            if descriptors[1].revents != 0, (try? signals.nextSignal()) ?? nil != nil {
                if cancelled {
                    terminal?.echo(true)
                    Console.error("localauthctl: interrupted")
                    return 130
                }
                try cancel("Cancelling…")
            }
            if descriptors.count > 2, descriptors[2].revents != 0, let terminal {
                try terminalInput(terminal.readAvailable())
            }
            if descriptors[0].revents != 0 {
                guard try client.fill() else {
                    throw CommandFailure("localauthd closed the connection before the evaluation ended")
                }
            }
        }
    }

    /// Returns the exit status once the evaluation's final reply arrived.
    private mutating func handle(_ response: Response, evaluateTag: String) throws(CommandFailure) -> Int32? {
        if response.status == .bye {
            throw CommandFailure("localauthd closed the connection (\(response.arguments.value(for: "reason") ?? "no reason"))")
        }
        guard response.tag == evaluateTag else {
            // Answers to our passcode / fallback / cancel requests.
            if response.status == .err { Console.error("localauthctl: \(DaemonClient.describe(error: response))") }
            return nil
        }
        switch response.status {
        case .prompt:
            try prompt(response.arguments)
            return nil
        case .ok:
            terminal?.echo(true)
            Console.out("Authenticated (\(response.arguments.value(for: "method") ?? "unknown method"))")
            return 0
        default:
            terminal?.echo(true)
            Console.error("localauthctl: \(DaemonClient.describe(error: response))")
            return 1
        }
    }

    private mutating func prompt(_ arguments: Arguments) throws(CommandFailure) {
        let reason = arguments.value(for: "reason") ?? ""
        if arguments.value(for: "kind") == "passcode" {
            if let message = arguments.value(for: "message") { Console.error(message) }
            guard let terminal, terminalOpen else {
                try cancel("localauthctl: no terminal to read the passcode from; cancelling the evaluation")
                return
            }
            waiting = .passcode
            let left = arguments.value(for: "attempts-left").map { " (\($0) attempts left)" } ?? ""
            terminal.write((reasonShown ? "" : reason + "\n") + "Passcode\(left): ")
            reasonShown = true
            terminal.echo(false)
            return
        }
        let attempt = arguments.value(for: "attempt") ?? "?"
        let action: String
        switch arguments.value(for: "biometry") {
        case "faceID": action = "Look at the camera"
        case "opticID": action = "Look at the sensor"
        default: action = "Touch the sensor"
        }
        if !reasonShown { Console.error(reason) }
        reasonShown = true
        if let message = arguments.value(for: "message") { Console.error(message) }
        Console.error("\(action) (attempt \(attempt))…")
        let fallback = arguments.value(for: "fallback")
        if let fallback {
            Console.error(terminal == nil ? "  Fallback offered: \(fallback)" : "  or press Enter for \"\(fallback)\"")
        }
        waiting = .biometric(fallback: fallback != nil)
    }

    private mutating func terminalInput(_ read: Terminal.LineRead) throws(CommandFailure) {
        if case .endOfInput = read { terminalOpen = false }
        switch (read, waiting) {
        case (.partial, _):
            return
        case (.endOfInput, .passcode):
            terminal?.echo(true)
            try cancel("Cancelling…")
        case (.line(let secret), .passcode):
            terminal?.echo(true)
            waiting = .nothing
            try client.send("passcode", [("ctx", ctx), ("secret", secret)])
        case (.line, .biometric(fallback: true)):
            waiting = .nothing
            try client.send("fallback", [("ctx", ctx)])
        default:
            return  // a stray line (or end of input) while nothing asks for one
        }
    }

    private mutating func cancel(_ note: String) throws(CommandFailure) {
        terminal?.echo(true)
        Console.error(note)
        cancelled = true
        waiting = .nothing
        try client.send("cancel", [("ctx", ctx)])
    }
}
