// The usual can-evaluate line, recognised in one pass: every
// `LAContext.canEvaluatePolicy` sends one, and they are most of the daemon's
// requests. The general `RequestScanner` takes ~1,700 instructions for such
// a line (UTF-8 check, spans, key lookups); this takes under two hundred
// (docs/PERFORMANCE.md, "One pass over a can-evaluate line").
//
// It recognises a strict subset of the grammar, no more: a line it accepts
// is one the scanner reads as the same tag, the verb `can-evaluate`, and
// exactly the arguments `ctx` and `policy` in that order with these bare
// values (CanEvaluateLineTests and the protocol fuzz target check this on
// seeded lines and every mutation of usual ones). Anything else (a
// reordered or quoted argument, a long policy name, a policy no one has)
// is left to the scanner, which gives every line its usual answer.

import LocalAuthHex

/// `TAG SP "can-evaluate" SP "ctx=" HEX32 SP "policy=" NAME`: HEX32 is 32
/// hex digits (either case; the ids the daemon hands out; LocalAuthHex's
/// eight-at-a-time parse), NAME one of the short policy spellings of
/// PROTOCOL.md: Apple's number `1`...`5` (what the LocalAuthentication
/// library sends) or `biometrics`, `owner`, `companion`,
/// `biometrics-or-companion`, `wrist`. Apple's long names are rare on the
/// wire and go through the scanner and `Policy(wireName:)`.
public struct CanEvaluateLine {
    public let tag: UnsafeBufferPointer<UInt8>
    public let ctx: UnsafeBufferPointer<UInt8>
    /// The id's 128 bits (`ctx` read as hex, the first digit most
    /// significant), parsed while it was checked: the server needs not read
    /// the 32 digits again.
    public let ctxHigh: UInt64, ctxLow: UInt64
    public let policy: UnsafeBufferPointer<UInt8>
    /// The policy `policy` names, as Apple's `LAPolicy` raw value (1...5):
    /// matched here by length then bytes, so the server looks nothing up.
    public let policyNumber: Int

    /// The shortest such line: a one-byte tag, the 18 bytes of
    /// `" can-evaluate ctx="`, 32 digits, `" policy="`, a one-byte name.
    /// Once a line is that long every fixed-offset load below is inside it.
    static let minimumLength = 1 + 18 + 32 + 8 + 1

    /// nil when `line` (without its LF) is not exactly of that form.
    public init?(_ line: UnsafeBufferPointer<UInt8>) {
        guard let base = line.baseAddress, line.count >= CanEvaluateLine.minimumLength else { return nil }
        let end = line.count
        // The tag: TAG bytes up to the first other byte, which must begin
        // the verb's literal (so it is the space); at most 32 of them.
        // (`end` > 33, so `base[tagEnd]` is inside the line.)
        var tagEnd = 0
        while Grammar.isTagByte(base[tagEnd]) {
            tagEnd += 1
            if tagEnd > Grammar.maximumTokenLength { return nil }
        }
        guard tagEnd > 0, end - tagEnd >= CanEvaluateLine.minimumLength - 1 else { return nil }
        let raw = UnsafeRawPointer(base)
        let ctxStart = tagEnd + 18, ctxEnd = ctxStart + 32, policyStart = ctxEnd + 8
        // `end - tagEnd >= 59`: the literals, the digits and one name byte are inside the line.
        guard raw.loadUnaligned(fromByteOffset: tagEnd, as: UInt64.self) == CanEvaluateLine.verbAndCtxKey.0,
              raw.loadUnaligned(fromByteOffset: tagEnd + 8, as: UInt64.self) == CanEvaluateLine.verbAndCtxKey.1,
              raw.loadUnaligned(fromByteOffset: tagEnd + 16, as: UInt16.self) == CanEvaluateLine.verbAndCtxKey.2,
              raw.loadUnaligned(fromByteOffset: ctxEnd, as: UInt64.self) == CanEvaluateLine.policyKey,
              let number = CanEvaluateLine.policyNumber(raw, from: policyStart, end: end),
              let id = Hex.value128(at: raw + ctxStart)
        else { return nil }
        tag = UnsafeBufferPointer(start: base, count: tagEnd)
        ctx = UnsafeBufferPointer(start: base + ctxStart, count: 32)
        (ctxHigh, ctxLow) = id
        policy = UnsafeBufferPointer(start: base + policyStart, count: end - policyStart)
        policyNumber = number
    }

    /// The policy the bytes `from..<end` name, by their length and then
    /// their bytes; nil for any other word. The caller checked that
    /// `" policy="` ends at `from`, so a name shorter than eight bytes is
    /// compared with the eight bytes that end the line, the key's tail
    /// included (one load, one compare).
    @inline(__always)
    private static func policyNumber(_ raw: UnsafeRawPointer, from start: Int, end: Int) -> Int? {
        @inline(__always) func word(_ offset: Int) -> UInt64 { raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
        switch end - start {
        case 1:
            let digit = Int(raw.load(fromByteOffset: start, as: UInt8.self)) &- 0x30
            return (1...5).contains(digit) ? digit : nil
        case 5:
            let last = word(end - 8)
            if last == PolicyWords.owner { return 2 }
            if last == PolicyWords.wrist { return 5 }
            return nil
        case 9:
            return word(start) == PolicyWords.companion.0 && word(end - 8) == PolicyWords.companion.1 ? 3 : nil
        case 10:
            return word(start) == PolicyWords.biometrics.0 && word(end - 8) == PolicyWords.biometrics.1 ? 1 : nil
        case 23:
            return word(start) == PolicyWords.biometricsOrCompanion.0 && word(start + 8) == PolicyWords.biometricsOrCompanion.1
                && word(end - 8) == PolicyWords.biometricsOrCompanion.2 ? 4 : nil
        default:
            return nil
        }
    }

    /// `" can-evaluate ctx="` and `" policy="` as little-endian loads.
    static let verbAndCtxKey: (UInt64, UInt64, UInt16) = (0x6176_652D_6E61_6320, 0x7463_2065_7461_756C, 0x3D78)
    static let policyKey: UInt64 = 0x3D79_6369_6C6F_7020

    /// The short policy names as the little-endian words `policyNumber`
    /// compares (CanEvaluateLineTests checks each against its text): a
    /// five-byte name with the key's `"cy="` before it, a longer one as its
    /// first eight bytes (and the next eight) and its last eight.
    enum PolicyWords {
        static let owner: UInt64 = 0x7265_6E77_6F3D_7963  // "cy=owner"
        static let wrist: UInt64 = 0x7473_6972_773D_7963  // "cy=wrist"
        static let companion: (UInt64, UInt64) = (0x6F69_6E61_706D_6F63, 0x6E6F_696E_6170_6D6F)  // "companio", "ompanion"
        static let biometrics: (UInt64, UInt64) = (0x6972_7465_6D6F_6962, 0x7363_6972_7465_6D6F)  // "biometri", "ometrics"
        static let biometricsOrCompanion: (UInt64, UInt64, UInt64)
            = (0x6972_7465_6D6F_6962, 0x6F63_2D72_6F2D_7363, 0x6E6F_696E_6170_6D6F)  // "biometri", "cs-or-co", "ompanion"
    }
}
