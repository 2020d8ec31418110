// Yescrypt: password and PIN hashes in crypt(3) form ("$y$..."), through
// libxcrypt. Each call uses its own heap-allocated crypt_data, so calls are
// thread-safe; each takes tens of milliseconds by design, so callers run
// them on worker threads, never on the event loop. Copies of the secret and
// crypt's work area are scrubbed after use (a Swift String the caller holds
// cannot be; prefer the [UInt8] forms and scrub your own copy).
import CLocalAuthShim
import CXCrypt
import Glibc

public enum Yescrypt {
    /// A new "$y$" hash of `secret` with libxcrypt's default cost and a
    /// 16-byte salt from getrandom. Secrets containing NUL are rejected (EINVAL).
    public static func hash(secret: [UInt8]) throws(SystemError) -> String {
        var randomBytes = SecureRandom.bytes(16)
        defer { scrub(&randomBytes) }
        var setting = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
        let generated = randomBytes.withUnsafeBufferPointer { random in
            random.withMemoryRebound(to: CChar.self) { random in
                crypt_gensalt_rn("$y$", 0, random.baseAddress, Int32(random.count), &setting, Int32(setting.count))
            }
        }
        guard generated != nil else { throw .current("crypt_gensalt_rn") }
        let settingString = setting.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        guard let hash = try run(secret: secret, setting: settingString) else {
            throw SystemError(call: "crypt_rn", errno: EINVAL)
        }
        return hash
    }

    public static func hash(secret: String) throws(SystemError) -> String {
        var bytes = Array(secret.utf8)
        defer { scrub(&bytes) }
        return try hash(secret: bytes)
    }

    /// Whether `secret` hashes to `hash`; compared in constant time. A
    /// malformed hash verifies nothing.
    public static func verify(secret: [UInt8], hash: String) -> Bool {
        guard let computed = try? run(secret: secret, setting: hash) else { return false }
        return constantTimeEqual(Array(computed.utf8), Array(hash.utf8))
    }

    public static func verify(secret: String, hash: String) -> Bool {
        var bytes = Array(secret.utf8)
        defer { scrub(&bytes) }
        return verify(secret: bytes, hash: hash)
    }

    /// crypt_rn(secret, setting), or nil when crypt rejects the setting.
    private static func run(secret: [UInt8], setting: String) throws(SystemError) -> String? {
        guard !secret.contains(0) else { throw SystemError(call: "crypt_rn", errno: EINVAL) }
        // Filled in place: `secret.map { ... } + [0]` made an intermediate
        // array of the passcode that was freed unwiped (F-23, S-50).
        var phrase = [CChar](repeating: 0, count: secret.count + 1)
        defer { scrub(&phrase) }
        for index in secret.indices { phrase[index - secret.startIndex] = CChar(bitPattern: secret[index]) }
        let size = MemoryLayout<crypt_data>.size
        let data = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<crypt_data>.alignment)
        defer {
            la_scrub(data, size)
            data.deallocate()
        }
        memset(data, 0, size)
        guard let output = crypt_rn(phrase, setting, data, Int32(size)) else { return nil }
        return String(cString: output)
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        if a.count != b.count { difference |= 1 }
        for i in 0..<min(a.count, b.count) { difference |= a[i] ^ b[i] }
        return difference == 0
    }

    private static func scrub<T>(_ bytes: inout [T]) {
        bytes.withUnsafeMutableBytes { la_scrub($0.baseAddress, $0.count) }
    }
}
