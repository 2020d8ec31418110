// The usual can-evaluate line, recognised in one pass: every
// `LAContext.canEvaluatePolicy` sends one, and they are most of the daemon's
// requests. The general `RequestScanner` takes ~1,700 instructions for such
// a line (UTF-8 check, spans, key lookups); this takes a few hundred.
//
// It recognises a strict subset of the grammar, no more: a line it accepts
// is one the scanner reads as the same tag, the verb `can-evaluate`, and
// exactly the arguments `ctx` and `policy` in that order with these bare
// values (RequestScannerTests checks this on random lines and mutations).
// Anything else, a reordered or quoted argument included, is left to the
// scanner, which gives every error its usual answer.

import LocalAuthHex

/// `TAG SP "can-evaluate" SP "ctx=" HEX32 SP "policy=" WORD`: HEX32 is 32
/// hex digits (either case; the ids the daemon hands out; LocalAuthHex's
/// eight-at-a-time parse), a WORD is 1 to
/// 64 of the TAG characters `A-Z a-z 0-9 . _ -`.
public struct CanEvaluateLine {
    public let tag: UnsafeBufferPointer<UInt8>
    public let ctx: UnsafeBufferPointer<UInt8>
    /// The id's 128 bits (`ctx` read as hex, the first digit most
    /// significant), parsed while it was checked: the server needs not read
    /// the 32 digits again.
    public let ctxHigh: UInt64, ctxLow: UInt64
    public let policy: UnsafeBufferPointer<UInt8>

    /// The longest WORD taken (Apple's longest policy name is 50): a
    /// longer value is left to the scanner.
    static let maximumWordLength = 64

    /// nil when `line` (without its LF) is not exactly of that form.
    public init?(_ line: UnsafeBufferPointer<UInt8>) {
        guard let base = line.baseAddress else { return nil }
        let end = line.count
        let tagEnd = CanEvaluateLine.word(base, from: 0, end: end, limit: Grammar.maximumTokenLength)
        guard tagEnd > 0, CanEvaluateLine.hasVerbAndCtxKey(base, at: tagEnd, end: end) else { return nil }
        let ctxStart = tagEnd + 18, ctxEnd = ctxStart + 32
        guard end - ctxStart >= 32, let id = Hex.value128(at: UnsafeRawPointer(base + ctxStart)),
              CanEvaluateLine.hasPolicyKey(base, at: ctxEnd, end: end) else { return nil }
        let policyStart = ctxEnd + 8
        let policyEnd = CanEvaluateLine.word(base, from: policyStart, end: end, limit: CanEvaluateLine.maximumWordLength)
        guard policyEnd > policyStart, policyEnd == end else { return nil }
        tag = UnsafeBufferPointer(start: base, count: tagEnd)
        ctx = UnsafeBufferPointer(start: base + ctxStart, count: ctxEnd - ctxStart)
        (ctxHigh, ctxLow) = id
        policy = UnsafeBufferPointer(start: base + policyStart, count: policyEnd - policyStart)
    }

    /// Where the run of TAG characters from `start` ends; `start` when
    /// there is none, or when it is longer than `limit` (then no WORD).
    @inline(__always)
    private static func word(_ base: UnsafePointer<UInt8>, from start: Int, end: Int, limit: Int) -> Int {
        var index = start
        while index < end, Grammar.isTagByte(base[index]) { index += 1 }
        return index - start <= limit ? index : start
    }

    /// Whether `" can-evaluate ctx="` (18 bytes) sits at `index`: two words
    /// and a half-word compared with the literal's bytes as little-endian
    /// constants (CanEvaluateLineTests checks them against the text).
    @inline(__always)
    private static func hasVerbAndCtxKey(_ base: UnsafePointer<UInt8>, at index: Int, end: Int) -> Bool {
        guard end - index >= 18 else { return false }
        let raw = UnsafeRawPointer(base + index)
        return raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self) == verbAndCtxKey.0
            && raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self) == verbAndCtxKey.1
            && raw.loadUnaligned(fromByteOffset: 16, as: UInt16.self) == verbAndCtxKey.2
    }

    /// Whether `" policy="` (8 bytes) sits at `index`: one word.
    @inline(__always)
    private static func hasPolicyKey(_ base: UnsafePointer<UInt8>, at index: Int, end: Int) -> Bool {
        end - index >= 8 && UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self) == policyKey
    }

    /// `" can-evaluate ctx="` and `" policy="` as little-endian loads.
    static let verbAndCtxKey: (UInt64, UInt64, UInt16) = (0x6176_652D_6E61_6320, 0x7463_2065_7461_756C, 0x3D78)
    static let policyKey: UInt64 = 0x3D79_6369_6C6F_7020
}
