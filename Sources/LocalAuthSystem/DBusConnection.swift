// DBusConnection: a thin, non-blocking wrapper of sd-bus (libsystemd) for a
// single-threaded epoll loop, as a client (fprintd, logind) and as a
// server (the D-Bus API: DBusServing.swift). The caller puts `fd` into its epoll set with
// `events`, calls `process()` when it is ready or when `deadline` passed,
// and re-reads `events` afterwards. Only asynchronous calls exist here:
// every method call carries a timeout and its reply (or the timeout, as an
// error reply) comes back through a closure run inside `process()`.
// Nothing in this file ever waits for the bus.
import CSystemd
import Glibc

public final class DBusConnection {
    /// The sd_bus object; nil once closed.
    private(set) var bus: OpaquePointer?
    /// Live calls and matches. The closure box is owned here; sd-bus gets
    /// an unretained pointer to it as userdata, and the slot is unreffed
    /// (which detaches the callback) when the entry is dropped.
    private var slots: [UInt64: (slot: OpaquePointer, box: HandlerBox)] = [:]
    private var nextSlot: UInt64 = 1

    /// Connects to `address` ("unix:path=..."), or to the system bus when
    /// nil ($DBUS_SYSTEM_BUS_ADDRESS or /run/dbus/system_bus_socket). The
    /// connection and the bus's Hello complete inside later `process()` calls.
    public init(address: String?) throws(SystemError) {
        var bus: OpaquePointer?
        if let address {
            var rc = sd_bus_new(&bus)
            if rc < 0 { throw SystemError(call: "sd_bus_new", errno: -rc) }
            rc = sd_bus_set_address(bus, address)
            if rc >= 0 { rc = sd_bus_set_bus_client(bus, 1) }
            if rc >= 0 { rc = sd_bus_start(bus) }
            if rc < 0 {
                sd_bus_unref(bus)
                throw SystemError(call: "sd_bus_start", errno: -rc, path: address)
            }
        } else {
            let rc = sd_bus_open_system(&bus)
            if rc < 0 { throw SystemError(call: "sd_bus_open_system", errno: -rc) }
        }
        self.bus = bus
    }

    /// A connection over an already connected socket (tests: one end of a
    /// socketpair, so messages can be built without any bus daemon).
    public init(socket fd: Int32) throws(SystemError) {
        var bus: OpaquePointer?
        var rc = sd_bus_new(&bus)
        if rc < 0 { throw SystemError(call: "sd_bus_new", errno: -rc) }
        rc = sd_bus_set_fd(bus, fd, fd)
        if rc >= 0 { rc = sd_bus_start(bus) }
        if rc < 0 {
            sd_bus_unref(bus)
            throw SystemError(call: "sd_bus_start", errno: -rc)
        }
        self.bus = bus
    }

    deinit { close() }

    /// Detaches every callback (none runs afterwards) and closes the socket.
    /// Never flushes: a hung peer must not hold the caller.
    public func close() {
        for (_, entry) in slots { sd_bus_slot_unref(entry.slot) }
        slots.removeAll()
        if let bus {
            sd_bus_close(bus)
            sd_bus_unref(bus)
        }
        bus = nil
    }

    public var isOpen: Bool { bus != nil }

    /// The socket to watch; -1 when closed.
    public var fd: Int32 { bus.map { sd_bus_get_fd($0) } ?? -1 }

    /// What to wait for on `fd` (POLLIN and/or POLLOUT as epoll bits).
    public var wantsWritable: Bool {
        guard let bus else { return false }
        let events = sd_bus_get_events(bus)
        return events > 0 && (Int16(events) & Int16(POLLOUT)) != 0
    }

    /// CLOCK_MONOTONIC microseconds by which `process()` must run again
    /// (a call's timeout, or work already queued: 0); nil = none.
    public var deadline: UInt64? {
        guard let bus else { return nil }
        var usec: UInt64 = 0
        guard sd_bus_get_timeout(bus, &usec) >= 0, usec != UInt64.max else { return nil }
        return usec
    }

    /// Dispatches everything that is ready: replies, signals, timeouts.
    /// Throws when the connection is lost (then `close()` it).
    public func process() throws(SystemError) {
        guard let bus else { throw SystemError(call: "sd_bus_process", errno: ENOTCONN) }
        // Bounded: a peer flooding us with messages cannot keep the loop here.
        for _ in 0..<256 {
            let rc = sd_bus_process(bus, nil)
            if rc < 0 { throw SystemError(call: "sd_bus_process", errno: -rc) }
            if rc == 0 || self.bus == nil { return }
        }
    }

    /// At shutdown only (it blocks): processes the bus until `done()` holds
    /// or `timeoutMicros` pass, so that calls written last (Release) are
    /// sent and answered before the connection closes.
    public func drain(timeoutMicros: UInt64, until done: () -> Bool) {
        guard let bus else { return }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let deadline = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000 + timeoutMicros
        while !done(), self.bus != nil {
            _ = sd_bus_flush(bus)
            if (try? process()) == nil { return }
            clock_gettime(CLOCK_MONOTONIC, &now)
            let current = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
            guard current < deadline, !done() else { return }
            _ = sd_bus_wait(bus, min(deadline - current, 50_000))
        }
    }

    /// Sends a method call; `reply` runs once inside a later `process()`
    /// with the reply or an error (a timeout is the error
    /// org.freedesktop.DBus.Error.Timeout / NoReply), unless the connection
    /// is closed first. Returns a handle for `cancel`.
    @discardableResult
    public func call(destination: String, path: String, interface: String, member: String,
                     arguments: [DBusArgument] = [], timeoutMicros: UInt64,
                     reply: @escaping (DBusMessage) -> Void) throws(SystemError) -> UInt64 {
        guard let bus else { throw SystemError(call: "sd_bus_call_async", errno: ENOTCONN) }
        var message: OpaquePointer?
        var rc = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
        if rc < 0 { throw SystemError(call: "sd_bus_message_new_method_call", errno: -rc) }
        defer { sd_bus_message_unref(message) }
        for argument in arguments {
            rc = argument.append(to: message)
            if rc < 0 { throw SystemError(call: "sd_bus_message_append_basic", errno: -rc) }
        }
        let id = nextSlot
        nextSlot &+= 1
        let box = HandlerBox(connection: self, id: id, once: true, handler: reply)
        var slot: OpaquePointer?
        rc = sd_bus_call_async(bus, &slot, message, dbusTrampoline, Unmanaged.passUnretained(box).toOpaque(), timeoutMicros)
        if rc < 0 { throw SystemError(call: "sd_bus_call_async", errno: -rc) }
        if let slot { slots[id] = (slot, box) }
        return id
    }

    /// Subscribes to signals; `handler` runs for each one inside `process()`.
    /// `sender` is matched by the bus daemon against the name's owner. The
    /// AddMatch call itself is asynchronous.
    @discardableResult
    public func matchSignal(sender: String?, path: String?, interface: String, member: String,
                            handler: @escaping (DBusMessage) -> Void) throws(SystemError) -> UInt64 {
        guard let bus else { throw SystemError(call: "sd_bus_match_signal_async", errno: ENOTCONN) }
        let id = nextSlot
        nextSlot &+= 1
        let box = HandlerBox(connection: self, id: id, once: false, handler: handler)
        var slot: OpaquePointer?
        let rc = sd_bus_match_signal_async(bus, &slot, sender, path, interface, member, dbusTrampoline, nil,
                                           Unmanaged.passUnretained(box).toOpaque())
        if rc < 0 { throw SystemError(call: "sd_bus_match_signal_async", errno: -rc) }
        if let slot { slots[id] = (slot, box) }
        return id
    }

    /// Serves the objects at `prefix` and below: `handler` runs for each
    /// method call to one of them (any interface, Introspectable and
    /// Properties included; sd-bus answers org.freedesktop.DBus.Peer
    /// itself) and must answer it, at once or later from a retained copy.
    @discardableResult
    public func exportSubtree(_ prefix: String, handler: @escaping (DBusMessage) -> Void) throws(SystemError) -> UInt64 {
        guard let bus else { throw SystemError(call: "sd_bus_add_fallback", errno: ENOTCONN) }
        let id = nextSlot
        nextSlot &+= 1
        let box = HandlerBox(connection: self, id: id, once: false, handler: handler)
        var slot: OpaquePointer?
        let rc = sd_bus_add_fallback(bus, &slot, prefix, dbusTrampoline, Unmanaged.passUnretained(box).toOpaque())
        if rc < 0 { throw SystemError(call: "sd_bus_add_fallback", errno: -rc, path: prefix) }
        if let slot { slots[id] = (slot, box) }
        return id
    }

    /// Drops a pending call or a match: its closure never runs.
    public func cancel(_ id: UInt64) {
        if let entry = slots.removeValue(forKey: id) { sd_bus_slot_unref(entry.slot) }
    }

    /// This end's unique name (":1.42") once the Hello was answered.
    public var uniqueName: String? {
        guard let bus else { return nil }
        var name: UnsafePointer<CChar>?
        guard sd_bus_get_unique_name(bus, &name) >= 0, let name else { return nil }
        return String(cString: name)
    }

    /// Test support: a method call message with these arguments, sealed so
    /// it can be read as if it had been received.
    public func makeMessage(signalPath path: String, interface: String, member: String,
                            arguments: [DBusArgument]) throws(SystemError) -> DBusOwnedMessage {
        guard let bus else { throw SystemError(call: "sd_bus_message_new_signal", errno: ENOTCONN) }
        var message: OpaquePointer?
        var rc = sd_bus_message_new_signal(bus, &message, path, interface, member)
        if rc < 0 { throw SystemError(call: "sd_bus_message_new_signal", errno: -rc) }
        for argument in arguments {
            rc = argument.append(to: message)
            if rc < 0 {
                sd_bus_message_unref(message)
                throw SystemError(call: "sd_bus_message_append", errno: -rc)
            }
        }
        rc = sd_bus_message_seal(message, 1, 0)
        if rc < 0 {
            sd_bus_message_unref(message)
            throw SystemError(call: "sd_bus_message_seal", errno: -rc)
        }
        return DBusOwnedMessage(message!)
    }

    fileprivate func finished(_ id: UInt64) {
        if let entry = slots.removeValue(forKey: id) { sd_bus_slot_unref(entry.slot) }
    }
}

/// The closure of one call or match, reached from C through userdata.
final class HandlerBox {
    weak var connection: DBusConnection?
    let id: UInt64
    let once: Bool
    let handler: (DBusMessage) -> Void

    init(connection: DBusConnection, id: UInt64, once: Bool, handler: @escaping (DBusMessage) -> Void) {
        self.connection = connection
        self.id = id
        self.once = once
        self.handler = handler
    }
}

/// sd-bus's callback: hands the message to the box's closure. The box is
/// kept alive across the call (the closure may close the connection).
private let dbusTrampoline: sd_bus_message_handler_t = { message, userdata, _ in
    guard let message, let userdata else { return 0 }
    let box = Unmanaged<HandlerBox>.fromOpaque(userdata).takeUnretainedValue()
    withExtendedLifetime(box) {
        if box.once { box.connection?.finished(box.id) }
        box.handler(DBusMessage(message))
    }
    return 1
}
