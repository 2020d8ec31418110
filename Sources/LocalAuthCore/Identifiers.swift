// Identifiers of the things the rules talk about. A context id is 128 random
// bits chosen by the daemon (the core stays deterministic: ids come in with
// the command that creates the context).

public typealias UserID = UInt32

/// A uid as the protocol writes it: canonical decimal only ("0", or no
/// leading zero), no sign, at most 4294967294 ((uid_t)-1 is no user). One
/// spelling per uid, so a log line and a request name a user one way.
public func parseUserID(_ text: some StringProtocol) -> UserID? {
    let digits = text.utf8
    guard let first = digits.first, digits.count <= 10, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
    guard first != 0x30 || digits.count == 1 else { return nil }
    guard let value = UInt64(text), value < UInt64(UInt32.max) else { return nil }
    return UserID(value)
}
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
    /// differently. docs/ARCHITECTURE.md, "Hash tables keyed by context ids".
    public func _rawHashValue(seed: Int) -> Int {
        seededMix(high ^ low, seed: seed)
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
        guard utf8.count == 32, let base = utf8.baseAddress else { return nil }
        // Eight digits at a time (every request names its context).
        let raw = UnsafeRawPointer(base)
        guard let a = HexWord.value(raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
              let b = HexWord.value(raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
              let c = HexWord.value(raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
              let d = HexWord.value(raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        else { return nil }
        return ContextID(high: a << 32 | b, low: c << 32 | d)
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

/// Eight ASCII hex digits (either case) in one 64-bit word, loaded
/// little-endian (the first digit in the low byte), read without a branch
/// per digit. A byte b < 0x80 is >= lo when b + (0x80 - lo) has its high
/// bit set, and > hi when b + (0x7F - hi) has; no sum carries into the next
/// byte. Digits are checked on the bytes as they are, letters after OR 0x20
/// (which maps only A-F onto a-f).
enum HexWord {
    static let ones: UInt64 = 0x0101_0101_0101_0101
    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The 32-bit value of the eight digits, or nil if one is not a hex digit.
    @inline(__always)
    static func value(_ word: UInt64) -> UInt64? {
        guard word & highBits == 0 else { return nil }
        let lower = word | 0x2020_2020_2020_2020
        let digit = inRange(word, 0x30, 0x39), letter = inRange(lower, 0x61, 0x66)
        guard digit | letter == highBits else { return nil }
        // Each byte's value: its low nibble, plus 9 for a letter (a = 1 + 9).
        let x = (word & 0x0F0F_0F0F_0F0F_0F0F) &+ (letter >> 7) &* 9
        // Pack, the first digit most significant: nibble pairs into bytes,
        // byte pairs into 16-bit halves, halves into the result.
        let bytes = (x & 0x000F_000F_000F_000F) << 4 | (x >> 8) & 0x000F_000F_000F_000F
        let halves = (bytes & 0x0000_00FF_0000_00FF) << 8 | (bytes >> 16) & 0x0000_00FF_0000_00FF
        return (halves & 0xFFFF) << 16 | (halves >> 32) & 0xFFFF
    }

    /// 0x80 in each byte (all < 0x80) that lies in lo...hi, else 0.
    @inline(__always)
    static func inRange(_ word: UInt64, _ lo: UInt64, _ hi: UInt64) -> UInt64 {
        (word &+ (0x80 - lo) &* ones) & ~(word &+ (0x7F - hi) &* ones) & highBits
    }
}

/// A hash table key's bits mixed with the table's seed: MurmurHash3's 64-bit
/// finalizer, for keys that need no SipHash (ContextID, UserKey).
@inline(__always)
func seededMix(_ bits: UInt64, seed: Int) -> Int {
    var x = bits ^ UInt64(truncatingIfNeeded: seed)
    x = (x ^ (x >> 33)) &* 0xff51_afd7_ed55_8ccd
    x = (x ^ (x >> 33)) &* 0xc4ce_b9fe_1a85_ec53
    return Int(truncatingIfNeeded: x ^ (x >> 33))
}
