// The values the daemon writes into D-Bus messages (a call's arguments, a
// reply's, a signal's), as a small enum: sd_bus_message_append is variadic
// and does not import, so each case appends itself with the basic calls.
// Each value knows its signature, so a variant or a dictionary of them is
// written without the caller spelling types twice.
import CSystemd

public indirect enum DBusArgument: Sendable, Equatable {
    case string(String)
    case objectPath(String)
    case boolean(Bool)
    case uint32(UInt32)
    case int32(Int32)
    case int64(Int64)
    /// An array of strings ("as").
    case strings([String])
    /// An array of bytes ("ay"): domain states; never a secret (a secret is
    /// appended from its own buffer, `DBusConnection.reply(to:secret:)`).
    case bytes([UInt8])
    /// A variant holding one value ("v").
    case variant(DBusArgument)
    /// A property dictionary ("a{sv}"), in this order.
    case dictionary([DBusEntry])

    /// The value's D-Bus signature.
    public var signature: String {
        switch self {
        case .string: return "s"
        case .objectPath: return "o"
        case .boolean: return "b"
        case .uint32: return "u"
        case .int32: return "i"
        case .int64: return "x"
        case .strings: return "as"
        case .bytes: return "ay"
        case .variant: return "v"
        case .dictionary: return "a{sv}"
        }
    }

    func append(to message: OpaquePointer?) -> Int32 {
        switch self {
        case .string(let s):
            return s.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
        case .objectPath(let s):
            return s.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "o")), $0) }
        case .boolean(let b):
            var value: Int32 = b ? 1 : 0
            return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &value)
        case .uint32(let u):
            var value = u
            return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "u")), &value)
        case .int32(let i):
            var value = i
            return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "i")), &value)
        case .int64(let x):
            var value = x
            return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "x")), &value)
        case .strings(let strings):
            var rc = sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "s")
            if rc < 0 { return rc }
            for s in strings {
                rc = s.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
                if rc < 0 { return rc }
            }
            return sd_bus_message_close_container(message)
        case .bytes(let bytes):
            return bytes.withUnsafeBytes { DBusArgument.appendBytes($0, to: message) }
        case .variant(let inner):
            var rc = sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), inner.signature)
            if rc < 0 { return rc }
            rc = inner.append(to: message)
            if rc < 0 { return rc }
            return sd_bus_message_close_container(message)
        case .dictionary(let entries):
            var rc = sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "{sv}")
            if rc < 0 { return rc }
            for entry in entries {
                rc = sd_bus_message_open_container(message, CChar(UInt8(ascii: "e")), "sv")
                if rc < 0 { return rc }
                rc = DBusArgument.string(entry.key).append(to: message)
                if rc < 0 { return rc }
                rc = DBusArgument.variant(entry.value).append(to: message)
                if rc < 0 { return rc }
                rc = sd_bus_message_close_container(message)
                if rc < 0 { return rc }
            }
            return sd_bus_message_close_container(message)
        }
    }

    /// "ay" from a buffer (sd-bus copies it into the message).
    static func appendBytes(_ bytes: UnsafeRawBufferPointer, to message: OpaquePointer?) -> Int32 {
        // sd-bus wants a non-null pointer even for an empty array.
        var empty: UInt8 = 0
        return withUnsafePointer(to: &empty) { fallback in
            sd_bus_message_append_array(message, CChar(UInt8(ascii: "y")), bytes.baseAddress ?? UnsafeRawPointer(fallback),
                                        bytes.count)
        }
    }
}

/// One entry of an "a{sv}".
public struct DBusEntry: Sendable, Equatable {
    public var key: String
    public var value: DBusArgument

    public init(_ key: String, _ value: DBusArgument) {
        self.key = key
        self.value = value
    }
}
