// Secrets come from the controlling terminal with echo off (never from argv,
// which every user can read in /proc), or, for scripts, as lines on stdin.
// The evaluate loop polls the terminal alongside the socket, so the terminal
// is opened once and its echo switched off only while a secret is typed.

import Glibc

final class Terminal {
    let fd: Int32
    private var saved: termios?
    private var pending: [UInt8] = []

    /// The controlling terminal, or nil when there is none (cron, CI, pipes).
    static func open() -> Terminal? {
        let fd = Glibc.open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        return Terminal(fd: fd)
    }

    private init(fd: Int32) { self.fd = fd }

    deinit {
        echo(true)
        close(fd)
    }

    func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Switches echo off (remembering the settings) or back on.
    func echo(_ on: Bool) {
        if on {
            guard var settings = saved else { return }
            tcsetattr(fd, TCSAFLUSH, &settings)
            saved = nil
        } else {
            guard saved == nil else { return }
            var settings = termios()
            guard tcgetattr(fd, &settings) == 0 else { return }
            saved = settings
            settings.c_lflag &= ~tcflag_t(ECHO)
            settings.c_lflag |= tcflag_t(ECHONL)
            tcsetattr(fd, TCSAFLUSH, &settings)
        }
    }

    enum LineRead { case line(String), partial, endOfInput }

    /// Reads what is available (call when poll says readable); a complete
    /// line comes back without its LF.
    func readAvailable() -> LineRead {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 { return errno == EINTR || errno == EAGAIN ? .partial : .endOfInput }
        if n == 0 { return .endOfInput }
        pending.append(contentsOf: chunk[..<n])
        for i in chunk.indices { chunk[i] = 0 }
        guard let newline = pending.firstIndex(of: UInt8(ascii: "\n")) else { return .partial }
        let line = String(decoding: pending[..<newline], as: UTF8.self)
        for i in pending.indices { pending[i] = 0 }
        pending.removeAll()
        return .line(line)
    }

    /// Blocking: shows `prompt`, reads one line with echo off. nil at end of input.
    func readSecret(_ prompt: String) -> String? {
        write(prompt)
        echo(false)
        defer { echo(true) }
        while true {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, -1) < 0 && errno != EINTR { return nil }
            switch readAvailable() {
            case .line(let line): return line
            case .partial: continue
            case .endOfInput: return nil
            }
        }
    }
}

/// `--secret-stdin`: secrets as lines on standard input, for scripts.
enum SecretInput {
    /// All of stdin, split into lines (LF, a CR before it dropped).
    static func lines() throws(CommandFailure) -> [String] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw CommandFailure("Failed to read the secrets from standard input: errno \(errno)") }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[..<n])
            if bytes.count > 64 * 1024 { throw CommandFailure("Failed to read the secrets from standard input: too long") }
        }
        return bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            var line = line
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            return String(decoding: line, as: UTF8.self)
        }
    }
}
