// `agent`: the terminal's session agent, as pkttyagent is polkit's (S-65..S-69).
// It registers for the logind session it runs in, then shows on the
// terminal the prompts of that session's apps that asked for the system's
// prompt (`prompt=agent`, LAContext's default): who asks, as the kernel
// says it, the app's reason as the app's words, and the prompt. The
// password is read with echo off straight into a buffer of its own, sent,
// and wiped; it never becomes a String. Ctrl-C cancels the request shown
// (userCancel), or quits when there is none; so does the end of input.
import Glibc
import LocalAuthProtocol
import LocalAuthSystem

struct AgentCommand: Command {
    static let name = "agent"
    static let summary = "Be this terminal's authentication agent: show apps' prompts here"
    static let details = """
        Registers with localauthd as the agent of the logind session this process
        runs in (or of --session ID, which must be that session), owned by the
        calling user. From then on an app of this session whose context asked for
        the system's prompt (LAContext does unless it has a prompt handler) has its
        prompts shown here, with the program that asks, read from the kernel, and
        its reason, quoted as the app's words. The password is typed with echo off
        (an empty line cancels); with a fingerprint reader, touching it works too.
        Under Backend=shadow the password is the login password. Runs until Ctrl-C
        with no request shown, SIGTERM, the end of the terminal or the daemon.
        One agent per session: a second is refused.
        """
    static let isLive = true
    static let options = [
        OptionSpec("--session", value: "ID", help: "the logind session to register for (default: this process's)"),
        SocketOption.spec,
    ]

    var session: String?
    var socket: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requireNoPositionals()
        session = arguments.value("--session")
        socket = SocketOption.path(arguments)
    }

    func run() throws(CommandFailure) -> Int32 {
        // It holds passwords: no core dump, no same-uid ptrace.
        try? SecretMemory.forbidCoreDumps()
        guard let terminal = Terminal.open() else {
            throw CommandFailure("localauthctl agent needs a terminal to show prompts on (none is open).", status: ExitStatus.usage)
        }
        let signals: SignalFD
        do throws(SystemError) {
            Signals.restoreDefaults([SIGINT, SIGTERM, SIGHUP])
            signals = try SignalFD(signals: [SIGINT, SIGTERM, SIGHUP])
        } catch {
            throw CommandFailure("Failed to watch for signals: \(error.message)")
        }
        let client = try DaemonClient.connect(socket, maximumLineLength: 32768)
        let tag = try client.send("register-agent", session.map { [("session", $0)] } ?? [])
        guard let answer = try client.receive(), answer.tag == tag else {
            throw CommandFailure("localauthd closed the connection before answering register-agent", status: ExitStatus.unreachable)
        }
        guard answer.status == .ok else {
            throw CommandFailure(DaemonClient.describe(error: answer), status: DaemonClient.exitStatus(answer))
        }
        let registered = answer.arguments.value(for: "session") ?? "?"
        Console.error("localauthctl agent: the authentication agent of session \(DisplayText.escaped(registered, keepingLineFeeds: false)); Ctrl-C quits.")
        var agent = TerminalAgent(client: client, tag: tag, terminal: terminal)
        return try agent.serve(signals: signals)
    }
}

/// The loop: the daemon's lines, the terminal's input and the signals.
struct TerminalAgent {
    let client: DaemonClient
    let tag: String
    let terminal: Terminal
    /// The request shown, and whether its introduction was printed.
    private var shown: AgentPrompt?
    private var introduced: String?
    private let typed = TypedSecret(capacity: 4096)

    init(client: DaemonClient, tag: String, terminal: Terminal) {
        self.client = client
        self.tag = tag
        self.terminal = terminal
    }

    mutating func serve(signals: SignalFD) throws(CommandFailure) -> Int32 {
        defer {
            typed.wipe()
            terminal.echo(true)
        }
        while true {
            while let response = try client.buffered() { try handle(response) }
            var descriptors = [
                pollfd(fd: client.fileDescriptor.rawValue, events: Int16(POLLIN), revents: 0),
                pollfd(fd: signals.fileDescriptor.rawValue, events: Int16(POLLIN), revents: 0),
                pollfd(fd: terminal.fd, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&descriptors, nfds_t(descriptors.count), -1) < 0 {
                if errno == EINTR { continue }
                throw CommandFailure("poll failed: errno \(errno)")
            }
            if descriptors[1].revents != 0, let signal = try? signals.nextSignal() {
                if signal == SIGINT, let prompt = shown {
                    terminal.write("\n")
                    try client.send("cancel", [("request", prompt.request)])
                } else {
                    return ExitStatus.done
                }
            }
            if descriptors[2].revents != 0 {
                if try !terminalInput() { return ExitStatus.done }
            }
            if descriptors[0].revents != 0 {
                guard try client.fill() else {
                    Console.error("localauthctl agent: localauthd closed the connection.")
                    return ExitStatus.unreachable
                }
            }
        }
    }

    private mutating func handle(_ response: Response) throws(CommandFailure) {
        guard response.tag == tag else { return }
        switch response.status {
        case .prompt:
            guard let prompt = AgentPrompt(response) else { return }
            if introduced != prompt.request {
                // A new request: what was typed for another one is not its.
                terminal.echo(true)
                tcflush(terminal.fd, TCIFLUSH)
                typed.wipe()
                let identity = AppIdentity.read(uid: prompt.appUID, pid: prompt.appPID, process: prompt.appProcess)
                terminal.write(AgentPrompt.introduction(identity, reason: prompt.reason))
                introduced = prompt.request
            }
            shown = prompt
            // The password is never echoed; half of it typed stays in the
            // terminal's line across a "Try again." (nothing is flushed).
            terminal.echo(!prompt.takesPassword)
            terminal.write(prompt.instructions)
        case .done:
            guard let request = response.arguments.value(for: "request") else { return }
            guard request == shown?.request || request == introduced else { return }
            terminal.echo(true)
            tcflush(terminal.fd, TCIFLUSH)
            typed.wipe()
            terminal.write("\n" + AgentPrompt.outcome(response.arguments.value(for: "result") ?? "?") + "\n")
            shown = nil
            introduced = nil
        case .bye:
            throw CommandFailure("localauthd is closing the connection (\(response.arguments.value(for: "reason") ?? "no reason")).",
                                 status: ExitStatus.unreachable)
        default:
            break  // answers to its own passcode/fallback/cancel requests
        }
    }

    /// Reads what the terminal has; false at the end of input.
    private mutating func terminalInput() throws(CommandFailure) -> Bool {
        switch typed.read(from: terminal.fd) {
        case .endOfInput: return false
        case .partial: return true
        case .line:
            defer { typed.wipe() }
            guard let prompt = shown else { return true }  // nothing asked: typeahead is dropped
            if prompt.takesPassword {
                if typed.isEmpty {
                    try client.send("cancel", [("request", prompt.request)])
                } else if try typed.withBytes({ bytes throws(CommandFailure) in
                    try client.sendSecret("passcode", [("request", prompt.request)], key: "secret", secret: bytes)
                }) == nil {
                    terminal.write("\nA password with control characters cannot be sent; type it again: ")
                } else {
                    terminal.write("\n")
                }
            } else if prompt.fallback != nil {
                try client.send("fallback", [("request", prompt.request)])
            }
            return true
        }
    }
}

/// What is typed at a password prompt: bytes in a buffer of their own,
/// read straight from the terminal, wiped when sent or dropped.
final class TypedSecret {
    enum Read { case line, partial, endOfInput }

    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private var count = 0
    private var complete = false

    init(capacity: Int) {
        buffer = .allocate(capacity: capacity)
        buffer.initialize(repeating: 0)
    }

    deinit {
        wipe()
        buffer.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    /// One read(2) (call when poll says readable). A line too long for
    /// the buffer keeps its first bytes and drops the rest.
    func read(from fd: Int32) -> Read {
        if complete { wipe() }
        var scratch: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        defer { withUnsafeMutableBytes(of: &scratch) { SecretMemory.wipe($0.baseAddress!, count: $0.count) } }
        let n = withUnsafeMutableBytes(of: &scratch) { Glibc.read(fd, $0.baseAddress, $0.count) }
        if n < 0 { return errno == EINTR || errno == EAGAIN ? .partial : .endOfInput }
        if n == 0 { return .endOfInput }
        return withUnsafeBytes(of: &scratch) { chunk -> Read in
            for byte in chunk[..<n] {
                if byte == 0x0A {
                    if count > 0, buffer[count - 1] == 0x0D { count -= 1 }
                    complete = true
                    return .line
                }
                if count < buffer.count {
                    buffer[count] = byte
                    count += 1
                }
            }
            return .partial
        }
    }

    func withBytes<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        try body(UnsafeBufferPointer(rebasing: buffer[..<count]))
    }

    func wipe() {
        SecretMemory.wipe(UnsafeMutableRawPointer(buffer.baseAddress!), count: buffer.count)
        count = 0
        complete = false
    }
}
