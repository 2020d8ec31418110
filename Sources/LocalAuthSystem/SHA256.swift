// SHA256 through OpenSSL's EVP interface: a one-shot hash and an incremental
// Hasher. The digest method is fetched once per process (an EVP_MD is
// immutable and shared between threads), which keeps small one-shot hashes
// cheap. OpenSSL fails here only when it cannot allocate, which stops the
// process like any other allocation failure.
import COpenSSL

public enum SHA256 {
    public static let digestSize = 32

    /// The SHA-256 digest (32 bytes) of `bytes`.
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: digestSize) { digest, initialized in
            var length: UInt32 = 0
            let ok = EVP_Digest(bytes.baseAddress, bytes.count, digest.baseAddress, &length, method, nil)
            precondition(ok == 1 && length == UInt32(digestSize), "EVP_Digest(SHA256) failed")
            initialized = digestSize
        }
    }

    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { hash($0) }
    }

    /// Hashes data given in pieces; `finalize()` returns the digest and
    /// starts over, so one Hasher can be reused.
    public final class Hasher {
        private let context: OpaquePointer

        public init() {
            guard let context = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new failed") }
            self.context = context
            start()
        }

        deinit { EVP_MD_CTX_free(context) }

        public func update(_ bytes: UnsafeRawBufferPointer) {
            precondition(EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1, "EVP_DigestUpdate failed")
        }

        public func update(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { update($0) }
        }

        public func finalize() -> [UInt8] {
            let digest = [UInt8](unsafeUninitializedCapacity: digestSize) { digest, initialized in
                var length: UInt32 = 0
                let ok = EVP_DigestFinal_ex(context, digest.baseAddress, &length)
                precondition(ok == 1 && length == UInt32(digestSize), "EVP_DigestFinal_ex failed")
                initialized = digestSize
            }
            start()
            return digest
        }

        private func start() {
            precondition(EVP_DigestInit_ex(context, method, nil) == 1, "EVP_DigestInit_ex(SHA256) failed")
        }
    }

    /// Fetched once; safe to share (OpenSSL documents EVP_MD as thread-safe once fetched).
    nonisolated(unsafe) private static let method: OpaquePointer = {
        guard let md = EVP_MD_fetch(nil, "SHA256", nil) else { preconditionFailure("EVP_MD_fetch(SHA256) failed") }
        return md
    }()
}
