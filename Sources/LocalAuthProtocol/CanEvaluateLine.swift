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

/// `TAG SP "can-evaluate" SP "ctx=" HEX32 SP "policy=" WORD`: HEX32 is 32
/// hex digits (either case; the ids the daemon hands out), a WORD is 1 to
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
        guard tagEnd > 0, CanEvaluateLine.has(base, at: tagEnd, end: end, " can-evaluate ctx=") else { return nil }
        let ctxStart = tagEnd + 18, ctxEnd = ctxStart + 32
        guard end - ctxStart >= 32, let id = CanEvaluateLine.hex32(base + ctxStart),
              CanEvaluateLine.has(base, at: ctxEnd, end: end, " policy=") else { return nil }
        let policyStart = ctxEnd + 8
        let policyEnd = CanEvaluateLine.word(base, from: policyStart, end: end, limit: CanEvaluateLine.maximumWordLength)
        guard policyEnd > policyStart, policyEnd == end else { return nil }
        tag = UnsafeBufferPointer(start: base, count: tagEnd)
        ctx = UnsafeBufferPointer(start: base + ctxStart, count: ctxEnd - ctxStart)
        (ctxHigh, ctxLow) = id
        policy = UnsafeBufferPointer(start: base + policyStart, count: policyEnd - policyStart)
    }

    /// The 32 hex digits at `start` (a context id as the daemon writes
    /// them) as 128 bits, eight digits at a time; nil if one is not a digit.
    @inline(__always)
    private static func hex32(_ start: UnsafePointer<UInt8>) -> (UInt64, UInt64)? {
        let raw = UnsafeRawPointer(start)
        guard let a = Grammar.hexWordValue(raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
              let b = Grammar.hexWordValue(raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
              let c = Grammar.hexWordValue(raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
              let d = Grammar.hexWordValue(raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        else { return nil }
        return (a << 32 | b, c << 32 | d)
    }

    /// Where the run of TAG characters from `start` ends; `start` when
    /// there is none, or when it is longer than `limit` (then no WORD).
    @inline(__always)
    private static func word(_ base: UnsafePointer<UInt8>, from start: Int, end: Int, limit: Int) -> Int {
        var index = start
        while index < end, Grammar.isTagByte(base[index]) { index += 1 }
        return index - start <= limit ? index : start
    }

    /// Whether `literal` sits at `index`, whole, before `end`.
    @inline(__always)
    private static func has(_ base: UnsafePointer<UInt8>, at index: Int, end: Int, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard end - index >= count else { return false }
        return Grammar.equal(UnsafeBufferPointer(start: base + index, count: count),
                             UnsafeBufferPointer(start: literal.utf8Start, count: count))
    }
}
