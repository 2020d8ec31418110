// The hashes Apple's SecKeyAlgorithm names for EC keys (SHA-1 and SHA-2),
// through libcrypto's EVP one-shot digest. Used by the message signatures
// (`…message-X962:SHAn`) and by the ANSI X9.63 KDF.
internal import COpenSSL

public enum Digest: Sendable, Hashable, CaseIterable {
    case sha1, sha224, sha256, sha384, sha512

    /// The digest's size in bytes (what a `…digest-X962:SHAn` signature must be given).
    public var size: Int {
        switch self {
        case .sha1: return 20
        case .sha224: return 28
        case .sha256: return 32
        case .sha384: return 48
        case .sha512: return 64
        }
    }

    var md: OpaquePointer {
        switch self {
        case .sha1: return EVP_sha1()
        case .sha224: return EVP_sha224()
        case .sha256: return EVP_sha256()
        case .sha384: return EVP_sha384()
        case .sha512: return EVP_sha512()
        }
    }

    public func hash(_ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        var length: UInt32 = 0
        let ok = data.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &out, &length, md, nil)
        }
        precondition(ok == 1 && Int(length) == size, "EVP_Digest failed")
        return out
    }

    /// The hash of several parts, as if concatenated (the KDF's Z || counter || SharedInfo),
    /// with no buffer holding the concatenation (Z is a secret).
    func hash(parts: [UnsafeRawBufferPointer], into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= size)
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(context) }
        var ok = EVP_DigestInit_ex(context, md, nil) == 1
        for part in parts where ok && part.count > 0 {
            ok = EVP_DigestUpdate(context, part.baseAddress, part.count) == 1
        }
        var length: UInt32 = 0
        ok = ok && EVP_DigestFinal_ex(context, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length) == 1
        precondition(ok && Int(length) == size, "EVP digest failed")
    }
}

/// Overwrites bytes that held key material, in a way the compiler keeps
/// (OPENSSL_cleanse): this module's counterpart of SecretMemory.wipe, so
/// that the client, which has no LocalAuthSystem, wipes too.
public func cleanse(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { OPENSSL_cleanse(base, $0.count) } }
}
