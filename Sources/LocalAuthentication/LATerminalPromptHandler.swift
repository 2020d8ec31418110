// The default prompt handler: the controlling terminal (`/dev/tty`).
//
// It prints the reason and what to do ("Touch the sensor (attempt 2)…"),
// offers the fallback as "press Enter", and reads the passcode with echo off.
// Reads wait in poll(2) on the terminal and on a wake-up pipe, so a prompt
// that ends meanwhile (the sensor answered, a timeout, invalidate) stops the
// read at once and restores the terminal's echo. Without a terminal it says
// so through `canCollectPasscode`, and the context ends a passcode prompt
// with `notInteractive` instead of waiting.

import Dispatch
import Foundation
import Glibc

public final class LATerminalPromptHandler: LAPromptHandler, @unchecked Sendable {
    public let path: String
    private let lock = NSLock()
    /// The read in progress (fallback watch or passcode), if any.
    private var read: TerminalRead?
    /// Sessions whose reason was already printed.
    private var announced: Set<ObjectIdentifier> = []

    /// - Parameter path: the terminal; `/dev/tty` is the controlling one.
    public init(path: String = "/dev/tty") {
        self.path = path
    }

    public var canCollectPasscode: Bool {
        let fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    public func showBiometricPrompt(_ prompt: LABiometricPrompt, session: any LAPromptSession) {
        stopRead()
        guard let terminal = TerminalRead(path: path) else { return }
        var text = announce(prompt.localizedReason, session)
        if let message = prompt.message { text += message + "\n" }
        let action: String
        switch prompt.biometryType {
        case .faceID: action = "Look at the camera"
        case .opticID: action = "Look at the sensor"
        default: action = "Touch the sensor"
        }
        text += "\(action) (attempt \(prompt.attempt))…\n"
        guard let fallback = prompt.fallbackTitle else {
            terminal.write(text)
            terminal.finish()
            return
        }
        text += "  or press Enter for \"\(fallback)\"\n"
        terminal.write(text)
        start(terminal)
        DispatchQueue.global().async { [weak session] in
            if terminal.readLine(echo: true) != nil { session?.chooseFallback() }
            terminal.finish()
        }
    }

    /// S-60: both at once, like macOS's dialog.
    public var canShowCombinedPrompt: Bool { canCollectPasscode }

    public func passcode(forCombined prompt: LACombinedPrompt, session: any LAPromptSession) async -> String? {
        let action: String
        switch prompt.biometryType {
        case .faceID: action = "Look at the camera"
        case .opticID: action = "Look at the sensor"
        default: action = "Touch the sensor"
        }
        return await readPasscode(prompt.localizedReason, message: prompt.message, session: session,
                                  ask: "\(action) or type your passcode (\(prompt.attemptsLeft) attempts left; empty line: \(prompt.cancelTitle)): ")
    }

    public func passcode(for prompt: LAPasscodePrompt, session: any LAPromptSession) async -> String? {
        await readPasscode(prompt.localizedReason, message: prompt.message, session: session,
                           ask: "Passcode (\(prompt.attemptsLeft) attempts left; empty line: \(prompt.cancelTitle)): ")
    }

    /// Prints the prompt and reads a line with echo off. A read woken by a
    /// new prompt (a miss during the combined prompt) leaves what was typed
    /// in the terminal's line: the next read gets it.
    private func readPasscode(_ reason: String, message: String?, session: any LAPromptSession, ask: String) async -> String? {
        // A prompt shown again (a miss) ends the line of the one it replaces.
        let replaced = stopRead()
        guard let terminal = TerminalRead(path: path) else { return nil }
        var text = (replaced ? "\n" : "") + announce(reason, session)
        if let message { text += message + "\n" }
        text += ask
        terminal.silence()
        terminal.write(text)
        start(terminal)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                DispatchQueue.global().async { [self] in
                    let line = terminal.readLine(echo: false)
                    // Answered (not woken): no read of it left to replace.
                    lock.withLock { if read === terminal { read = nil } }
                    terminal.finish()
                    continuation.resume(returning: line.flatMap { $0.isEmpty ? nil : $0 })
                }
            }
        } onCancel: {
            terminal.wake()
        }
    }

    public func dismissPrompt(session: any LAPromptSession) {
        stopRead()
        _ = lock.withLock { announced.remove(ObjectIdentifier(session)) }
    }

    private func announce(_ reason: String, _ session: any LAPromptSession) -> String {
        lock.withLock { announced.insert(ObjectIdentifier(session)).inserted } ? reason + "\n" : ""
    }

    private func start(_ terminal: TerminalRead) {
        lock.withLock { read = terminal }
    }

    /// Wakes the read in progress; whether there was one.
    @discardableResult
    private func stopRead() -> Bool {
        let previous: TerminalRead? = lock.withLock {
            defer { read = nil }
            return read
        }
        previous?.wake()
        return previous != nil
    }
}

/// One open terminal and one cancellable line read on it.
final class TerminalRead: @unchecked Sendable {
    private let fd: Int32
    private var wakeFDs: [Int32] = [-1, -1]
    private let lock = NSLock()
    private var closed = false
    /// The terminal's mode before `silence()`, restored after the read.
    private var savedMode: termios?

    init?(path: String) {
        fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        guard pipe(&wakeFDs) == 0 else {
            close(fd)
            return nil
        }
        for end in wakeFDs { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    }

    deinit { finish() }

    func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Stops a `readLine` in progress (it returns nil).
    func wake() {
        lock.withLock {
            guard !closed else { return }
            var byte: UInt8 = 1
            _ = Glibc.write(wakeFDs[1], &byte, 1)
        }
    }

    /// One line without its LF; nil at end of input or when woken. With
    /// `echo: false` the terminal's echo is off for the read and restored after.
    /// Echo off, before the prompt is written: what the user types after
    /// seeing it is never shown, and nothing typed is flushed (TCSANOW).
    func silence() {
        guard savedMode == nil else { return }
        var saved = termios()
        guard tcgetattr(fd, &saved) == 0 else { return }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        quiet.c_lflag |= tcflag_t(ECHONL)
        if tcsetattr(fd, TCSANOW, &quiet) == 0 { savedMode = saved }
    }

    private func restoreEcho() {
        guard var saved = savedMode else { return }
        tcsetattr(fd, TCSANOW, &saved)
        savedMode = nil
    }

    func readLine(echo: Bool) -> String? {
        if !echo { silence() }
        defer { restoreEcho() }
        var line: [UInt8] = []
        defer { for i in line.indices { line[i] = 0 } }
        while true {
            var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: wakeFDs[0], events: Int16(POLLIN), revents: 0)]
            if poll(&descriptors, 2, -1) < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if descriptors[1].revents != 0 { return nil }
            var byte: UInt8 = 0
            let n = Glibc.read(fd, &byte, 1)
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if n <= 0 { return nil }
            if byte == UInt8(ascii: "\n") {
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            line.append(byte)
            if line.count > 4096 { return nil }
        }
    }

    func finish() {
        lock.withLock {
            guard !closed else { return }
            closed = true
            close(fd)
            close(wakeFDs[0])
            close(wakeFDs[1])
        }
    }
}
