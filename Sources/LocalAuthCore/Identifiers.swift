// Identifiers of the things the rules talk about. A context id is 128 random
// bits chosen by the daemon (the core stays deterministic: ids come in with
// the command that creates the context).

import LocalAuthHex

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
        Hex.value128(UnsafeRawBufferPointer(utf8)).map { ContextID(high: $0.high, low: $0.low) }
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
