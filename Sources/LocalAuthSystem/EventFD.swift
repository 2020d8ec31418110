// EventFD: how worker threads (yescrypt, fingerprint backends) wake the event
// loop after posting a result: they add to a counter, the loop sees the fd
// readable and drains it. Non-blocking; safe to share between threads.
import CLocalAuthShim
import Glibc

public struct EventFD: Sendable {
    public let fileDescriptor: FileDescriptor

    public init() throws(SystemError) {
        fileDescriptor = FileDescriptor(rawValue: try retryOnInterrupt("eventfd") { la_eventfd_create(0) })
    }

    /// Adds `value` to the counter, waking the loop.
    public func post(_ value: UInt64 = 1) throws(SystemError) {
        // EAGAIN means the counter is near overflow: the loop is awake already.
        _ = try retryOnInterruptUnlessWouldBlock("write(eventfd)") { la_eventfd_write(fileDescriptor.rawValue, value) }
    }

    /// The counter's value (then reset to 0), or nil when nothing was posted.
    public func drain() throws(SystemError) -> UInt64? {
        var value: UInt64 = 0
        let rc = try retryOnInterruptUnlessWouldBlock("read(eventfd)") { la_eventfd_read(fileDescriptor.rawValue, &value) }
        return rc == nil ? nil : value
    }

    public func close() throws(SystemError) { try fileDescriptor.close() }
}
