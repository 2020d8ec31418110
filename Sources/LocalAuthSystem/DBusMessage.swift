// D-Bus messages as sd-bus hands them over, read defensively: every value is
// read only after its signature was checked, strings are copied out with a
// length bound, and anything unexpected reads as nil (a hostile or buggy
// peer cannot make the daemon trap). Arguments to append are a small enum,
// because sd_bus_message_append is variadic and does not import.
import CSystemd
import Glibc

/// A message borrowed for the duration of a callback.
public struct DBusMessage {
    let raw: OpaquePointer
    /// Keeps a message this process made alive while it is read.
    private let owner: DBusOwnedMessage?

    init(_ raw: OpaquePointer, owner: DBusOwnedMessage? = nil) {
        self.raw = raw
        self.owner = owner
    }

    /// The D-Bus error name and text when this is an error reply.
    public var error: (name: String, message: String)? {
        guard sd_bus_message_is_method_error(raw, nil) > 0 else { return nil }
        guard let error = sd_bus_message_get_error(raw) else { return ("org.freedesktop.DBus.Error.Failed", "") }
        return (DBusMessage.bounded(error.pointee.name) ?? "org.freedesktop.DBus.Error.Failed",
                DBusMessage.bounded(error.pointee.message) ?? "")
    }

    public var member: String? { DBusMessage.bounded(sd_bus_message_get_member(raw)) }
    public var path: String? { DBusMessage.bounded(sd_bus_message_get_path(raw)) }
    public var sender: String? { DBusMessage.bounded(sd_bus_message_get_sender(raw)) }

    /// Whether the body's signature is exactly `signature` (e.g. "sb").
    public func hasSignature(_ signature: String) -> Bool {
        sd_bus_message_has_signature(raw, signature) > 0
    }

    /// Reads the body as these basic values, in order, after checking that
    /// the signature is exactly theirs; nil otherwise.
    public func read(_ types: [DBusBasicType]) -> [DBusValue]? {
        guard hasSignature(String(String.UnicodeScalarView(types.map(\.code)))) else { return nil }
        guard sd_bus_message_rewind(raw, 1) >= 0 else { return nil }
        var values: [DBusValue] = []
        for type in types {
            guard let value = readBasic(type) else { return nil }
            values.append(value)
        }
        return values
    }

    /// The first value of a body of exactly `signature` when it is an
    /// object path (e.g. "oas", InterfacesRemoved); nil otherwise.
    public func leadingObjectPath(signature: String) -> String? {
        guard signature.hasPrefix("o"), hasSignature(signature), sd_bus_message_rewind(raw, 1) >= 0 else { return nil }
        return readBasic(.objectPath)?.string
    }

    /// Reads a body of one array of strings ("as"), at most `limit` of them.
    public func readStringArray(limit: Int = 64) -> [String]? { readArray("s", limit: limit) }

    /// Reads a body of one array of object paths ("ao"), at most `limit` of them.
    public func readObjectPaths(limit: Int = 64) -> [String]? { readArray("o", limit: limit) }

    private func readArray(_ element: Unicode.Scalar, limit: Int) -> [String]? {
        guard hasSignature("a" + String(element)), sd_bus_message_rewind(raw, 1) >= 0,
              sd_bus_message_enter_container(raw, CChar(UInt8(ascii: "a")), String(element)) > 0 else { return nil }
        var strings: [String] = []
        while strings.count <= limit {
            var pointer: UnsafePointer<CChar>?
            let rc = sd_bus_message_read_basic(raw, CChar(UInt8(ascii: element)), &pointer)
            if rc < 0 { return nil }
            if rc == 0 { break }
            guard let string = DBusMessage.bounded(pointer) else { return nil }
            strings.append(string)
        }
        return strings.count <= limit ? strings : nil
    }

    /// Reads a body of one variant holding a basic value of `type` (a
    /// Properties.Get reply); nil for any other shape.
    public func readVariant(_ type: DBusBasicType) -> DBusValue? {
        guard hasSignature("v"), sd_bus_message_rewind(raw, 1) >= 0,
              sd_bus_message_enter_container(raw, CChar(UInt8(ascii: "v")), String(type.code)) > 0 else { return nil }
        return readBasic(type)
    }

    /// Reads a body of one property dictionary ("a{sv}", a Properties.GetAll
    /// reply): the entries whose value is a basic type of `DBusBasicType`,
    /// or a struct that starts with one (logind's `User` "(uo)": its first
    /// member); every other entry is skipped. At most `limit` entries; nil
    /// for any other shape.
    public func readProperties(limit: Int = 128) -> [String: DBusValue]? {
        guard hasSignature("a{sv}"), sd_bus_message_rewind(raw, 1) >= 0,
              sd_bus_message_enter_container(raw, CChar(UInt8(ascii: "a")), "{sv}") > 0 else { return nil }
        var properties: [String: DBusValue] = [:]
        for _ in 0...limit {
            let entered = sd_bus_message_enter_container(raw, CChar(UInt8(ascii: "e")), "sv")
            if entered == 0 { return properties }
            guard entered > 0, let key = readBasic(.string)?.string else { return nil }
            var type: CChar = 0
            var contents: UnsafePointer<CChar>?
            guard sd_bus_message_peek_type(raw, &type, &contents) > 0, let contents,
                  let signature = DBusMessage.bounded(contents) else { return nil }
            if let value = readVariantValue(signature) {
                properties[key] = value
            } else if sd_bus_message_skip(raw, "v") < 0 {
                return nil
            }
            guard sd_bus_message_exit_container(raw) >= 0 else { return nil }
        }
        return nil
    }

    /// The value of the variant at the read position when its signature is
    /// a basic type we read, or a struct whose first member is one (the
    /// rest of the struct is skipped); nil (nothing read) otherwise.
    private func readVariantValue(_ signature: String) -> DBusValue? {
        if let type = DBusBasicType(signature: signature) {
            guard sd_bus_message_enter_container(raw, CChar(UInt8(ascii: "v")), signature) > 0 else { return nil }
            let value = readBasic(type)
            _ = sd_bus_message_exit_container(raw)
            return value
        }
        guard signature.count >= 3, signature.first == "(", signature.last == ")",
              let first = signature.dropFirst().first, let type = DBusBasicType(signature: String(first)) else { return nil }
        let inner = String(signature.dropFirst().dropLast())
        guard sd_bus_message_enter_container(raw, CChar(UInt8(ascii: "v")), signature) > 0 else { return nil }
        defer { _ = sd_bus_message_exit_container(raw) }
        guard sd_bus_message_enter_container(raw, CChar(UInt8(ascii: "r")), inner) > 0 else { return nil }
        let value = readBasic(type)
        // The struct's other members are not read: exiting skips them.
        _ = sd_bus_message_skip(raw, String(inner.dropFirst()))
        _ = sd_bus_message_exit_container(raw)
        return value
    }

    private func readBasic(_ type: DBusBasicType) -> DBusValue? {
        let code = CChar(UInt8(ascii: type.code))
        switch type {
        case .string, .objectPath:
            var pointer: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(raw, code, &pointer) > 0, let string = DBusMessage.bounded(pointer) else { return nil }
            return .string(string)
        case .boolean:
            var value: Int32 = 0
            guard sd_bus_message_read_basic(raw, code, &value) > 0 else { return nil }
            return .boolean(value != 0)
        case .uint32:
            var value: UInt32 = 0
            guard sd_bus_message_read_basic(raw, code, &value) > 0 else { return nil }
            return .uint32(value)
        }
    }

    /// A C string copied out if shorter than `maximumBytes` (D-Bus allows
    /// far longer; nothing the daemon reads needs them) and valid UTF-8.
    static func bounded(_ pointer: UnsafePointer<CChar>?, maximumBytes: Int = 4096) -> String? {
        guard let pointer else { return nil }
        let length = strnlen(pointer, maximumBytes)
        guard length < maximumBytes else { return nil }
        let bytes = UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self)
        return String(validating: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self)
    }
}

/// A message this process made and owns (tests feed it to the parsers).
public final class DBusOwnedMessage {
    let raw: OpaquePointer
    init(_ raw: OpaquePointer) { self.raw = raw }
    deinit { sd_bus_message_unref(raw) }
    public var message: DBusMessage { DBusMessage(raw, owner: self) }
}

public enum DBusBasicType: Sendable {
    case string, objectPath, boolean, uint32

    init?(signature: String) {
        switch signature {
        case "s": self = .string
        case "o": self = .objectPath
        case "b": self = .boolean
        case "u": self = .uint32
        default: return nil
        }
    }

    var code: Unicode.Scalar {
        switch self {
        case .string: return "s"
        case .objectPath: return "o"
        case .boolean: return "b"
        case .uint32: return "u"
        }
    }
}

public enum DBusValue: Sendable, Equatable {
    case string(String)
    case boolean(Bool)
    case uint32(UInt32)

    public var string: String? { if case .string(let s) = self { return s } else { return nil } }
    public var boolean: Bool? { if case .boolean(let b) = self { return b } else { return nil } }
    public var uint32: UInt32? { if case .uint32(let u) = self { return u } else { return nil } }
}
