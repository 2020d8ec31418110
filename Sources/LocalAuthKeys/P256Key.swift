// P-256 keys through libcrypto's EC_KEY: the right's private key (made,
// filled from its sealed 32-byte scalar, used for one operation, freed:
// EC_KEY_free clears the scalar with BN_clear_free) and public keys in
// Apple's external representation, ANSI X9.63 uncompressed (04 || X || Y,
// 65 bytes), the only EC form SecKeyCreateWithData and exportBytes use.
// Signatures are X9.62 DER (SEQUENCE { INTEGER r, INTEGER s }).
internal import COpenSSL

public enum P256 {
    public static let scalarSize = 32
    public static let publicKeySize = 65
    /// The longest DER signature: two 33-byte INTEGERs in a SEQUENCE.
    public static let maximumSignatureSize = 72

    static func newKey() -> OpaquePointer {
        guard let key = EC_KEY_new_by_curve_name(NID_X9_62_prime256v1) else { fatalError("EC_KEY_new_by_curve_name failed") }
        return key
    }
}

public final class P256PublicKey {
    let key: OpaquePointer

    /// nil unless `bytes` is 04 || X || Y of a point on P-256 (not the point at infinity).
    public init?(x963 bytes: [UInt8]) {
        guard bytes.count == P256.publicKeySize, bytes[0] == 4 else { return nil }
        let key = P256.newKey()
        guard P256PublicKey.load(key, bytes) else {
            EC_KEY_free(key)
            return nil
        }
        self.key = key
    }

    deinit { EC_KEY_free(key) }

    /// Sets `key`'s public point from X9.63 bytes; oct2point checks the point is on the curve.
    static func load(_ key: OpaquePointer, _ bytes: [UInt8]) -> Bool {
        guard let group = EC_KEY_get0_group(key), let point = EC_POINT_new(group) else { return false }
        defer { EC_POINT_free(point) }
        let parsed = bytes.withUnsafeBufferPointer { EC_POINT_oct2point(group, point, $0.baseAddress, $0.count, nil) == 1 }
        return parsed && EC_POINT_is_at_infinity(group, point) == 0 && EC_KEY_set_public_key(key, point) == 1
    }

    public var x963: [UInt8] { P256PublicKey.bytes(of: key) }

    static func bytes(of key: OpaquePointer) -> [UInt8] {
        guard let group = EC_KEY_get0_group(key), let point = EC_KEY_get0_public_key(key) else { return [] }
        var out = [UInt8](repeating: 0, count: P256.publicKeySize)
        let written = EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &out, out.count, nil)
        precondition(written == P256.publicKeySize, "EC_POINT_point2oct failed")
        return out
    }

    /// Whether `signature` (X9.62 DER, exactly as OpenSSL would encode it) signs `digest`.
    public func verify(signature: [UInt8], digest: [UInt8]) -> Bool {
        guard !signature.isEmpty, signature.count <= P256.maximumSignatureSize else { return false }
        return ECDSA_verify(0, digest, Int32(digest.count), signature, Int32(signature.count), key) == 1
    }
}

public final class P256PrivateKey {
    let key: OpaquePointer

    private init(key: OpaquePointer) { self.key = key }

    deinit { EC_KEY_free(key) }

    /// A fresh key from OpenSSL's generator.
    public static func generate() -> P256PrivateKey {
        let key = P256.newKey()
        precondition(EC_KEY_generate_key(key) == 1, "EC_KEY_generate_key failed")
        return P256PrivateKey(key: key)
    }

    /// The key whose scalar (32 bytes, big-endian) and public key are given;
    /// nil if either is malformed. The caller wipes `scalar`; the temporary
    /// BIGNUM is cleared here.
    public convenience init?(scalar: [UInt8], publicKey: [UInt8]) {
        guard scalar.count == P256.scalarSize else { return nil }
        let key = P256.newKey()
        guard let number = scalar.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), nil) }) else {
            EC_KEY_free(key)
            return nil
        }
        let set = BN_is_zero(number) == 0 && EC_KEY_set_private_key(key, number) == 1
        BN_clear_free(number)
        guard set, P256PublicKey.load(key, publicKey) else {
            EC_KEY_free(key)
            return nil
        }
        self.init(key: key)
    }

    public var publicKey: [UInt8] { P256PublicKey.bytes(of: key) }

    /// Calls `body` with the scalar in a buffer that is wiped when it returns
    /// (to seal it; it must not be copied elsewhere).
    public func withScalar<Result>(_ body: ([UInt8]) throws -> Result) rethrows -> Result {
        var scalar = [UInt8](repeating: 0, count: P256.scalarSize)
        defer { cleanse(&scalar) }
        guard let number = EC_KEY_get0_private_key(key),
              BN_bn2binpad(number, &scalar, Int32(scalar.count)) == Int32(P256.scalarSize) else {
            fatalError("BN_bn2binpad failed")
        }
        return try body(scalar)
    }

    /// An X9.62 DER ECDSA signature of `digest` (any length: X9.62 uses its leftmost 256 bits).
    public func sign(digest: [UInt8]) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: Int(ECDSA_size(key)))
        var length: UInt32 = 0
        let ok = ECDSA_sign(0, digest, Int32(digest.count), &signature, &length, key)
        precondition(ok == 1, "ECDSA_sign failed")
        signature.removeSubrange(Int(length)...)
        return signature
    }

    /// ECDH: the X coordinate of this key times `peer`'s point (Z, 32 bytes).
    public func sharedSecret(with peer: P256PublicKey) -> [UInt8] {
        var z = [UInt8](repeating: 0, count: P256.scalarSize)
        guard let point = EC_KEY_get0_public_key(peer.key) else { fatalError("a public key without a point") }
        let written = ECDH_compute_key(&z, z.count, point, key, nil)
        precondition(written == Int32(P256.scalarSize), "ECDH_compute_key failed")
        return z
    }
}
