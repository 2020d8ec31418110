// Signals: process-wide signal dispositions, and SignalFD, which turns
// SIGTERM/SIGHUP/SIGINT into readable events on the epoll loop. Create the
// SignalFD on the main thread before starting any thread: the signals are
// blocked in the calling thread and threads started later inherit that.
import CLocalAuthShim
import Glibc

public enum Signals {
    /// Ignore SIGPIPE, so writing to a closed socket or pipe fails with EPIPE.
    public static func ignoreBrokenPipe() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Gives `signals` their default disposition (a shell without job
    /// control starts background commands with SIGINT ignored, and an
    /// ignored signal never reaches a signalfd).
    public static func restoreDefaults(_ signals: [Int32]) {
        for number in signals { signal(number, SIG_DFL) }
    }
}

public struct SignalFD: Sendable {
    public let fileDescriptor: FileDescriptor

    /// Blocks `signals` and opens a non-blocking signalfd for them.
    public init(signals: [Int32]) throws(SystemError) {
        let fd = try retryOnInterrupt("signalfd") { la_signalfd_create(signals, Int32(signals.count)) }
        fileDescriptor = FileDescriptor(rawValue: fd)
    }

    /// The next pending signal's number, or nil when none is pending.
    public func nextSignal() throws(SystemError) -> Int32? {
        try retryOnInterruptUnlessWouldBlock("read(signalfd)") { la_signalfd_read(fileDescriptor.rawValue) }
    }

    public func close() throws(SystemError) { try fileDescriptor.close() }
}
