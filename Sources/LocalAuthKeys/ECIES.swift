// Apple's ECIES for P-256 keys (SecKeyCreateEncryptedData with the
// `ecies…X963SHAnAESGCM` algorithms; Security's SecKeyAdaptors, the
// ECIES_X963_ADAPTOR family), byte for byte:
//   ciphertext = E || C || T
//   E  the sender's ephemeral public key, X9.63 uncompressed (65 bytes)
//   Z  ECDH(ephemeral, recipient): the X coordinate (32 bytes)
//   K  X963KDF(SHA-n, Z, SharedInfo = E, 16 bytes: the AES-128 key),
//      followed, for the variable-IV algorithms (`…-KDFIV`), by 16 more
//      bytes: the GCM IV; the others use 16 zero bytes as the IV
//   C, T  AES-128-GCM of the plaintext under that key and IV, no
//      additional data, a 16-byte tag
// "Standard" (ECDH) and "cofactor" (ECDHC) are the same on P-256
// (cofactor 1). ECIESTests decrypts ciphertexts that Apple's
// Security.framework made (github.com/jedda/ECIES, ecies_test.go).
public enum ECIES {
    public struct Variant: Sendable, Hashable {
        public var digest: Digest
        /// The GCM IV comes from the KDF (`…VariableIV…`); else it is 16 zero bytes.
        public var variableIV: Bool

        public init(digest: Digest, variableIV: Bool) {
            self.digest = digest
            self.variableIV = variableIV
        }
    }

    static let aesKeySize = 16
    static let ivSize = 16
    /// E and T: the smallest ciphertext (of an empty plaintext).
    public static let overhead = P256.publicKeySize + GCM.tagSize

    /// Encrypts to `recipient`; `ephemeral` is a fresh key except in known-answer tests.
    public static func encrypt(_ plaintext: [UInt8], to recipient: P256PublicKey, _ variant: Variant,
                               ephemeral: P256PrivateKey = .generate()) -> [UInt8] {
        let e = ephemeral.publicKey
        var (key, iv) = material(variant, secret: ephemeral.sharedSecret(with: recipient), ephemeral: e)
        defer { cleanse(&key); cleanse(&iv) }
        return e + GCM.seal(plaintext, key: key, iv: iv)
    }

    /// The plaintext, or nil when `ciphertext` is too short, its E is not a
    /// point of P-256, or it does not authenticate (Apple: errSecParam).
    public static func decrypt(_ ciphertext: [UInt8], with recipient: P256PrivateKey, _ variant: Variant) -> [UInt8]? {
        guard ciphertext.count >= overhead else { return nil }
        let e = Array(ciphertext[..<P256.publicKeySize])
        guard let ephemeral = P256PublicKey(x963: e) else { return nil }
        var (key, iv) = material(variant, secret: recipient.sharedSecret(with: ephemeral), ephemeral: e)
        defer { cleanse(&key); cleanse(&iv) }
        return GCM.open(ciphertext[P256.publicKeySize...], key: key, iv: iv)
    }

    /// The AES key and IV from Z (wiped here) and E.
    private static func material(_ variant: Variant, secret: [UInt8], ephemeral e: [UInt8]) -> ([UInt8], [UInt8]) {
        var z = secret
        defer { cleanse(&z) }
        var derived = X963KDF.derive(variant.digest, secret: z, sharedInfo: e,
                                     size: aesKeySize + (variant.variableIV ? ivSize : 0))
        defer { cleanse(&derived) }
        let key = Array(derived[..<aesKeySize])
        let iv = variant.variableIV ? Array(derived[aesKeySize...]) : [UInt8](repeating: 0, count: ivSize)
        return (key, iv)
    }
}

/// Apple's EC key exchanges (SecKeyCopyKeyExchangeResult): `ecdhKeyExchange
/// Standard`/`Cofactor` give Z itself; the `…X963SHAn` ones give
/// X963KDF(SHA-n, Z, SharedInfo, requested size).
public enum KeyExchange {
    public static func derive(_ key: P256PrivateKey, with peer: P256PublicKey, kdf: Digest?,
                              sharedInfo: [UInt8], requestedSize: Int) -> [UInt8] {
        var z = key.sharedSecret(with: peer)
        guard let digest = kdf else { return z }
        defer { cleanse(&z) }
        return X963KDF.derive(digest, secret: z, sharedInfo: sharedInfo, size: requestedSize)
    }
}
