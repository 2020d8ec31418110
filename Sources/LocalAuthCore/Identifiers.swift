// Identifiers of the things the rules talk about. A context id is 128 random
// bits chosen by the daemon (the core stays deterministic: ids come in with
// the command that creates the context).

public typealias UserID = UInt32
public typealias ProcessID = Int32
/// An evaluation's number within its context, from 1.
public typealias EvaluationID = UInt32

public struct ContextID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// One word into the (seeded) hasher, not two: both halves are random.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(high ^ low)
    }

    /// What Set and Dictionary use: a mix of the id's bits with the table's
    /// seed, without SipHash. SipHash guards tables against keys chosen to
    /// collide; these keys are 128 random bits the daemon draws itself
    /// (clients only name ids the daemon handed out, and lookups of other
    /// ids probe no further than the random ones stored), and every request
    /// looks its context up three times. The mix (MurmurHash3's finalizer)
    /// keeps the per-table seed's point: two tables order the same ids
    /// differently. docs/ARCHITECTURE.md, "Context ids in hash tables".
    public func _rawHashValue(seed: Int) -> Int {
        var x = high ^ low ^ UInt64(truncatingIfNeeded: seed)
        x = (x ^ (x >> 33)) &* 0xff51_afd7_ed55_8ccd
        x = (x ^ (x >> 33)) &* 0xc4ce_b9fe_1a85_ec53
        return Int(truncatingIfNeeded: x ^ (x >> 33))
    }

    /// Exactly 32 hex digits (either case); anything else is not an id.
    public init?(hex: some StringProtocol) {
        // Every request names its context: parse the UTF-8 in place rather
        // than copying it into an Array first.
        let parsed = hex.utf8.withContiguousStorageIfAvailable(ContextID.parseHex)
            ?? Array(hex.utf8).withUnsafeBufferPointer(ContextID.parseHex)
        guard let parsed else { return nil }
        self = parsed
    }

    /// 32 hex digits as UTF-8 bytes (a request's `ctx=` read in place).
    public init?(hex utf8: UnsafeBufferPointer<UInt8>) {
        guard let parsed = ContextID.parseHex(utf8) else { return nil }
        self = parsed
    }

    private static func parseHex(_ utf8: UnsafeBufferPointer<UInt8>) -> ContextID? {
        guard utf8.count == 32 else { return nil }
        // Branch-free per digit (every request names its context): the
        // table gives 0...15, or 0xFF for a byte that is not a hex digit,
        // and the OR of all of them says whether one was not.
        return hexDigitValues.withUnsafeBufferPointer { table in
            var high: UInt64 = 0
            var low: UInt64 = 0
            var seen: UInt8 = 0
            for index in 0..<16 {
                let h = table[Int(utf8[index])], l = table[Int(utf8[16 + index])]
                seen |= h | l
                high = high << 4 | UInt64(h & 0xF)
                low = low << 4 | UInt64(l & 0xF)
            }
            return seen & 0xF0 == 0 ? ContextID(high: high, low: low) : nil
        }
    }

    /// 16 bytes, big-endian, as the log stores it.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low)
    }

    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64($0))) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64($0))) }
    }

    public var hex: String {
        var digits = [UInt8](repeating: 0, count: 32)
        let alphabet = Array("0123456789abcdef".utf8)
        for index in 0..<16 {
            digits[15 - index] = alphabet[Int((high >> (4 * UInt64(index))) & 0xF)]
            digits[31 - index] = alphabet[Int((low >> (4 * UInt64(index))) & 0xF)]
        }
        return String(decoding: digits, as: UTF8.self)
    }

    public var description: String { hex }

    public static func < (lhs: ContextID, rhs: ContextID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}

/// Each byte's value as a hex digit (either case), 0xFF if it is not one.
private let hexDigitValues: [UInt8] = (0...255).map { byte in
    switch UInt8(byte) {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt8(byte) - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt8(byte) - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt8(byte) - UInt8(ascii: "A") + 10
    default: return 0xFF
    }
}
