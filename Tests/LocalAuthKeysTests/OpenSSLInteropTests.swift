// The rights' keys against the openssl command (Debian's, the same libcrypto
// but its own code paths: PEM, SPKI, pkeyutl): a signature verifies with
// `openssl dgst -sha256 -verify` given the exported public key as PEM, and
// ECDH with a key openssl generated gives openssl's own `pkeyutl -derive`.
import Foundation
import LocalAuthKeys
import LocalAuthTestSupport
import XCTest

final class OpenSSLInteropTests: XCTestCase {
    /// SubjectPublicKeyInfo for id-ecPublicKey / prime256v1, before the 65-byte key (RFC 5480).
    static let spkiPrefix: [UInt8] = [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
                                      0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00]

    static func pem(_ x963: [UInt8]) -> String {
        let base64 = Data(spkiPrefix + x963).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN PUBLIC KEY-----\n\(base64)\n-----END PUBLIC KEY-----\n"
    }

    private func openssl() throws -> String {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else { throw XCTSkip("no /usr/bin/openssl") }
        return "/usr/bin/openssl"
    }

    func test_a_message_signature_verifies_with_openssl_dgst() throws {
        let openssl = try openssl()
        let directory = TemporaryDirectory()
        let key = P256PrivateKey.generate()
        let message = Array("a server's challenge, signed after the user authenticated".utf8)
        try Data(message).write(to: URL(fileURLWithPath: directory.path + "/message"))
        try Data(key.sign(digest: Digest.sha256.hash(message))).write(to: URL(fileURLWithPath: directory.path + "/signature"))
        try Self.pem(key.publicKey).write(toFile: directory.path + "/public.pem", atomically: true, encoding: .utf8)
        let (status, out, err) = try runToCompletion(openssl, ["dgst", "-sha256", "-verify", directory.path + "/public.pem",
                                                             "-signature", directory.path + "/signature", directory.path + "/message"])
        XCTAssertEqual(status, 0, err)
        XCTAssertEqual(out, "Verified OK\n")
        try Data(message + [0]).write(to: URL(fileURLWithPath: directory.path + "/message"))
        let (refused, _, _) = try runToCompletion(openssl, ["dgst", "-sha256", "-verify", directory.path + "/public.pem",
                                                          "-signature", directory.path + "/signature", directory.path + "/message"])
        XCTAssertNotEqual(refused, 0, "another message does not verify")
    }

    func test_ECDH_with_an_openssl_generated_key_matches_openssl_derive() throws {
        let openssl = try openssl()
        let directory = TemporaryDirectory()
        let theirs = directory.path + "/theirs.pem"
        XCTAssertEqual(try runToCompletion(openssl, ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", theirs]).0, 0)
        XCTAssertEqual(try runToCompletion(openssl, ["ec", "-in", theirs, "-pubout", "-conv_form", "uncompressed",
                                                      "-outform", "DER", "-out", directory.path + "/theirs.der"]).0, 0)
        let spki = readBytes(directory.path + "/theirs.der")
        XCTAssertEqual(Array(spki.prefix(Self.spkiPrefix.count)), Self.spkiPrefix)
        let theirPublic = try XCTUnwrap(P256PublicKey(x963: Array(spki.dropFirst(Self.spkiPrefix.count))))
        let ours = P256PrivateKey.generate()
        try Self.pem(ours.publicKey).write(toFile: directory.path + "/ours.pem", atomically: true, encoding: .utf8)
        let (status, _, err) = try runToCompletion(openssl, ["pkeyutl", "-derive", "-inkey", theirs, "-peerkey",
                                                           directory.path + "/ours.pem", "-out", directory.path + "/z"])
        XCTAssertEqual(status, 0, err)
        XCTAssertEqual(ours.sharedSecret(with: theirPublic), readBytes(directory.path + "/z"))
    }
}
