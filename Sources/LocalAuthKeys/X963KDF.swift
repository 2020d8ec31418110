// The ANSI X9.63 key derivation function (SEC 1 v2 §3.6.1), as Apple's
// `…X963SHAn` key exchanges and ECIES use it:
//   K(i) = Hash(Z || i as 4 bytes big-endian || SharedInfo), i = 1, 2, ...
// concatenated and cut to the size asked. Known answers (NIST CAVS
// ansx963_2001, SHA-256) are in X963KDFTests.
public enum X963KDF {
    /// At most this many bytes are derived (the protocol's `requested-size`
    /// cap; X9.63 allows far more, nothing here needs it).
    public static let maximumSize = 4096

    public static func derive(_ digest: Digest, secret z: [UInt8], sharedInfo: [UInt8], size: Int) -> [UInt8] {
        precondition(size > 0 && size <= maximumSize, "X9.63 KDF size out of range")
        var output = [UInt8](repeating: 0, count: size)
        var block = [UInt8](repeating: 0, count: digest.size)
        var counter: UInt32 = 1
        var filled = 0
        while filled < size {
            var be = counter.bigEndian
            z.withUnsafeBytes { zBytes in
                withUnsafeBytes(of: &be) { counterBytes in
                    sharedInfo.withUnsafeBytes { info in
                        block.withUnsafeMutableBytes { out in
                            digest.hash(parts: [zBytes, counterBytes, info], into: out)
                        }
                    }
                }
            }
            let take = min(block.count, size - filled)
            output.replaceSubrange(filled..<(filled + take), with: block[..<take])
            filled += take
            counter += 1
        }
        cleanse(&block)
        return output
    }
}
