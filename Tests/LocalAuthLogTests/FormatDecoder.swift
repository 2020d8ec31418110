// A decoder of event payloads written from FORMAT.md's "Field encodings"
// table alone (LEB128, ZigZag, length-prefixed UTF-8, big-endian context
// ids), on purpose not sharing a line with LocalAuthCore's ByteReader: it
// reads whatever field list the page gives, so the page is what is tested.

import Foundation

/// A value as the page's encodings yield it.
indirect enum DocumentedValue: Equatable, Sendable, CustomStringConvertible {
    case unsigned(UInt64)
    case signed(Int64)
    case bool(Bool)
    case text(String)
    /// 32 lower-case hex digits.
    case context(String)
    /// An `opt` that was absent.
    case absent
    case list([DocumentedValue])
    case group([NamedValue])

    var description: String {
        switch self {
        case .unsigned(let v): return "\(v)"
        case .signed(let v): return "\(v)s"
        case .bool(let v): return "\(v)"
        case .text(let v): return "\"\(v)\""
        case .context(let v): return "ctx:\(v)"
        case .absent: return "absent"
        case .list(let values): return "\(values)"
        case .group(let fields): return "\(fields)"
        }
    }
}

struct NamedValue: Equatable, Sendable, CustomStringConvertible {
    var name: String
    var value: DocumentedValue
    init(_ name: String, _ value: DocumentedValue) {
        self.name = name
        self.value = value
    }
    var description: String { "\(name)=\(value)" }
}

struct FormatDecoder {
    /// Every encoding (and prefix) this decoder knows; the page's table must name exactly these.
    static let encodings: Set<String> = ["byte", "bool", "varint", "varint32", "zigzag", "zigzag32", "string", "ctx16", "opt", "list", "rules"]

    private let bytes: [UInt8]
    private let rules: [DocumentedField]
    private(set) var offset = 0

    init(_ bytes: [UInt8], rules: [DocumentedField]) {
        self.bytes = bytes
        self.rules = rules
    }

    var isAtEnd: Bool { offset == bytes.count }
    var remaining: Int { bytes.count - offset }

    mutating func fields(_ fields: [DocumentedField]) throws -> [NamedValue] {
        try fields.map { NamedValue($0.name, try value($0.encoding.split(separator: " ").map(String.init)[...])) }
    }

    private mutating func value(_ encoding: ArraySlice<String>) throws -> DocumentedValue {
        guard let head = encoding.first else { throw FormatError("empty encoding") }
        let rest = encoding.dropFirst()
        switch head {
        case "byte": return .unsigned(try byte())
        case "bool":
            switch try byte() {
            case 0: return .bool(false)
            case 1: return .bool(true)
            case let other: throw FormatError("bool \(other)")
            }
        case "varint": return .unsigned(try varint())
        case "varint32":
            let v = try varint()
            guard v <= UInt64(UInt32.max) else { throw FormatError("varint32 \(v)") }
            return .unsigned(v)
        case "zigzag": return .signed(try zigzag())
        case "zigzag32":
            let v = try zigzag()
            guard v >= Int64(Int32.min), v <= Int64(Int32.max) else { throw FormatError("zigzag32 \(v)") }
            return .signed(v)
        case "string":
            let length = Int(try varint())
            guard length <= 65_536, length <= remaining else { throw FormatError("string of \(length) bytes") }
            defer { offset += length }
            guard let text = String(bytes: bytes[offset..<offset + length], encoding: .utf8) else { throw FormatError("not UTF-8") }
            return .text(text)
        case "ctx16":
            guard remaining >= 16 else { throw FormatError("ctx16 cut short") }
            defer { offset += 16 }
            return .context(bytes[offset..<offset + 16].map { String(format: "%02x", $0) }.joined())
        case "opt":
            switch try byte() {
            case 0: return .absent
            case 1: return try value(rest)
            case let other: throw FormatError("opt flag \(other)")
            }
        case "list":
            let count = try varint()
            guard count <= UInt64(remaining) else { throw FormatError("list of \(count)") }
            return .list(try (0..<count).map { _ in try value(rest) })
        case "rules":
            return .group(try fields(rules))
        default:
            throw FormatError("unknown encoding \(head)")
        }
    }

    mutating func byte() throws -> UInt64 {
        guard offset < bytes.count else { throw FormatError("cut short at \(offset)") }
        defer { offset += 1 }
        return UInt64(bytes[offset])
    }

    /// Unsigned LEB128, at most 10 bytes.
    private mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        for index in 0..<10 {
            let b = try byte()
            result |= (b & 0x7F) << (7 * UInt64(index))
            if b & 0x80 == 0 { return result }
        }
        throw FormatError("varint longer than 10 bytes")
    }

    /// (n << 1) ^ (n >> 63), undone.
    private mutating func zigzag() throws -> Int64 {
        let raw = try varint()
        return raw & 1 == 0 ? Int64(bitPattern: raw >> 1) : ~Int64(bitPattern: raw >> 1)
    }
}
