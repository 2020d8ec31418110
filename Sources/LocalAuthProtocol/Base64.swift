// Standard base64 (RFC 4648 §4, with padding) for `secret=` of the right
// verbs (PROTOCOL.md v1.1). The decoder is strict, because the value comes
// from a hostile socket: only the 64 letters, `=` only as the final one or
// two characters of a length that is a multiple of 4, the unused bits of the
// last character zero (one encoding per secret), and a bound on the decoded
// size checked before anything is decoded.
public enum Base64 {
    public enum Failure: Error, Equatable, Sendable {
        /// Not standard padded base64.
        case malformed
        /// More than the allowed number of decoded bytes.
        case tooLong
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        encode(bytes, appendingTo: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The encoded length of `count` bytes.
    public static func encodedCount(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Appends the encoding of `bytes` to `out`, with room reserved first so
    /// that `out` is not reallocated on the way (S-50: `right-secret`'s reply
    /// is encoded straight into the output line, through no String; a
    /// regrowth would leave a copy behind in the freed buffer).
    public static func encode(_ bytes: some Collection<UInt8>, appendingTo out: inout [UInt8]) {
        out.reserveCapacity(out.count + encodedCount(bytes.count))
        var iterator = bytes.makeIterator()
        while let a = iterator.next() {
            let b = iterator.next(), c = iterator.next()
            out.append(alphabet[Int(a >> 2)])
            out.append(alphabet[Int((a & 0x03) << 4 | (b ?? 0) >> 4)])
            out.append(b.map { alphabet[Int(($0 & 0x0F) << 2 | (c ?? 0) >> 6)] } ?? UInt8(ascii: "="))
            out.append(c.map { alphabet[Int($0 & 0x3F)] } ?? UInt8(ascii: "="))
        }
    }

    public static func decode(_ text: String, maximumBytes: Int) -> Result<[UInt8], Failure> {
        var text = text
        return text.withUTF8 { decode($0, maximumBytes: maximumBytes) }
    }

    /// Decodes `utf8` (a right's secret, S-50: straight from its
    /// `SecretBytes`). The caller wipes the result once used; a failure
    /// wipes what it had decoded, and nothing else holds the secret's bits.
    public static func decode(_ utf8: UnsafeBufferPointer<UInt8>, maximumBytes: Int) -> Result<[UInt8], Failure> {
        guard utf8.count % 4 == 0 else { return .failure(.malformed) }
        let padding = utf8.last == UInt8(ascii: "=") ? (utf8.count >= 2 && utf8[utf8.count - 2] == UInt8(ascii: "=") ? 2 : 1) : 0
        let decodedCount = utf8.count / 4 * 3 - padding
        guard decodedCount <= maximumBytes else { return .failure(.tooLong) }
        var out: [UInt8] = []
        out.reserveCapacity(decodedCount)
        func fail() -> Result<[UInt8], Failure> {
            out.withUnsafeMutableBytes { SecretBytes.wipe($0) }
            return .failure(.malformed)
        }
        var index = 0
        while index < utf8.count {
            var values: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
            let last = index + 4 == utf8.count
            for offset in 0..<4 {
                let c = utf8[index + offset]
                if c == UInt8(ascii: "=") {
                    // Padding only in the last group's final `padding` places.
                    guard last, offset >= 4 - padding else { return fail() }
                    continue
                }
                guard let value = value(c) else { return fail() }
                switch offset {
                case 0: values.0 = value
                case 1: values.1 = value
                case 2: values.2 = value
                default: values.3 = value
                }
            }
            out.append(values.0 << 2 | values.1 >> 4)
            if !(last && padding == 2) { out.append(values.1 << 4 | values.2 >> 2) }
            if !(last && padding >= 1) { out.append(values.2 << 6 | values.3) }
            if last {
                // Canonical: the bits the padding leaves unused are zero.
                if padding == 2, values.1 & 0x0F != 0 { return fail() }
                if padding == 1, values.2 & 0x03 != 0 { return fail() }
            }
            index += 4
        }
        return .success(out)
    }

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 65...90: return c - 65
        case 97...122: return c - 71
        case 48...57: return c + 4
        case 43: return 62
        case 47: return 63
        default: return nil
        }
    }
}
