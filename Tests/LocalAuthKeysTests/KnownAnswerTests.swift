// The byte formats of the rights' keys against answers from outside this
// project (Vectors.swift says where each comes from): the X9.63 KDF, the
// X9.63 public key of a known scalar, an RFC 6979 signature, ECDH's Z, and
// Apple's ECIES both ways (ciphertexts Security.framework made, and an
// encryption with a fixed ephemeral key).
import LocalAuthKeys
import XCTest

final class KnownAnswerTests: XCTestCase {
    func test_the_X963_KDF_gives_NISTs_answers() {
        for (z, sharedInfo, expected) in Vectors.x963 {
            XCTAssertEqual(X963KDF.derive(.sha256, secret: z, sharedInfo: sharedInfo, size: expected.count), expected)
        }
    }

    func test_a_known_scalar_has_RFC_6979s_public_key_and_signature() throws {
        let key = try XCTUnwrap(P256PrivateKey(scalar: Vectors.rfc6979Scalar, publicKey: Vectors.rfc6979Public))
        XCTAssertEqual(key.publicKey, Vectors.rfc6979Public, "ANSI X9.63 uncompressed: 04 || X || Y")
        key.withScalar { XCTAssertEqual($0, Vectors.rfc6979Scalar) }
        let publicKey = try XCTUnwrap(P256PublicKey(x963: Vectors.rfc6979Public))
        let digest = Digest.sha256.hash(Array("sample".utf8))
        XCTAssertTrue(publicKey.verify(signature: Vectors.rfc6979SampleSignature, digest: digest), "RFC 6979's (r, s) as X9.62 DER")
        XCTAssertTrue(publicKey.verify(signature: key.sign(digest: digest), digest: digest), "and our own signature")
        var other = digest
        other[0] ^= 1
        XCTAssertFalse(publicKey.verify(signature: Vectors.rfc6979SampleSignature, digest: other))
    }

    func test_ECDH_gives_the_independent_shared_secret_both_ways() throws {
        let recipient = try XCTUnwrap(P256PrivateKey(scalar: Vectors.rfc6979Scalar, publicKey: Vectors.rfc6979Public))
        let ephemeral = try XCTUnwrap(P256PrivateKey(scalar: Vectors.ephemeralScalar, publicKey: Vectors.ephemeralPublic))
        XCTAssertEqual(recipient.sharedSecret(with: try XCTUnwrap(P256PublicKey(x963: Vectors.ephemeralPublic))), Vectors.sharedSecret)
        XCTAssertEqual(ephemeral.sharedSecret(with: try XCTUnwrap(P256PublicKey(x963: Vectors.rfc6979Public))), Vectors.sharedSecret)
    }

    func test_Apples_ECIES_ciphertexts_decrypt() throws {
        for (key, ciphertext, digest, variableIV, plaintext) in Vectors.apple {
            let (scalar, publicKey) = Vectors.sec1(key)
            let recipient = try XCTUnwrap(P256PrivateKey(scalar: scalar, publicKey: publicKey))
            let variant = ECIES.Variant(digest: digest == "sha256" ? .sha256 : .sha224, variableIV: variableIV)
            let bytes = [UInt8](Data(base64Encoded: ciphertext)!)
            XCTAssertEqual(ECIES.decrypt(bytes, with: recipient, variant), Array(plaintext.utf8), plaintext)
            XCTAssertNil(ECIES.decrypt(bytes, with: recipient, ECIES.Variant(digest: variant.digest, variableIV: !variableIV)),
                         "\(plaintext): the other IV rule does not authenticate")
        }
    }

    func test_ECIES_encryption_with_a_fixed_ephemeral_key_gives_the_independent_answer() throws {
        let recipient = try XCTUnwrap(P256PublicKey(x963: Vectors.rfc6979Public))
        for (variableIV, expected) in [(true, Vectors.variableIVCiphertext), (false, Vectors.zeroIVCiphertext)] {
            let ephemeral = try XCTUnwrap(P256PrivateKey(scalar: Vectors.ephemeralScalar, publicKey: Vectors.ephemeralPublic))
            let ciphertext = ECIES.encrypt(Vectors.plaintext, to: recipient, ECIES.Variant(digest: .sha256, variableIV: variableIV),
                                           ephemeral: ephemeral)
            XCTAssertEqual(ciphertext, expected, "E || C || T, variable IV \(variableIV)")
        }
    }
}
