// LARightStore, LAPersistedRight and LASecret against a live daemon: a
// secret saved, authorized by a simulated match and read back; refused on an
// unauthorized right, after deauthorize, and for biometryCurrentSet after an
// enroll; never on disk or in the daemon's output in the clear; and still
// opened by a restarted daemon with the same key. (Another uid's refusal and
// an invalidated context's are wire-level: RightTests in the integration
// tests, since this process speaks as one uid.)
import Foundation
import LocalAuthentication
import LocalAuthTestSupport
import XCTest

final class RightStoreTests: LiveTestCase {
    static let secret = Data("s3cr3t-R1ght-Payload-\u{e9}".utf8)

    /// Authorizes `right` (the completion form) while the admin feeds
    /// `readings` to its biometric prompts; the error, or nil.
    func authorize(_ right: LARight, readings: [String] = ["match"]) throws -> (any Error)? {
        let handler = ScriptedHandler()
        right.promptHandler = handler
        let box = ReplyBox()
        let reply = box.reply
        right.authorize(localizedReason: "sign in") { error in reply(error == nil, error) }
        for reading in readings {
            XCTAssertEqual(handler.nextPrompt(), "biometric")
            try admin.ok("sensor uid=0 result=\(reading)")
        }
        return box.wait().nsError
    }

    func testASavedSecretIsReadBackAfterAnAuthorization() async throws {
        try prepareOwner()
        let saved = try await LARightStore.shared.saveRight(LARight(requirement: .biometry), identifier: "com.example.login",
                                                            secret: Self.secret)
        XCTAssertEqual(saved.state, .unknown)
        do {
            _ = try await saved.secret.loadData()
            XCTFail("released before any authorization")
        } catch let error as LAError {
            XCTAssertEqual(error.reason, "not-authorized")
        }
        let failure = try authorize(saved)
        XCTAssertNil(failure)
        XCTAssertEqual(saved.state, .authorized)
        let data = try await saved.secret.rawData
        XCTAssertEqual(data, Self.secret)

        // Another instance of the same right has its own context: not authorized there.
        let fetched = try await LARightStore.shared.right(forIdentifier: "com.example.login")
        do {
            _ = try await fetched.secret.loadData()
            XCTFail("released to an unauthorized right")
        } catch let error as LAError {
            XCTAssertEqual(error.reason, "not-authorized")
        }

        await saved.deauthorize()
        XCTAssertEqual(saved.state, .unknown)
        do {
            _ = try await saved.secret.loadData()
            XCTFail("released after deauthorize")
        } catch let error as LAError {
            XCTAssertEqual(error.reason, "not-authorized")
        }

        try await LARightStore.shared.removeRight(fetched)
        do {
            _ = try await LARightStore.shared.right(forIdentifier: "com.example.login")
            XCTFail("removed right still there")
        } catch let error as LAError {
            XCTAssertEqual(error.reason, "unknown-right")
        }
    }

    func testAFailedAuthorizationLeavesTheRightNotAuthorized() async throws {
        try prepareOwner()
        let right = try await LARightStore.shared.saveRight(LARight(requirement: .biometry), identifier: "fail", secret: Self.secret)
        let error = try authorize(right, readings: ["nomatch", "nomatch", "nomatch"])
        XCTAssertEqual((error as? LAError)?.code, .authenticationFailed)
        XCTAssertEqual(right.state, .notAuthorized)
        do {
            _ = try await right.secret.loadData()
            XCTFail("released after a failed authorization")
        } catch {}
        try await LARightStore.shared.removeAllRights()
    }

    func testBiometryCurrentSetStopsReleasingAfterAnEnroll() async throws {
        try prepareOwner()
        let right = try await LARightStore.shared.saveRight(LARight(requirement: .biometryCurrentSet), identifier: "current",
                                                            secret: Self.secret)
        let authorized = try authorize(right)
        XCTAssertNil(authorized)
        let before = try await right.secret.loadData()
        XCTAssertEqual(before, Self.secret)
        try admin.ok("enroll uid=0 template=left-thumb")
        do {
            _ = try await right.secret.loadData()
            XCTFail("a biometry-current-set secret released after an enroll")
        } catch let error as LAError {
            XCTAssertEqual(error.reason, "not-authorized")
        }
        // A plain biometry right saved alongside is not affected by the enroll.
        let plain = try await LARightStore.shared.saveRight(LARight(requirement: .biometry(fallback: .devicePasscode)),
                                                            identifier: "plain", secret: Self.secret)
        XCTAssertNil(try authorize(plain))
        try admin.ok("unenroll uid=0 template=left-thumb")
        let after = try await plain.secret.loadData()
        XCTAssertEqual(after, Self.secret)
        try await LARightStore.shared.removeAllRights()
    }

    func testTheSecretNeverRestsInTheClearAndSurvivesARestart() async throws {
        try prepareOwner()
        _ = try await LARightStore.shared.saveRight(LARight(), identifier: "durable", secret: Self.secret)
        XCTAssertEqual(daemon.stop(), 0)
        try daemon.start()
        admin = try Admin(daemon.socketPath)

        let right = try await LARightStore.shared.right(forIdentifier: "durable")
        let authorized = try authorize(right)
        XCTAssertNil(authorized, "the default requirement starts with biometry")
        let data = try await right.secret.loadData()
        XCTAssertEqual(data, Self.secret, "the restarted daemon opens it with its key")

        let keyMode = try FileManager.default.attributesOfItem(atPath: daemon.stateDirectory + "/secrets.key")[.posixPermissions]
        XCTAssertEqual(keyMode as? Int, 0o600)
        let storeMode = try FileManager.default.attributesOfItem(atPath: daemon.stateDirectory + "/rights")[.posixPermissions]
        XCTAssertEqual(storeMode as? Int, 0o600)
        var places = [daemon.directory.path + "/stderr", daemon.directory.path + "/stdout"]
        if let files = FileManager.default.enumerator(atPath: daemon.stateDirectory) {
            for case let name as String in files { places.append(daemon.stateDirectory + "/" + name) }
        }
        let patterns: [(String, [UInt8])] = [
            ("plain", [UInt8](Self.secret)),
            ("hex", Array(Self.secret.map { String(format: "%02x", $0) }.joined().utf8)),
            ("base64", Array(Self.secret.base64EncodedString().dropLast(2).utf8)),
        ]
        for place in places {
            guard let bytes = FileManager.default.contents(atPath: place).map({ [UInt8]($0) }) else { continue }
            for (name, pattern) in patterns {
                XCTAssertFalse(bytes.contains(pattern), "the secret (\(name)) in \(place)")
            }
        }
        XCTAssertTrue(places.contains { $0.hasSuffix("/rights") }, "the store was scanned")
        try await LARightStore.shared.removeAllRights()
    }

    func testAPlainRightAuthorizesByItsPolicy() async throws {
        try prepareOwner()
        let right = LARight()
        XCTAssertEqual(right.state, .unknown)
        try await right.checkCanAuthorize()
        right.tag = 7
        XCTAssertEqual(right.tag, 7)
        let authorized = try authorize(right)
        XCTAssertNil(authorized)
        XCTAssertEqual(right.state, .authorized)
        await right.deauthorize()
        XCTAssertEqual(right.state, .unknown)
        try admin.ok("unenroll uid=0")
        do {
            try await LARight(requirement: .biometry).checkCanAuthorize()
            XCTFail("nothing enrolled")
        } catch let error as LAError {
            XCTAssertEqual(error.code, .biometryNotEnrolled)
        }
    }
}
