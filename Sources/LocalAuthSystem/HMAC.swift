// HMAC-SHA-256 through libcrypto's one-shot HMAC(), and a comparison in
// constant time (CRYPTO_memcmp). The login secret (S-74..S-76) derives its
// keys from the daemon's key with it, binds a sealed password to a shadow
// line, and authenticates its store file; none of those compares may tell
// how many leading bytes matched.
import COpenSSL

public enum HMACSHA256 {
    public static let size = 32

    /// HMAC-SHA-256 of `message` under `key` (32 bytes).
    public static func mac(key: [UInt8], _ message: UnsafeRawBufferPointer) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        var length: UInt32 = 0
        let done = key.withUnsafeBytes { k in
            out.withUnsafeMutableBufferPointer { o in
                HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), message.baseAddress?.assumingMemoryBound(to: UInt8.self),
                     message.count, o.baseAddress, &length)
            }
        }
        precondition(done != nil && length == UInt32(size), "HMAC(SHA-256) failed")
        return out
    }

    public static func mac(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { mac(key: key, $0) }
    }

    /// Whether two byte strings are equal, in time that depends on their length only.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, a.count) == 0 } }
    }
}
