// SHA256 through OpenSSL: a one-shot hash (EVP), a two-part hash, and the
// incremental hash of the log's chain (low-level API, nothing allocated). The EVP digest
// method is fetched once per process (an EVP_MD is immutable and shared
// between threads), which keeps small one-shot hashes cheap. OpenSSL fails
// here only when it cannot allocate, which stops the process like any other
// allocation failure.
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

    /// SHA-256(first || second) into `digest` (32 bytes), with nothing
    /// allocated: the log's chain step runs once per record. Uses the
    /// low-level API (a context on the stack, no EVP dispatch).
    public static func hash(
        _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, into digest: UnsafeMutableRawBufferPointer
    ) {
        precondition(digest.count >= digestSize)
        var context = SHA256_CTX()
        let ok = SHA256_Init(&context) == 1
            && SHA256_Update(&context, first.baseAddress, first.count) == 1
            && SHA256_Update(&context, second.baseAddress, second.count) == 1
            && SHA256_Final(digest.baseAddress!.assumingMemoryBound(to: UInt8.self), &context) == 1
        precondition(ok, "SHA256 failed")
    }

    /// An incremental SHA-256: bytes fed in any number of pieces give the
    /// digest of their concatenation. A value (the C context, ~112 bytes):
    /// copying one forks the hash, which is how a digest is read without
    /// ending the stream (`digest(into:)` finishes a copy).
    public struct Stream: Sendable {
        private var context = SHA256_CTX()

        public init() {
            precondition(SHA256_Init(&context) == 1, "SHA256_Init failed")
        }

        public mutating func update(_ bytes: UnsafeRawBufferPointer) {
            guard !bytes.isEmpty else { return }
            precondition(SHA256_Update(&context, bytes.baseAddress, bytes.count) == 1, "SHA256_Update failed")
        }

        /// The digest of everything fed so far, into `digest` (32 bytes);
        /// the stream goes on unchanged.
        public func digest(into digest: UnsafeMutableRawBufferPointer) {
            precondition(digest.count >= SHA256.digestSize)
            var copy = context
            precondition(
                SHA256_Final(digest.baseAddress!.assumingMemoryBound(to: UInt8.self), &copy) == 1, "SHA256_Final failed")
        }
    }

    /// Fetched once; safe to share (OpenSSL documents EVP_MD as thread-safe once fetched).
    nonisolated(unsafe) private static let method: OpaquePointer = {
        guard let md = EVP_MD_fetch(nil, "SHA256", nil) else { preconditionFailure("EVP_MD_fetch(SHA256) failed") }
        return md
    }()
}
