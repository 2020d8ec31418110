// The TPM path of the rights' keys (decision 0013), with the real daemon,
// the real systemd-creds and swtpm as the machine's TPM 2.0. The daemon's
// key is sealed into the TPM as scripts/install seals it (`systemd-creds
// encrypt --name=localauthd.key KEY CREDENTIAL`), with `--with-key=tpm2
// --tpm2-device=swtpm:port=P` where install's default `--with-key=auto`
// finds the machine's chip. At each start it is unsealed as systemd does
// for the unit's `LoadCredentialEncrypted=localauthd.key:CREDENTIAL`, but by
// `systemd-creds decrypt` into a private $CREDENTIALS_DIRECTORY that the
// test hands the daemon (in memory, the file 0400, as /run/credentials/UNIT):
// PID 1 decrypts with its own environment, where no test can name a
// software TPM, so systemd-run's LoadCredentialEncrypted= cannot reach
// swtpm. The tests prove that a right's key made under that key signs (openssl
// verifies), still signs after the chip and the daemon restart, and that
// with another chip the credential does not unseal and the right's key does
// not open under another key or none: Apple's systemCancel, reason
// `internal` (decision 0002: a box that does not open), with neither the
// daemon's key nor the right's private key in the clear in the state
// directory. They skip only where swtpm or systemd-creds (with the TSS
// libraries it loads for a TPM) is missing, or openssl, as the keys' tests.
import Foundation
import Glibc
import LocalAuthentication
import LocalAuthTestSupport
import XCTest

final class RightKeyTPMTests: LiveTestCase {
    static let credentialName = "localauthd.key"
    static let identifier = "com.example.tpm-bound"
    private var tpm: SoftwareTPM!
    /// The credential store (install's /etc/credstore.encrypted).
    private var credstore: TemporaryDirectory!
    /// The running daemon's $CREDENTIALS_DIRECTORY.
    private var credentials: TemporaryDirectory?
    /// The daemon's key as the install made it, before it was sealed.
    private var daemonKey: [UInt8] = []

    private var credential: String { credstore.path + "/" + Self.credentialName }

    override func daemonOptions() throws -> DaemonProcess.Options {
        if let missing = SoftwareTPM.missing { throw XCTSkip("the TPM path's test needs swtpm and systemd-creds: \(missing)") }
        tpm = try SoftwareTPM()
        credstore = TemporaryDirectory(prefix: "localauth-credstore-")
        daemonKey = Self.randomKey()
        try seal(daemonKey, in: tpm, into: credential)
        var options = DaemonProcess.Options.forClients
        options.environment = ["CREDENTIALS_DIRECTORY": try unsealedCredentials()]
        return options
    }

    override func tearDown() {
        super.tearDown()
        tpm?.stop()
        // XCTest keeps every test case object to the end of the run: the directories go now.
        tpm = nil
        credentials = nil
        credstore = nil
    }

    func testARightsKeySealedUnderTheTPMsKeySignsAndStillSignsAfterTheChipAndTheDaemonRestart() async throws {
        _ = try openssl()
        let unsealed = try XCTUnwrap(credentials).path + "/" + Self.credentialName
        XCTAssertTrue(daemon.stderr.contains("sealed with the key from \(unsealed)."),
                      "the daemon took the unsealed credential; stderr:\n\(daemon.stderr.suffix(800))")
        XCTAssertFalse(FileManager.default.fileExists(atPath: daemon.stateDirectory + "/secrets.key"), "no key of its own")
        try prepareOwner()
        let right = try await authorizedRight(identifier: Self.identifier)
        let challenge = Data("nonce=5e0d9b; device=tpm".utf8)
        let signature = try await right.key.sign(challenge, algorithm: .ecdsaSignatureMessageX962SHA256)
        let exported = try await right.key.publicKey.exportBytes()
        try assertOpenSSLVerifies(signature, of: challenge, publicKey: exported)
        // At rest the right's key is a box that the TPM's key opens, as the daemon opens it.
        let sealed = try XCTUnwrap(SealedRightKey(stateDirectory: daemon.stateDirectory, uid: 0, identifier: Self.identifier))
        XCTAssertEqual(Data(sealed.publicKey), exported)
        let scalar = try XCTUnwrap(sealed.open(with: daemonKey), "the right's key is sealed under the key in the TPM")

        // A reboot: the chip starts again on its state, systemd unseals the credential again, the daemon starts.
        XCTAssertEqual(daemon.stop(), 0)
        try tpm.restart()
        daemon.environment["CREDENTIALS_DIRECTORY"] = try unsealedCredentials()
        try daemon.start()
        admin = try Admin(daemon.socketPath)
        let again = try await LARightStore.shared.right(forIdentifier: Self.identifier)
        try authorizeByAMatch(again)
        let later = Data("nonce=77a1c4; after the restart".utf8)
        let second = try await again.key.sign(later, algorithm: .ecdsaSignatureMessageX962SHA256)
        let exportedAgain = try await again.key.publicKey.exportBytes()
        XCTAssertEqual(exportedAgain, exported, "the same key pair")
        try assertOpenSSLVerifies(second, of: later, publicKey: exported)
        assertNoKeyInTheClear(["the daemon's key": daemonKey, "the right's private key": scalar])
    }

    func testOnAnotherTPMTheCredentialDoesNotUnsealAndTheRightsKeyDoesNotOpen() async throws {
        try prepareOwner()
        let right = try await authorizedRight(identifier: Self.identifier)
        _ = try await right.key.sign(Data("here".utf8), algorithm: .ecdsaSignatureMessageX962SHA256)
        let exported = try await right.key.publicKey.exportBytes()
        let sealed = try XCTUnwrap(SealedRightKey(stateDirectory: daemon.stateDirectory, uid: 0, identifier: Self.identifier))
        let scalar = try XCTUnwrap(sealed.open(with: daemonKey))
        XCTAssertEqual(daemon.stop(), 0)
        // What a stolen disk or backup holds: the state directory and the credential, no key in the clear.
        let keys = ["the daemon's key": daemonKey, "the right's private key": scalar]
        assertNoKeyInTheClear(keys)

        // On another machine, whose chip does not unseal the credential ...
        let other = try SoftwareTPM()
        let attempt = TemporaryDirectory(prefix: "localauth-credentials-", inMemory: true)
        let unsealed = try other.unseal(credential, name: Self.credentialName, to: attempt.path + "/" + Self.credentialName)
        XCTAssertNotEqual(unsealed.status, 0, "another TPM unsealed the credential")
        XCTAssertTrue(readBytes(attempt.path + "/" + Self.credentialName).isEmpty, "nothing unsealed")
        // ... the daemon without a credential (the embedded default makes STATE/secrets.key, a new key) ...
        daemon.environment["CREDENTIALS_DIRECTORY"] = ""
        try daemon.start()
        try await assertTheRightsKeyDoesNotOpen(publicKey: exported)
        XCTAssertEqual(readBytes(daemon.stateDirectory + "/secrets.key").count, 32)
        // ... and with that machine's own key (its install sealed one into its chip).
        XCTAssertEqual(daemon.stop(), 0)
        try seal(Self.randomKey(), in: other, into: credstore.path + "/other.cred")
        daemon.environment["CREDENTIALS_DIRECTORY"] = try unsealedCredentials(credstore.path + "/other.cred", from: other)
        try daemon.start()
        try await assertTheRightsKeyDoesNotOpen(publicKey: exported)
        assertNoKeyInTheClear(keys)
        other.stop()
    }

    /// On the running daemon: the saved right's public key is still given,
    /// an authorization still succeeds, and a signature is refused as a box
    /// that does not open is (decision 0002), the journal saying why.
    private func assertTheRightsKeyDoesNotOpen(publicKey exported: Data, file: StaticString = #filePath,
                                              line: UInt = #line) async throws {
        admin = try Admin(daemon.socketPath)
        let journalBefore = daemon.stderr.utf8.count
        let right = try await LARightStore.shared.right(forIdentifier: Self.identifier)
        let publicKey = try await right.key.publicKey.exportBytes()
        XCTAssertEqual(publicKey, exported, "the public key is at rest in the clear", file: file, line: line)
        try authorizeByAMatch(right)
        do {
            _ = try await right.key.sign(Data("elsewhere".utf8), algorithm: .ecdsaSignatureMessageX962SHA256)
            XCTFail("the right's key signed under another daemon key", file: file, line: line)
        } catch let error as LAError {
            XCTAssertEqual(error.code, .systemCancel, file: file, line: line)
            XCTAssertEqual(error.reason, "internal", "\(error)", file: file, line: line)
        }
        XCTAssertTrue(waitUntil { String(daemon.stderr.utf8.dropFirst(journalBefore))?.contains("does not open with the daemon's key") == true },
                      "the journal says why; stderr:\n\(daemon.stderr.suffix(800))", file: file, line: line)
    }

    /// 32 random bytes, as `head -c 32 /dev/urandom` in scripts/install.
    private static func randomKey() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// scripts/install's sealing: the plaintext key in a 0600 file, sealed
    /// as the credential `localauthd.key`, made 0400; the plaintext removed.
    private func seal(_ key: [UInt8], in chip: SoftwareTPM, into path: String) throws {
        let plaintext = credstore.path + "/secrets.key"
        guard FileManager.default.createFile(atPath: plaintext, contents: Data(key), attributes: [.posixPermissions: 0o600]) else {
            throw HarnessError("could not write \(plaintext)")
        }
        defer { unlink(plaintext) }
        try chip.seal(plaintext, name: Self.credentialName, into: path)
        chmod(path, 0o400)
    }

    /// What systemd does at each start of the unit: the credential unsealed
    /// into a fresh directory in memory, the file 0400; the directory's path.
    private func unsealedCredentials(_ path: String? = nil, from chip: SoftwareTPM? = nil) throws -> String {
        let directory = TemporaryDirectory(prefix: "localauth-credentials-", inMemory: true)
        let file = directory.path + "/" + Self.credentialName
        let result = try (chip ?? tpm).unseal(path ?? credential, name: Self.credentialName, to: file)
        guard result.status == 0 else { throw HarnessError("systemd-creds decrypt exited with \(result.status): \(result.stderr)") }
        chmod(file, 0o400)
        credentials = directory
        return directory.path
    }

    /// Neither key in the clear in any file of the state directory, nor in
    /// the daemon's output: raw, reversed (a BIGNUM's order), hex, base64.
    private func assertNoKeyInTheClear(_ keys: [String: [UInt8]], file: StaticString = #filePath, line: UInt = #line) {
        var places = [daemon.stderrPath, daemon.stdoutPath]
        if let names = FileManager.default.enumerator(atPath: daemon.stateDirectory) {
            for case let name as String in names { places.append(daemon.stateDirectory + "/" + name) }
        }
        XCTAssertTrue(places.contains { $0.hasSuffix("/rights") }, "the right store was scanned", file: file, line: line)
        for (name, key) in keys {
            let hex = key.map { String(format: "%02x", $0) }.joined()
            let forms: [(String, [UInt8])] = [
                ("raw", key), ("reversed", key.reversed()), ("hex", Array(hex.utf8)), ("HEX", Array(hex.uppercased().utf8)),
                ("base64", Array(Data(key).base64EncodedString().dropLast(2).utf8)),
            ]
            for place in places {
                guard let bytes = FileManager.default.contents(atPath: place).map({ [UInt8]($0) }) else { continue }
                for (form, pattern) in forms where bytes.contains(pattern) {
                    XCTFail("\(name) (\(form)) in the clear in \(place)", file: file, line: line)
                }
            }
        }
    }
}
