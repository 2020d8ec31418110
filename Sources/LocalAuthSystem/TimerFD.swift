// TimerFD: a timer that becomes readable on the epoll loop when it expires
// (the daemon's next deadline). CLOCK_MONOTONIC, or CLOCK_BOOTTIME, whose
// time runs on during a suspend (a deadline that passed meanwhile is met
// at the resume, not as long after it). Non-blocking.
import CLocalAuthShim

public struct TimerFD: Sendable {
    public let fileDescriptor: FileDescriptor

    public init(countingSuspend: Bool = false) throws(SystemError) {
        fileDescriptor = FileDescriptor(rawValue: try retryOnInterrupt("timerfd_create") {
            countingSuspend ? la_timerfd_create_boottime() : la_timerfd_create()
        })
    }

    /// Fires after `nanoseconds`, then every `interval` nanoseconds (0: once).
    public func arm(afterNanoseconds nanoseconds: UInt64, intervalNanoseconds interval: UInt64 = 0) throws(SystemError) {
        // A zero first expiry would disarm the timer; fire as soon as possible instead.
        let first = max(nanoseconds, 1)
        _ = try retryOnInterrupt("timerfd_settime") { la_timerfd_set(fileDescriptor.rawValue, first, interval) }
    }

    public func disarm() throws(SystemError) {
        _ = try retryOnInterrupt("timerfd_settime") { la_timerfd_set(fileDescriptor.rawValue, 0, 0) }
    }

    /// Expirations since the last read, or nil when it has not fired.
    public func readExpirations() throws(SystemError) -> UInt64? {
        var count: UInt64 = 0
        let rc = try retryOnInterruptUnlessWouldBlock("read(timerfd)") { la_timerfd_read(fileDescriptor.rawValue, &count) }
        return rc == nil ? nil : count
    }

    public func close() throws(SystemError) { try fileDescriptor.close() }
}
