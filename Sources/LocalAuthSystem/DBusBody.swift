// A method call's arguments, read in order from a message that arrived from
// anyone on the bus: the caller checks the body's whole signature first
// (`DBusMessage.signature`), then takes each value with a bound on its size.
// A value of another type, one too long, or a malformed container reads as
// nil, never a trap. Byte arrays are lent in place, so that a secret can be
// copied out and the message's own copy wiped (S-50).
import CSystemd
import Glibc

extension DBusMessage {
    /// The body's signature ("" for none).
    public var signature: String { DBusMessage.bounded(sd_bus_message_get_signature(raw, 1)) ?? "" }
    public var interface: String? { DBusMessage.bounded(sd_bus_message_get_interface(raw)) }
    public var isMethodCall: Bool {
        var type: UInt8 = 0
        return sd_bus_message_get_type(raw, &type) >= 0 && Int(type) == Int(SD_BUS_MESSAGE_METHOD_CALL)
    }

    /// Keeps the message beyond its callback (a call answered later).
    public func retained() -> DBusOwnedMessage {
        DBusOwnedMessage(sd_bus_message_ref(raw)!)
    }

    /// A cursor at the body's first value.
    public func body() -> DBusBody {
        _ = sd_bus_message_rewind(raw, 1)
        return DBusBody(raw: raw)
    }
}

/// One entry of an "a{sv}" argument: the value when it is a string, a
/// boolean or a uint32, nil for any other type (the caller refuses it).
public struct DBusOption: Sendable, Equatable {
    public var key: String
    public var value: DBusValue?
}

public struct DBusBody {
    let raw: OpaquePointer

    public mutating func string(maximumBytes: Int) -> String? {
        var pointer: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(raw, CChar(UInt8(ascii: "s")), &pointer) > 0 else { return nil }
        return DBusMessage.bounded(pointer, maximumBytes: maximumBytes)
    }

    public mutating func uint32() -> UInt32? {
        var value: UInt32 = 0
        guard sd_bus_message_read_basic(raw, CChar(UInt8(ascii: "u")), &value) > 0 else { return nil }
        return value
    }

    public mutating func boolean() -> Bool? {
        var value: Int32 = 0
        guard sd_bus_message_read_basic(raw, CChar(UInt8(ascii: "b")), &value) > 0 else { return nil }
        return value != 0
    }

    /// An "ay" of at most `maximumCount` bytes, lent to `body` in the
    /// message's own memory (which `body` may wipe); nil when longer or not one.
    public mutating func bytes<R>(maximumCount: Int, _ body: (UnsafeMutableRawBufferPointer) -> R) -> R? {
        var pointer: UnsafeRawPointer?
        var size = 0
        guard sd_bus_message_read_array(raw, CChar(UInt8(ascii: "y")), &pointer, &size) >= 0, size <= maximumCount else {
            return nil
        }
        guard size > 0, let pointer else { return body(UnsafeMutableRawBufferPointer(start: nil, count: 0)) }
        return body(UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(mutating: pointer), count: size))
    }

    /// A variant holding a string, a boolean or a uint32; nil for any other.
    public mutating func variant(maximumBytes: Int) -> DBusValue? {
        guard let basic = peekVariant(),
              sd_bus_message_enter_container(raw, CChar(UInt8(ascii: "v")), String(basic.code)) > 0 else { return nil }
        defer { _ = sd_bus_message_exit_container(raw) }
        return read(basic, maximumBytes: maximumBytes)
    }

    /// The type inside the variant at the cursor when `variant` reads it.
    private func peekVariant() -> DBusBasicType? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        guard sd_bus_message_peek_type(raw, &type, &contents) > 0, type == CChar(UInt8(ascii: "v")), let contents,
              let signature = DBusMessage.bounded(contents), let basic = DBusBasicType(signature: signature),
              basic != .objectPath else { return nil }
        return basic
    }

    /// An "a{sv}" of at most `limit` entries, keys of at most 64 bytes;
    /// nil when larger or malformed.
    public mutating func options(limit: Int, maximumBytes: Int) -> [DBusOption]? {
        guard sd_bus_message_enter_container(raw, CChar(UInt8(ascii: "a")), "{sv}") > 0 else { return nil }
        var options: [DBusOption] = []
        while true {
            let entered = sd_bus_message_enter_container(raw, CChar(UInt8(ascii: "e")), "sv")
            if entered == 0 { break }
            guard entered > 0, options.count < limit, let key = string(maximumBytes: 64) else { return nil }
            let value: DBusValue?
            if peekVariant() != nil {
                guard let read = variant(maximumBytes: maximumBytes) else { return nil }
                value = read
            } else {
                // Another type: skipped, and reported as nil (refused by the caller).
                guard sd_bus_message_skip(raw, "v") >= 0 else { return nil }
                value = nil
            }
            guard sd_bus_message_exit_container(raw) >= 0 else { return nil }
            options.append(DBusOption(key: key, value: value))
        }
        guard sd_bus_message_exit_container(raw) >= 0 else { return nil }
        return options
    }

    private mutating func read(_ type: DBusBasicType, maximumBytes: Int) -> DBusValue? {
        switch type {
        case .string, .objectPath:
            var pointer: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(raw, CChar(UInt8(ascii: type.code)), &pointer) > 0 else { return nil }
            return DBusMessage.bounded(pointer, maximumBytes: maximumBytes).map { .string($0) }
        case .boolean: return boolean().map { .boolean($0) }
        case .uint32: return uint32().map { .uint32($0) }
        }
    }
}
