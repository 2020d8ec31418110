// Epoll: the event loop's readiness source. Each registration carries a
// 64-bit datum of the caller's choosing (a connection id, a tag for the
// listener or the eventfd); wait() fills buffers allocated once, so a turn of
// the loop allocates nothing. One thread waits; add/modify/remove follow the
// kernel's rules and may be called between waits.
import CLocalAuthShim
import Glibc

public final class Epoll {
    public struct Events: OptionSet, Hashable, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        public static let readable = Events(rawValue: LA_EPOLLIN)
        public static let writable = Events(rawValue: LA_EPOLLOUT)
        public static let error = Events(rawValue: LA_EPOLLERR)
        public static let hangUp = Events(rawValue: LA_EPOLLHUP)
        public static let readHangUp = Events(rawValue: LA_EPOLLRDHUP)
        public static let edgeTriggered = Events(rawValue: LA_EPOLLET)
    }

    public struct Event: Hashable, Sendable {
        public let events: Events
        public let data: UInt64
    }

    /// The events of one wait, read in place; valid until the next wait.
    public struct ReadyEvents: RandomAccessCollection {
        fileprivate let events: UnsafePointer<UInt32>
        fileprivate let data: UnsafePointer<UInt64>
        public let count: Int

        public var startIndex: Int { 0 }
        public var endIndex: Int { count }
        public subscript(position: Int) -> Event {
            precondition(position >= 0 && position < count, "Epoll.ReadyEvents index out of range")
            return Event(events: Events(rawValue: events[position]), data: data[position])
        }
    }

    public let fileDescriptor: FileDescriptor
    private let capacity: Int
    private let readyEvents: UnsafeMutablePointer<UInt32>
    private let readyData: UnsafeMutablePointer<UInt64>

    /// An epoll instance returning at most `capacity` events per wait.
    public init(capacity: Int = 256) throws(SystemError) {
        precondition(capacity > 0 && capacity <= Int(LA_EPOLL_MAX_EVENTS), "Epoll capacity out of range")
        fileDescriptor = FileDescriptor(rawValue: try retryOnInterrupt("epoll_create1") { la_epoll_create() })
        self.capacity = capacity
        readyEvents = .allocate(capacity: capacity)
        readyData = .allocate(capacity: capacity)
    }

    deinit {
        readyEvents.deallocate()
        readyData.deallocate()
        try? fileDescriptor.close()
    }

    public func add(_ fd: FileDescriptor, events: Events, data: UInt64) throws(SystemError) {
        try control(LA_EPOLL_CTL_ADD, "epoll_ctl(ADD)", fd, events, data)
    }

    public func modify(_ fd: FileDescriptor, events: Events, data: UInt64) throws(SystemError) {
        try control(LA_EPOLL_CTL_MOD, "epoll_ctl(MOD)", fd, events, data)
    }

    public func remove(_ fd: FileDescriptor) throws(SystemError) {
        try control(LA_EPOLL_CTL_DEL, "epoll_ctl(DEL)", fd, [], 0)
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever, 0: poll). An
    /// interrupted wait returns no events rather than restarting the timeout.
    public func wait(timeoutMilliseconds: Int32) throws(SystemError) -> ReadyEvents {
        var n = la_epoll_wait(fileDescriptor.rawValue, readyEvents, readyData, Int32(capacity), timeoutMilliseconds)
        if n < 0 {
            guard errno == EINTR else { throw .current("epoll_wait") }
            n = 0
        }
        return ReadyEvents(events: readyEvents, data: readyData, count: Int(n))
    }

    private func control(_ op: Int32, _ call: String, _ fd: FileDescriptor, _ events: Events, _ data: UInt64) throws(SystemError) {
        _ = try retryOnInterrupt(call) { la_epoll_ctl(fileDescriptor.rawValue, op, fd.rawValue, events.rawValue, data) }
    }
}
