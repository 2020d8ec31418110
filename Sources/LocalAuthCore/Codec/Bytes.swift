// Little-endian, varint-based primitives for the binary event and snapshot
// layouts (FORMAT.md in LocalAuthLog). Pure: bytes in, values out; every
// read is bounds-checked, so hostile input yields `DecodeError`, never a trap.

public struct DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

public struct ByteWriter: Sendable {
    public var bytes: [UInt8]

    /// `capacity` 0 allocates nothing (`reserveCapacity(0)` would).
    public init(capacity: Int = 64) {
        bytes = []
        if capacity > 0 { bytes.reserveCapacity(capacity) }
    }

    public mutating func u8(_ value: UInt8) { bytes.append(value) }
    public mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    public mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// ZigZag, so small negative numbers stay short.
    public mutating func svarint(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    public mutating func int(_ value: Int) { svarint(Int64(value)) }

    public mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    public mutating func context(_ ctx: ContextID) {
        // 16 bytes big-endian in one append (every context event has one).
        var bigEndian = (ctx.high.bigEndian, ctx.low.bigEndian)
        withUnsafeBytes(of: &bigEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func optional<T>(_ value: T?, _ write: (inout ByteWriter, T) -> Void) {
        if let value {
            u8(1)
            write(&self, value)
        } else {
            u8(0)
        }
    }
}

public struct ByteReader {
    public let buffer: UnsafeRawBufferPointer
    public private(set) var offset: Int = 0

    public init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    public var isAtEnd: Bool { offset == buffer.count }

    public mutating func u8() throws -> UInt8 {
        guard offset < buffer.count else { throw DecodeError("truncated at byte \(offset)") }
        defer { offset += 1 }
        return buffer[offset]
    }

    public mutating func bool() throws -> Bool {
        switch try u8() {
        case 0: return false
        case 1: return true
        default: throw DecodeError("bad boolean at byte \(offset - 1)")
        }
    }

    public mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try u8()
            guard shift < 64, !(shift == 63 && byte > 1) else { throw DecodeError("varint overflow at byte \(offset)") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    public mutating func svarint() throws -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    public mutating func int(in range: ClosedRange<Int> = Int(Int32.min)...Int(Int32.max)) throws -> Int {
        let value = try svarint()
        guard value >= Int64(range.lowerBound), value <= Int64(range.upperBound) else {
            throw DecodeError("integer \(value) out of range at byte \(offset)")
        }
        return Int(value)
    }

    public mutating func u32() throws -> UInt32 {
        let value = try varint()
        guard value <= UInt64(UInt32.max) else { throw DecodeError("value \(value) exceeds 32 bits") }
        return UInt32(value)
    }

    public mutating func i32() throws -> Int32 {
        Int32(try int())
    }

    public mutating func string(maxLength: Int = 1 << 16) throws -> String {
        let length = try varint()
        guard length <= UInt64(maxLength), Int(length) <= buffer.count - offset else {
            throw DecodeError("string of \(length) bytes overruns the record at byte \(offset)")
        }
        let slice = UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + Int(length)])
        offset += Int(length)
        guard let string = String(validating: slice, as: UTF8.self) else {
            throw DecodeError("invalid UTF-8 at byte \(offset - Int(length))")
        }
        return string
    }

    public mutating func context() throws -> ContextID {
        guard buffer.count - offset >= 16 else { throw DecodeError("truncated context id at byte \(offset)") }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for i in 0..<8 { high = high << 8 | UInt64(buffer[offset + i]) }
        for i in 8..<16 { low = low << 8 | UInt64(buffer[offset + i]) }
        offset += 16
        return ContextID(high: high, low: low)
    }

    public mutating func optional<T>(_ read: (inout ByteReader) throws -> T) throws -> T? {
        try bool() ? read(&self) : nil
    }

    public func expectEnd() throws {
        guard isAtEnd else { throw DecodeError("\(buffer.count - offset) trailing bytes") }
    }
}

extension ByteReader {
    /// A domain state, written as a string: more than DomainState.capacity
    /// bytes is corrupt (the daemon makes 32).
    public mutating func domainState() throws -> DomainState {
        let text = try string()
        guard let state = DomainState(text) else { throw DecodeError("domain state of \(text.utf8.count) bytes") }
        return state
    }
}
