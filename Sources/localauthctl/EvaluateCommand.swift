// `evaluate`: what an app does, from a shell — through the LocalAuthentication
// module itself (a fresh LAContext and its evaluatePolicy), so the CLI and
// the library share one prompt flow:
//   - on a terminal, in the foreground, LATerminalPromptHandler shows the
//     prompts on /dev/tty, offers the fallback as Enter, and reads the
//     passcode with echo off (a background job reports on stderr instead);
//   - without a terminal, biometric prompts are reported on stderr (the
//     sensor answers them) and a passcode prompt ends the evaluation at once
//     with notInteractive — never a hang;
//   - Ctrl-C cancels the waiting prompt (userCancel); a second one quits.
// The result: "Authenticated (method)" and exit 0, or the LAError (or the
// daemon's refusal, see DaemonRefusal) and exit 1.

import Dispatch
import Foundation
import Glibc
import LocalAuthCore
import LocalAuthentication

struct EvaluateCommand: Command {
    static let name = "evaluate"
    static let summary = "Authenticate the calling user as an app would (biometry, then passcode)"
    static let details = """
        Policies: biometrics, owner (default), companion, biometrics-or-companion, wrist,
        or Apple's names (deviceOwnerAuthentication...). On a biometric prompt an
        administrator feeds the simulated sensor from another shell:
            localauthctl sensor --uid N match
        On a terminal, policy owner shows both at once ("Touch the sensor or type
        your passcode"): the first to succeed wins. Press Enter to choose the
        fallback when one is offered; Ctrl-C cancels.
        Without a terminal, a passcode prompt ends the evaluation at once
        (notInteractive) unless --secret-stdin is given: then each passcode prompt
        reads one line from standard input (an empty line or the end of input
        cancels). Exit status 0 when authenticated, 1 with the LAError when not, 3
        when localauthd refuses the request (a protocol error, e.g. bad-argument
        for wrist), 4 when it cannot be reached.
        """
    static let isLive = true
    static let options = [
        OptionSpec("--policy", value: "P", help: "the LAPolicy (default: owner)"),
        OptionSpec("--reason", value: "TEXT", help: "the reason shown in the prompt"),
        OptionSpec("--secret-stdin", help: "answer passcode prompts with lines from standard input"),
        SocketOption.spec,
    ]

    var policy: LAPolicy
    var reason: String
    var socket: String
    var secretStdin: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requireNoPositionals()
        let text = arguments.value("--policy") ?? "owner"
        guard let parsed = Policy(wireName: text), let policy = LAPolicy(rawValue: Int(parsed.rawValue)) else {
            throw UsageError("invalid value '\(text)' for --policy: expected one of "
                + Policy.allCases.map(\.wireName).joined(separator: ", "))
        }
        self.policy = policy
        reason = arguments.value("--reason") ?? "localauthctl wants to confirm it is you"
        guard !reason.isEmpty else { throw UsageError("--reason must not be empty") }
        socket = SocketOption.path(arguments)
        secretStdin = arguments.flag("--secret-stdin")
    }

    func run() throws(CommandFailure) -> Int32 {
        let context = LAContext(socketPath: socket)
        let handler = ShellPromptHandler(secretsFromStandardInput: secretStdin)
        context.promptHandler = handler
        let interrupts = handler.cancelOnInterrupt()
        defer { interrupts.cancel() }

        let outcome = Outcome()
        context.evaluatePolicy(policy, localizedReason: reason) { success, error in
            outcome.finish(success, error)
        }
        let (success, error) = outcome.wait()
        if success {
            Console.out("Authenticated (\(context.evaluatedMethod ?? "unknown method"))")
            return 0
        }
        Console.error("localauthctl: \(Self.describe(error))")
        return Self.exitStatus(error)
    }

    /// Refused (a protocol error), unreachable, or no (any other LAError).
    static func exitStatus(_ error: (any Error)?) -> Int32 {
        guard let laError = error as? LAError else { return ExitStatus.no }
        if DaemonRefusal(laError) != nil { return ExitStatus.refused }
        return laError.reason == "daemon-unreachable" ? ExitStatus.unreachable : ExitStatus.no
    }

    /// "MESSAGE (name, code N); try again in N s; reason: R", as for daemon errors;
    /// a protocol error as the daemon's refusal.
    static func describe(_ error: (any Error)?) -> String {
        guard let laError = error as? LAError else { return "\(error.map { "\($0)" } ?? "unknown error")" }
        if let refusal = DaemonRefusal(laError) { return refusal.text }
        var text = "\(laError.localizedDescription) (\(laError.code.name), code \(laError.code.rawValue))"
        if let retry = laError.retryAfter { text += "; try again in \(retry) s" }
        if let reason = laError.reason { text += "; reason: \(reason)" }
        return text
    }
}

/// The evaluation's one reply, handed from the context's private queue.
private final class Outcome: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: (Bool, (any Error)?) = (false, nil)

    func finish(_ success: Bool, _ error: (any Error)?) {
        result = (success, error)
        done.signal()
    }

    func wait() -> (Bool, (any Error)?) {
        done.wait()
        return result
    }
}

/// The terminal handler when there is a terminal; else biometric prompts on
/// stderr and no passcode. Remembers the waiting prompt's session, so that
/// Ctrl-C can press its cancel button.
final class ShellPromptHandler: LAPromptHandler, @unchecked Sendable {
    private let terminal: LATerminalPromptHandler?
    private let lock = NSLock()
    private var session: (any LAPromptSession)?
    private var announced = false
    /// `--secret-stdin`: passcodes are lines of standard input, not typed.
    private let secretsFromStandardInput: Bool

    init(secretsFromStandardInput: Bool = false) {
        self.secretsFromStandardInput = secretsFromStandardInput
        let candidate = LATerminalPromptHandler()
        terminal = secretsFromStandardInput || !candidate.canCollectPasscode ? nil : candidate
    }

    var canCollectPasscode: Bool { secretsFromStandardInput || foregroundTerminal != nil }

    /// The terminal, only while we are its foreground job: a background job
    /// (`localauthctl evaluate &`) that read it would be stopped by SIGTTIN.
    private var foregroundTerminal: LATerminalPromptHandler? {
        guard let terminal else { return nil }
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return tcgetpgrp(fd) == getpgrp() ? terminal : nil
    }

    func showBiometricPrompt(_ prompt: LABiometricPrompt, session: any LAPromptSession) {
        lock.withLock { self.session = session }
        if let terminal = foregroundTerminal { return terminal.showBiometricPrompt(prompt, session: session) }
        var lines: [String] = []
        if lock.withLock({ defer { announced = true }; return !announced }) { lines.append(prompt.localizedReason) }
        if let message = prompt.message { lines.append(message) }
        let action = prompt.biometryType == .faceID ? "Look at the camera"
            : prompt.biometryType == .opticID ? "Look at the sensor" : "Touch the sensor"
        lines.append("\(action) (attempt \(prompt.attempt))…")
        if let fallback = prompt.fallbackTitle { lines.append("  Fallback offered: \(fallback)") }
        Console.error(lines.joined(separator: "\n"))
    }

    func passcode(for prompt: LAPasscodePrompt, session: any LAPromptSession) async -> String? {
        lock.withLock { self.session = session }
        if secretsFromStandardInput {
            // Never echoed anywhere; an empty line or EOF presses Cancel.
            guard let line = readLine(strippingNewline: true), !line.isEmpty else { return nil }
            return line
        }
        return await foregroundTerminal?.passcode(for: prompt, session: session)
    }

    /// S-60: on a terminal, touch or type at once ("Touch the sensor or type
    /// your passcode"); with --secret-stdin or none, biometry first.
    var canShowCombinedPrompt: Bool { !secretsFromStandardInput && foregroundTerminal != nil }

    func passcode(forCombined prompt: LACombinedPrompt, session: any LAPromptSession) async -> String? {
        lock.withLock { self.session = session }
        return await foregroundTerminal?.passcode(forCombined: prompt, session: session)
    }

    func dismissPrompt(session: any LAPromptSession) {
        lock.withLock { self.session = nil }
        terminal?.dismissPrompt(session: session)
    }

    /// SIGINT cancels the waiting prompt; a second SIGINT quits (exit 130).
    func cancelOnInterrupt() -> any DispatchSourceSignal {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: DispatchQueue.global())
        let interrupted = Interrupted()
        source.setEventHandler { [self] in
            if interrupted.again() {
                Console.error("localauthctl: interrupted")
                exit(130)
            }
            let waiting = lock.withLock { session }
            if let waiting { waiting.cancel() } else { Console.error("localauthctl: interrupted"); exit(130) }
        }
        source.resume()
        return source
    }
}

private final class Interrupted: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func again() -> Bool { lock.withLock { count += 1; return count > 1 } }
}
