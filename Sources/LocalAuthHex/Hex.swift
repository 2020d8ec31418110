// The one hex parser of the project: context ids (32 digits, on every
// request, so eight digits at a time), the log's chain heads, domain states,
// the secrets key and sealed rights (bytes, a digit pair each).
//
// A module of its own because its users share no other: LocalAuthCore and
// LocalAuthProtocol both depend on nothing (the rules and the line codec
// stay apart), and the log, server and client sit on top of one or both.
// Pure: no Glibc, no I/O, like the two layers it serves.

public enum Hex {
    /// Which letters a parse takes: both cases (ids, keys, heads) or only
    /// the lowercase the daemon itself writes (the right store's file).
    public enum Letters: Sendable {
        case eitherCase
        case lowercaseOnly
    }

    /// The value of one digit, or nil when `c` is not one.
    @inlinable @inline(__always)
    public static func nibble(_ c: UInt8, _ letters: Letters = .eitherCase) -> UInt8? {
        switch c {
        case 0x30...0x39: return c &- 0x30
        case 0x61...0x66: return c &- 0x57
        case 0x41...0x46: return letters == .eitherCase ? c &- 0x37 : nil
        default: return nil
        }
    }

    /// An even number of digits (none included) as bytes, the first digit
    /// of each pair the high nibble; nil for an odd count or a non-digit.
    public static func bytes(_ digits: some Collection<UInt8>, _ letters: Letters = .eitherCase) -> [UInt8]? {
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var high: UInt8?
        for c in digits {
            guard let value = nibble(c, letters) else { return nil }
            if let h = high {
                bytes.append(h << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return bytes
    }

    /// Exactly 32 digits (either case) as 128 bits, the first digit most
    /// significant; nil for any other length or a non-digit.
    @inlinable @inline(__always)
    public static func value128(_ digits: UnsafeRawBufferPointer) -> (high: UInt64, low: UInt64)? {
        guard digits.count == 32, let base = digits.baseAddress else { return nil }
        return value128(at: base)
    }

    /// The 32 digits (either case) at `start`, which the caller has checked
    /// are there, as 128 bits (the hot can-evaluate parse, in place): four
    /// words read and checked, one branch for all of them.
    @inlinable @inline(__always)
    public static func value128(at start: UnsafeRawPointer) -> (high: UInt64, low: UInt64)? {
        let a = word(start.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        let b = word(start.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        let c = word(start.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        let d = word(start.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        guard a.bad | b.bad | c.bad | d.bad == 0 else { return nil }
        return (a.value << 32 | b.value, c.value << 32 | d.value)
    }

    /// Eight digits (either case) in one 64-bit word, loaded little-endian
    /// (the first digit in the low byte), as their 32-bit value; nil if one
    /// is not a digit.
    @inlinable @inline(__always)
    public static func wordValue(_ word: UInt64) -> UInt64? {
        let read = Hex.word(word)
        return read.bad == 0 ? read.value : nil
    }

    /// `wordValue` without its branch: `bad` is nonzero when a byte is not
    /// a digit, and `value` is then meaningless. No branch per digit: a
    /// byte b < 0x80 is >= lo when b + (0x80 - lo) has its high bit set, and
    /// > hi when b + (0x7F - hi) has; no sum carries into the next byte (a
    /// byte >= 0x80 may carry, but its own high bit already makes `bad`).
    /// Digits are checked on the bytes as they are, letters after OR 0x20
    /// (which maps only A-F onto a-f). A digit's value is its low nibble,
    /// plus 9 when bit 6 is set (the letters; a = 1 + 9); the nibbles are
    /// then gathered by three multiplies, each adding a lane shifted up to
    /// its neighbour, whose sum the shift takes out: pairs of digits into
    /// bytes, bytes into halves, halves into the value.
    @inlinable @inline(__always)
    public static func word(_ word: UInt64) -> (value: UInt64, bad: UInt64) {
        let high: UInt64 = 0x8080_8080_8080_8080
        let digit = inRange(word, 0x30, 0x39), letter = inRange(word | 0x2020_2020_2020_2020, 0x61, 0x66)
        let bad = (word | ~(digit | letter)) & high
        let nibbles = (word & 0x0F0F_0F0F_0F0F_0F0F) &+ (word >> 6 & 0x0101_0101_0101_0101) &* 9
        let bytes = (nibbles &* (1 + 16 << 8)) >> 8 & 0x00FF_00FF_00FF_00FF
        let halves = (bytes &* (1 + 256 << 16)) >> 16 & 0x0000_FFFF_0000_FFFF
        return ((halves &* (1 + 65536 << 32)) >> 32, bad)
    }

    /// 0x80 in each byte (all < 0x80) that lies in lo...hi, else 0.
    @inlinable @inline(__always)
    static func inRange(_ word: UInt64, _ lo: UInt64, _ hi: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        return (word &+ (0x80 - lo) &* ones) & ~(word &+ (0x7F - hi) &* ones) & 0x8080_8080_8080_8080
    }
}
