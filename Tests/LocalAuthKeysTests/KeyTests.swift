// What the rights' keys refuse, and that every ECIES variant and key
// exchange round-trips: malformed public keys (Apple accepts only 04 || X
// || Y of a point on the curve), tampered ciphertexts, short ones.
import LocalAuthKeys
import XCTest

final class KeyTests: XCTestCase {
    func test_malformed_public_keys_are_refused() {
        var offCurve = Vectors.rfc6979Public
        offCurve[64] ^= 1
        var compressed = Array(Vectors.rfc6979Public[..<33])
        compressed[0] = 2 + (Vectors.rfc6979Public[64] & 1)
        for (name, bytes) in [("empty", []), ("off the curve", offCurve), ("compressed", compressed),
                              ("hybrid prefix", [6] + Vectors.rfc6979Public.dropFirst()),
                              ("too long", Vectors.rfc6979Public + [0]), ("infinity", [0])] as [(String, [UInt8])] {
            XCTAssertNil(P256PublicKey(x963: bytes), name)
        }
        XCTAssertNil(P256PrivateKey(scalar: [UInt8](repeating: 0, count: 32), publicKey: Vectors.rfc6979Public), "a zero scalar")
        XCTAssertNil(P256PrivateKey(scalar: Vectors.rfc6979Scalar, publicKey: offCurve))
    }

    func test_every_ECIES_variant_round_trips_and_refuses_a_changed_byte() throws {
        let key = P256PrivateKey.generate()
        let publicKey = try XCTUnwrap(P256PublicKey(x963: key.publicKey))
        for digest in Digest.allCases {
            for variableIV in [true, false] {
                let variant = ECIES.Variant(digest: digest, variableIV: variableIV)
                for plaintext in [[], [1], Array(repeating: 0xA5, count: 1000)] as [[UInt8]] {
                    let ciphertext = ECIES.encrypt(plaintext, to: publicKey, variant)
                    XCTAssertEqual(ciphertext.count, 65 + plaintext.count + 16)
                    XCTAssertEqual(ECIES.decrypt(ciphertext, with: key, variant), plaintext)
                    for index in [0, 1, 64, 65, ciphertext.count - 1] {
                        var changed = ciphertext
                        changed[index] ^= 0x40
                        XCTAssertNil(ECIES.decrypt(changed, with: key, variant), "\(variant) byte \(index)")
                    }
                }
                XCTAssertNil(ECIES.decrypt(Array(repeating: 4, count: 80), with: key, variant), "too short")
            }
        }
    }

    func test_key_exchange_gives_Z_or_its_X963_KDF_the_same_on_both_sides() throws {
        let alice = P256PrivateKey.generate(), bob = P256PrivateKey.generate()
        let alicePublic = try XCTUnwrap(P256PublicKey(x963: alice.publicKey))
        let bobPublic = try XCTUnwrap(P256PublicKey(x963: bob.publicKey))
        let z = KeyExchange.derive(alice, with: bobPublic, kdf: nil, sharedInfo: [], requestedSize: 0)
        XCTAssertEqual(z.count, 32)
        XCTAssertEqual(z, KeyExchange.derive(bob, with: alicePublic, kdf: nil, sharedInfo: [], requestedSize: 0))
        for digest in Digest.allCases {
            let derived = KeyExchange.derive(alice, with: bobPublic, kdf: digest, sharedInfo: [1, 2, 3], requestedSize: 77)
            XCTAssertEqual(derived, X963KDF.derive(digest, secret: z, sharedInfo: [1, 2, 3], size: 77))
            XCTAssertEqual(derived, KeyExchange.derive(bob, with: alicePublic, kdf: digest, sharedInfo: [1, 2, 3], requestedSize: 77))
        }
    }

    func test_a_generated_keys_scalar_reloads_as_the_same_key() throws {
        let key = P256PrivateKey.generate()
        let again = try XCTUnwrap(key.withScalar { P256PrivateKey(scalar: $0, publicKey: key.publicKey) })
        let digest = Digest.sha256.hash([9, 9])
        XCTAssertTrue(try XCTUnwrap(P256PublicKey(x963: key.publicKey)).verify(signature: again.sign(digest: digest), digest: digest))
    }
}
