// The payload of the hottest event, policy-checked, written into memory the
// caller provides (the daemon's stack) rather than appended field by field to
// a ByteWriter's array: every can-evaluate records one, and each array append
// checks uniqueness and capacity. This is the kind's one layout: EventCodec
// writes a policy-checked event through it too.

public enum PolicyCheckedPayload {
    /// The payload's exact size for `check` (version byte included).
    public static func size(_ check: borrowing PolicyCheck) -> Int {
        let reason = check.reason.map { 1 + RawWriter.varintSize(UInt64($0.utf8.count)) + $0.utf8.count } ?? 1
        let result = check.result.map { 1 + RawWriter.varintSize(zigZag($0.rawValue)) } ?? 1
        return 1 + RawWriter.varintSize(UInt64(check.uid)) + 16 + RawWriter.varintSize(zigZag(check.policy.rawValue))
            + RawWriter.varintSize(zigZag(check.biometry.rawValue)) + result + reason
    }

    /// Writes the payload into `buffer`, which holds at least `size(check)` bytes.
    public static func write(_ check: borrowing PolicyCheck, into buffer: UnsafeMutableRawBufferPointer) {
        var w = RawWriter(buffer)
        w.u8(Event.version)
        writeFields(uid: check.uid, ctx: check.ctx, policy: check.policy, biometry: check.biometry,
                    result: check.result, reason: check.reason, into: &w)
    }

    /// The fields after the version byte, as EventCodec lays them out.
    static func writeFields(uid: UserID, ctx: ContextID, policy: Policy, biometry: BiometryType, result: LAErrorCode?,
                            reason: String?, into w: inout RawWriter) {
        w.varint(UInt64(uid))
        w.context(ctx)
        w.varint(zigZag(policy.rawValue))
        w.varint(zigZag(biometry.rawValue))
        if let result {
            w.u8(1)
            w.varint(zigZag(result.rawValue))
        } else {
            w.u8(0)
        }
        if let reason {
            w.u8(1)
            w.string(reason)
        } else {
            w.u8(0)
        }
    }

    /// Room kind 33 (`policy-checked-repeatedly`) needs after a check's
    /// payload: its two varints, the count and the span.
    public static let repetitionRoom = 20

    /// Turns the policy-checked payload of `size` bytes at the start of
    /// `buffer` into the payload of `count` such checks spanning `span`
    /// microseconds (kind 33: the same layout byte and fields, then the two
    /// varints) and returns its size. `buffer` holds `size + repetitionRoom`.
    public static func writeRepetition(count: UInt32, span: Int64, after size: Int,
                                       in buffer: UnsafeMutableRawBufferPointer) -> Int {
        precondition(count >= RepeatedChecks.minimumCount && span >= 0 && buffer.count >= size + repetitionRoom)
        var w = RawWriter(UnsafeMutableRawBufferPointer(rebasing: buffer[size...]))
        w.varint(UInt64(count))
        w.varint(UInt64(span))
        return size + w.count
    }

    /// ByteWriter.int's encoding of an Int (ZigZag, then varint).
    static func zigZag(_ value: Int) -> UInt64 {
        let value = Int64(value)
        return UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }
}

/// ByteWriter's primitives over memory of a known size (no array, no checks
/// beyond the caller's promise of room).
struct RawWriter {
    private let base: UnsafeMutableRawPointer
    private let end: Int
    private(set) var count = 0

    init(_ buffer: UnsafeMutableRawBufferPointer) {
        base = buffer.baseAddress!
        end = buffer.count
    }

    static func varintSize(_ value: UInt64) -> Int {
        var size = 1, v = value
        while v >= 0x80 {
            size += 1
            v >>= 7
        }
        return size
    }

    mutating func u8(_ value: UInt8) {
        precondition(count < end, "RawWriter: no room")
        base.storeBytes(of: value, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            u8(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        u8(UInt8(v))
    }

    mutating func context(_ ctx: ContextID) {
        precondition(count + 16 <= end, "RawWriter: no room")
        base.storeBytes(of: ctx.high.bigEndian, toByteOffset: count, as: UInt64.self)
        base.storeBytes(of: ctx.low.bigEndian, toByteOffset: count + 8, as: UInt64.self)
        count += 16
    }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            precondition(count + utf8.count <= end, "RawWriter: no room")
            if let source = utf8.baseAddress { (base + count).copyMemory(from: source, byteCount: utf8.count) }
            count += utf8.count
        }
    }
}
