// Output: stdout is buffered here and written with write(2) (it may be a
// pager's pipe, see Pager); stderr is for diagnostics and prompts and is
// written at once, after flushing stdout so the two stay in order. Both
// pass through DisplayText: no control a user put into an event, a message
// or a file name reaches the terminal raw (issue 27 item 10).

import Glibc

enum Console {
    nonisolated(unsafe) private static var buffer: [UInt8] = []

    static func out(_ text: String, terminator: String = "\n") {
        buffer.append(contentsOf: DisplayText.escaped(text, keepingLineFeeds: true).utf8)
        buffer.append(contentsOf: terminator.utf8)
        if buffer.count >= 64 * 1024 { flush() }
    }

    static func error(_ text: String) {
        flush()
        writeAll(2, Array((DisplayText.escaped(text, keepingLineFeeds: true) + "\n").utf8))
    }

    static func flush() {
        guard !buffer.isEmpty else { return }
        writeAll(1, buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    static var stdoutIsTerminal: Bool { isatty(1) == 1 }

    /// Best effort: a closed pipe (the pager quit) just drops the output.
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}
