// LAPersistedRight.key (LAPrivateKey) and its publicKey (LAPublicKey)
// through the module, against a live daemon, as an iOS app calls them:
// a signature verifies with `openssl dgst -sha256 -verify` given the
// exported public key as PEM; ECIES encrypts here and decrypts in the
// daemon; ECDH with a key openssl generated equals `openssl pkeyutl
// -derive`; no private-key operation before an authorization, nor for a
// biometryCurrentSet right after an enrollment; Apple's Security errors.
import Foundation
import LocalAuthentication
import LocalAuthTestSupport
import XCTest

/// The keys' tests' tools, for every live suite (RightKeyTPMTests too).
extension LiveTestCase {
    /// SubjectPublicKeyInfo for id-ecPublicKey / prime256v1, before the 65-byte key (RFC 5480).
    static let spkiPrefix = Data([0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
                                  0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00])

    func openssl() throws -> String {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else { throw XCTSkip("no /usr/bin/openssl") }
        return "/usr/bin/openssl"
    }

    func pem(_ x963: Data) -> String {
        "-----BEGIN PUBLIC KEY-----\n"
            + (Self.spkiPrefix + x963).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END PUBLIC KEY-----\n"
    }

    /// A saved right authorized by a simulated match.
    func authorizedRight(_ requirement: LAAuthenticationRequirement = .biometry,
                         identifier: String = "com.example.key") async throws -> LAPersistedRight {
        let right = try await LARightStore.shared.saveRight(LARight(requirement: requirement), identifier: identifier)
        try authorizeByAMatch(right)
        return right
    }

    func authorizeByAMatch(_ right: LARight) throws {
        let handler = ScriptedHandler()
        right.promptHandler = handler
        let box = ReplyBox()
        let reply = box.reply
        right.authorize(localizedReason: "use the key") { error in reply(error == nil, error) }
        XCTAssertEqual(handler.nextPrompt(), "biometric")
        try admin.ok("sensor uid=0 result=match")
        XCTAssertNil(box.wait().nsError)
    }

    /// `openssl dgst -sha256 -verify` of an ecdsaSignatureMessageX962SHA256
    /// signature of `message`, given the exported key as PEM.
    func assertOpenSSLVerifies(_ signature: Data, of message: Data, publicKey x963: Data,
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let openssl = try openssl()
        let directory = TemporaryDirectory()
        try message.write(to: URL(fileURLWithPath: directory.path + "/message"))
        try signature.write(to: URL(fileURLWithPath: directory.path + "/signature"))
        try pem(x963).write(toFile: directory.path + "/public.pem", atomically: true, encoding: .utf8)
        let (status, out, err) = try runToCompletion(openssl, ["dgst", "-sha256", "-verify", directory.path + "/public.pem",
                                                             "-signature", directory.path + "/signature", directory.path + "/message"])
        XCTAssertEqual(status, 0, "openssl: \(out)\(err)", file: file, line: line)
        XCTAssertEqual(out, "Verified OK\n", file: file, line: line)
    }
}

final class RightKeyClientTests: LiveTestCase {
    func testASignatureMadeThroughTheModuleVerifiesWithOpenSSL() async throws {
        _ = try openssl()
        try prepareOwner()
        let right = try await authorizedRight()
        let challenge = Data("nonce=8c1f0a6e; user=alice".utf8)
        let signature = try await right.key.sign(challenge, algorithm: .ecdsaSignatureMessageX962SHA256)
        let exported = try await right.key.publicKey.exportBytes()
        XCTAssertEqual(exported.count, 65)
        XCTAssertEqual(exported.first, 4, "ANSI X9.63 uncompressed")
        try assertOpenSSLVerifies(signature, of: challenge, publicKey: exported)

        // The module's own verify agrees, and refuses another message with Apple's errSecVerifyFailed.
        try await right.key.publicKey.verify(challenge, signature: signature, algorithm: .ecdsaSignatureMessageX962SHA256)
        do {
            try await right.key.publicKey.verify(challenge + Data([0]), signature: signature, algorithm: .ecdsaSignatureMessageX962SHA256)
            XCTFail("another message verified")
        } catch {
            XCTAssertEqual((error as NSError).domain, NSOSStatusErrorDomain)
            XCTAssertEqual((error as NSError).code, -67808, "errSecVerifyFailed")
        }
    }

    func testECIESEncryptsHereAndDecryptsInTheDaemon() async throws {
        try prepareOwner()
        let right = try await authorizedRight()
        let plaintext = Data("a session key for the right only".utf8)
        for algorithm in [SecKeyAlgorithm.eciesEncryptionCofactorVariableIVX963SHA256AESGCM, .eciesEncryptionStandardX963SHA256AESGCM,
                          .eciesEncryptionCofactorVariableIVX963SHA512AESGCM] {
            XCTAssertTrue(right.key.publicKey.canEncrypt(using: algorithm))
            XCTAssertTrue(right.key.canDecrypt(using: algorithm))
            let ciphertext = try await right.key.publicKey.encrypt(plaintext, algorithm: algorithm)
            XCTAssertEqual(ciphertext.count, 65 + plaintext.count + 16, "E || C || T")
            let decrypted = try await right.key.decrypt(ciphertext, algorithm: algorithm)
            XCTAssertEqual(decrypted, plaintext, algorithm.rawValue)
        }
    }

    func testKeyExchangeWithAnOpenSSLKeyMatchesOpenSSLsDerive() async throws {
        let openssl = try openssl()
        try prepareOwner()
        let right = try await authorizedRight()
        let directory = TemporaryDirectory()
        let theirs = directory.path + "/theirs.pem"
        XCTAssertEqual(try runToCompletion(openssl, ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", theirs]).0, 0)
        XCTAssertEqual(try runToCompletion(openssl, ["ec", "-in", theirs, "-pubout", "-conv_form", "uncompressed", "-outform", "DER",
                                                      "-out", directory.path + "/theirs.der"]).0, 0)
        let theirPublic = Data(readBytes(directory.path + "/theirs.der").dropFirst(Self.spkiPrefix.count))
        XCTAssertTrue(right.key.canExchangeKeys(using: .ecdhKeyExchangeStandard))
        let z = try await right.key.exchangeKeys(publicKey: theirPublic, algorithm: .ecdhKeyExchangeStandard, parameters: [:])
        try pem(try await right.key.publicKey.exportBytes()).write(toFile: directory.path + "/ours.pem", atomically: true, encoding: .utf8)
        let (status, _, err) = try runToCompletion(openssl, ["pkeyutl", "-derive", "-inkey", theirs, "-peerkey", directory.path + "/ours.pem",
                                                           "-out", directory.path + "/z"])
        XCTAssertEqual(status, 0, err)
        XCTAssertEqual(Array(z), readBytes(directory.path + "/z"))
        // The X9.63 KDF form, with Apple's parameter keys.
        let derived = try await right.key.exchangeKeys(publicKey: theirPublic, algorithm: .ecdhKeyExchangeCofactorX963SHA256,
                                                       parameters: [SecKeyKeyExchangeParameter.requestedSize: 32,
                                                                    SecKeyKeyExchangeParameter.sharedInfo: Data("info".utf8)])
        XCTAssertEqual(derived.count, 32)
        XCTAssertNotEqual(derived, z)
    }

    func testWithoutAnAuthorizationThePrivateKeyRefusesAndThePublicKeyWorks() async throws {
        try prepareOwner()
        let right = try await LARightStore.shared.saveRight(LARight(), identifier: "com.example.unauthorized")
        do {
            _ = try await right.key.sign(Data("x".utf8), algorithm: .ecdsaSignatureMessageX962SHA256)
            XCTFail("signed before any authorization")
        } catch let error as LAError {
            XCTAssertEqual(error.code, .systemCancel)
            XCTAssertEqual(error.reason, "not-authorized", "as LASecret's refusal")
        }
        let exported = try await right.key.publicKey.exportBytes()
        XCTAssertEqual(exported.count, 65, "public-key operations are always available")
        _ = try await right.key.publicKey.encrypt(Data("x".utf8), algorithm: .eciesEncryptionCofactorVariableIVX963SHA256AESGCM)
    }

    func testABiometryCurrentSetRightsKeyIsUnusableAfterAnEnrollment() async throws {
        try prepareOwner()
        let right = try await authorizedRight(.biometryCurrentSet, identifier: "com.example.bound")
        _ = try await right.key.sign(Data("before".utf8), algorithm: .ecdsaSignatureMessageX962SHA256)
        try admin.ok("enroll uid=0 template=left-thumb")
        do {
            _ = try await right.key.sign(Data("after".utf8), algorithm: .ecdsaSignatureMessageX962SHA256)
            XCTFail("a biometryCurrentSet key signed after an enrollment")
        } catch let error as LAError {
            XCTAssertEqual(error.reason, "not-authorized")
        }
    }

    func testApplesSecurityErrorsForWhatTheKeyDoesNotOffer() async throws {
        try prepareOwner()
        let right = try await authorizedRight()
        XCTAssertFalse(right.key.canSign(using: .rsaSignatureMessagePKCS1v15SHA256))
        XCTAssertFalse(right.key.canSign(using: .eciesEncryptionCofactorVariableIVX963SHA256AESGCM))
        XCTAssertFalse(right.key.publicKey.canVerify(using: .ecdhKeyExchangeStandard))
        XCTAssertTrue(right.key.canSign(using: .ecdsaSignatureDigestX962SHA256))
        for call in [{ try await right.key.sign(Data("x".utf8), algorithm: .rsaSignatureMessagePKCS1v15SHA256) },
                     { try await right.key.sign(Data(count: 31), algorithm: .ecdsaSignatureDigestX962SHA256) },
                     { try await right.key.decrypt(Data(count: 100), algorithm: .eciesEncryptionCofactorVariableIVX963SHA256AESGCM) },
                     { try await right.key.exchangeKeys(publicKey: Data(count: 65), algorithm: .ecdhKeyExchangeStandard, parameters: [:]) },
                     { try await right.key.publicKey.encrypt(Data("x".utf8), algorithm: .rsaEncryptionOAEPSHA256) }]
            as [() async throws -> Data] {
            do {
                _ = try await call()
                XCTFail("accepted")
            } catch {
                XCTAssertEqual((error as NSError).domain, NSOSStatusErrorDomain, "\(error)")
                XCTAssertEqual((error as NSError).code, -50, "errSecParam: \(error)")
            }
        }
        do {
            _ = try await right.key.sign(Data("x".utf8), algorithm: .rsaSignatureRaw)
            XCTFail("an RSA algorithm signed")
        } catch {
            XCTAssertEqual((error as NSError).localizedDescription, "algid:sign:RSA:raw: algorithm not supported by the key")
        }
    }
}
