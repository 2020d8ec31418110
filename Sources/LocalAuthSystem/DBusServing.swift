// The server half of DBusConnection: answering method calls (at once, or
// later from a retained copy of the call), errors by name, and signals sent
// to one peer (a destination set: unicast, no other client sees them).
// Like the client half, nothing here waits: sd_bus_send queues the message
// and the loop writes it when the socket takes it (`wantsWritable`).
import CSystemd
import Glibc

extension DBusConnection {
    /// Answers `call` with these values. False when the message could not
    /// be built or queued (the connection is gone or out of memory); a
    /// call that asked for no reply is not answered (sd-bus drops it).
    @discardableResult
    public func reply(to call: DBusMessage, _ arguments: [DBusArgument] = []) -> Bool {
        guard bus != nil else { return false }
        var message: OpaquePointer?
        guard sd_bus_message_new_method_return(call.raw, &message) >= 0 else { return false }
        defer { sd_bus_message_unref(message) }
        for argument in arguments where argument.append(to: message) < 0 { return false }
        return sd_bus_send(nil, message, nil) >= 0
    }

    /// Answers `call` with one "ay" read from `secret`, a buffer the caller
    /// wipes afterwards (no Swift array holds a copy).
    @discardableResult
    public func reply(to call: DBusMessage, secret: UnsafeRawBufferPointer) -> Bool {
        guard bus != nil else { return false }
        var message: OpaquePointer?
        guard sd_bus_message_new_method_return(call.raw, &message) >= 0 else { return false }
        defer { sd_bus_message_unref(message) }
        guard DBusArgument.appendBytes(secret, to: message) >= 0 else { return false }
        return sd_bus_send(nil, message, nil) >= 0
    }

    /// Answers `call` with the error `name` ("org.freedesktop.DBus.Error.InvalidArgs", ...).
    @discardableResult
    public func replyError(to call: DBusMessage, name: String, message: String) -> Bool {
        guard bus != nil else { return false }
        return name.withCString { namePointer in
            message.withCString { messagePointer in
                var error = sd_bus_error(name: namePointer, message: messagePointer, _need_free: 0)
                return sd_bus_reply_method_error(call.raw, &error) >= 0
            }
        }
    }

    /// Sends a signal to `destination` only (a unique name).
    @discardableResult
    public func emitSignal(to destination: String, path: String, interface: String, member: String,
                           _ arguments: [DBusArgument]) -> Bool {
        guard let bus else { return false }
        var message: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &message, path, interface, member) >= 0 else { return false }
        defer { sd_bus_message_unref(message) }
        guard sd_bus_message_set_destination(message, destination) >= 0 else { return false }
        for argument in arguments where argument.append(to: message) < 0 { return false }
        return sd_bus_send(bus, message, nil) >= 0
    }
}
