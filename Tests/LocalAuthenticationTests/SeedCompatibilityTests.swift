// The seed articles' helpers (SeedHelpers.swift) against a real daemon, in
// each state iOS code distinguishes: available, not enrolled, locked out, not
// supported, with the biometry type; the main-queue completion style, the
// async/await style, and the delegate-based manager.
import Foundation
import LocalAuthentication
import LocalAuthTestSupport
import XCTest

final class SeedCompatibilityTests: LiveTestCase {
    func testCheckersReportEveryStateWithTheBiometryType() throws {
        // Passcode not set: not one of the three states; the helpers say so their way.
        if case .error(let error) = BiometryHelper.check() {
            XCTAssertEqual((error as? LAError)?.code, .passcodeNotSet)
        } else { XCTFail("passcodeNotSet") }
        XCTAssertEqual(BiometricAuthManager.supportedType, .none)

        try prepareOwner(enroll: false)
        guard case .notEnrolled(.touchID) = BiometryHelper.check() else { return XCTFail("notEnrolled(touchID)") }
        guard case .notEnrolled(let error) = checkBiometrySupport() else { return XCTFail("notEnrolled") }
        XCTAssertEqual(error.code, .biometryNotEnrolled)
        XCTAssertTrue(isBiometryHardwareSupported())

        try admin.ok("enroll uid=0")
        guard case .available(.touchID) = BiometryHelper.check() else { return XCTFail("available(touchID)") }
        guard case .available(.touchID) = checkBiometrySupport() else { return XCTFail("available") }
        XCTAssertEqual(BiometricAuthManager.supportedType, .touchID)

        try lockOut()
        guard case .locked(.touchID) = BiometryHelper.check() else { return XCTFail("locked(touchID)") }
        guard case .locked(let lockout) = checkBiometrySupport() else { return XCTFail("locked") }
        XCTAssertEqual(lockout.code, .touchIDLockout)
        XCTAssertTrue(isBiometryHardwareSupported())
        XCTAssertEqual(BiometricAuthManager.supportedType, .none)

        // No daemon at all: "not supported", the documented graceful answer.
        XCTAssertEqual(daemon.stop(), 0)
        admin = nil
        guard case .notSupported = BiometryHelper.check() else { return XCTFail("notSupported") }
        guard case .notAvailable(let unavailable) = checkBiometrySupport() else { return XCTFail("notAvailable") }
        XCTAssertEqual(unavailable.code, .biometryNotAvailable)
        XCTAssertFalse(isBiometryHardwareSupported())
        daemon = nil
    }

    func testCompletionStyleRepliesOnTheMainQueue() throws {
        try prepareOwner()
        let handler = ScriptedHandler()
        LAContext.defaultPromptHandler = handler
        let done = expectation(description: "completion")
        let seen = ResultBox()
        BiometryHelper.authenticate(reason: "验证身份以快速登录") { success, error in
            seen.set(success, error, Thread.isMainThread)
            done.fulfill()
        }
        XCTAssertEqual(handler.nextPrompt(), "biometric")
        XCTAssertEqual(handler.biometricPrompts.first?.cancelTitle, "取消")
        try admin.ok("sensor uid=0 result=match")
        wait(for: [done], timeout: 20)
        XCTAssertEqual(seen.success, true)
        XCTAssertEqual(seen.onMain, true, "DispatchQueue.main.async ran on the main thread")

        let failed = expectation(description: "seed 002 completion")
        let message = ResultBox()
        BiometricAuthManager.authenticate(reason: "验证身份", allowFallback: false) { success, text, error in
            message.set(success, error, Thread.isMainThread, text)
            failed.fulfill()
        }
        for _ in 0..<3 {
            XCTAssertEqual(handler.nextPrompt(), "biometric")
            try admin.ok("sensor uid=0 result=nomatch")
        }
        wait(for: [failed], timeout: 20)
        XCTAssertEqual(message.success, false)
        XCTAssertEqual(message.text, "认证失败，请重试")
        XCTAssertEqual((message.error as? LAError)?.code, .authenticationFailed)
        XCTAssertEqual(message.error?.localizedDescription, "Application retry limit exceeded.")
    }

    func testAsyncStyleMapsOutcomes() async throws {
        try prepareOwner()
        let handler = ScriptedHandler()
        handler.chooseFallback = true
        LAContext.defaultPromptHandler = handler
        let admin = self.admin!
        Thread {
            _ = handler.nextPrompt()
            _ = try? admin.request("sensor uid=0 result=match")
            _ = handler.nextPrompt()
            _ = try? admin.request("sensor uid=0 result=nomatch")
        }.start()
        let unlocked = await unlockWithBiometrics(reason: "async")
        XCTAssertEqual(unlocked, .unlocked)
        let fallback = await unlockWithBiometrics(reason: "async")
        XCTAssertEqual(fallback, .fallback)
    }

    func testDelegateManagerHandlesEveryOutcome() throws {
        let delegate = RecordingDelegate()
        let manager = ZTBiometricManager()
        manager.resultDelegate = delegate
        manager.evokeBiometric()
        XCTAssertEqual(delegate.results, [.passcodeNotSet])

        try prepareOwner(enroll: false)
        let second = ZTBiometricManager()
        second.resultDelegate = delegate
        XCTAssertFalse(second.biometricAvaliable())
        second.evokeBiometric()
        XCTAssertEqual(delegate.results.last, .biometryNotEnrolled)

        try admin.ok("enroll uid=0")
        let handler = ScriptedHandler(passcodes: [nil, "1234"])
        LAContext.defaultPromptHandler = handler
        let third = ZTBiometricManager()
        third.resultDelegate = delegate
        XCTAssertTrue(third.biometricAvaliable())
        delegate.expect(self)
        third.evokeBiometric()
        XCTAssertEqual(handler.nextPrompt(), "biometric")
        try admin.ok("sensor uid=0 result=match")
        delegate.wait(self)
        XCTAssertEqual(delegate.results.last, .success)
        XCTAssertEqual(delegate.types.last, .touchID)

        // Cancelling the passcode prompt: userCancel through the delegate.
        try lockOut()
        let fourth = ZTBiometricManager()
        fourth.resultDelegate = delegate
        let policyTwo = LAContext()
        policyTwo.promptHandler = handler
        let box = ReplyBox()
        policyTwo.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "x", reply: box.reply)
        XCTAssertEqual(handler.nextPrompt(), "passcode")
        XCTAssertEqual(box.wait().error?.code, .userCancel)
        // Locked out: the manager's "key handling" starts a passcode evaluation,
        // and the right passcode lifts the lockout (S-4).
        fourth.evokeBiometric()
        XCTAssertEqual(handler.nextPrompt(), "passcode")
        XCTAssertTrue(try waitUntil(safetyNet: 15) { try admin.ok("status uid=0")["locked-out"] == "false" })
    }
}

final class FaceIDSeedTests: LiveTestCase {
    override class var configuration: String { "[Biometry]\nType=faceID\nPromptTimeoutSec=60\n" }

    func testFaceIDMachinesReportFaceID() throws {
        try prepareOwner(enroll: false)
        guard case .notEnrolled(.faceID) = BiometryHelper.check() else { return XCTFail("notEnrolled(faceID)") }
        try admin.ok("enroll uid=0")
        guard case .available(.faceID) = BiometryHelper.check() else { return XCTFail("available(faceID)") }
        XCTAssertEqual(BiometricAuthManager.supportedType, .faceID)
    }
}

final class NoSensorSeedTests: LiveTestCase {
    override class var configuration: String { "[Biometry]\nType=none\n" }

    func testMachinesWithoutASensorAreNotSupported() throws {
        try prepareOwner(enroll: false)
        guard case .notSupported = BiometryHelper.check() else { return XCTFail("notSupported") }
        XCTAssertFalse(isBiometryHardwareSupported())
        let context = LAContext()
        var error: NSError?
        XCTAssertTrue(context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error), "the passcode remains")
        XCTAssertEqual(context.biometryType, .none)
    }
}

final class RecordingDelegate: NSObject, ZTBiometricDelegate, @unchecked Sendable {
    private(set) var results: [ZTBiometricResult] = []
    private(set) var types: [ZTBiometricType] = []
    private var pending: XCTestExpectation?

    func handleBiometricResult(result: ZTBiometricResult, type: ZTBiometricType) {
        results.append(result)
        types.append(type)
        pending?.fulfill()
        pending = nil
    }

    func expect(_ test: XCTestCase) { pending = test.expectation(description: "delegate") }

    func wait(_ test: XCTestCase) {
        guard let pending else { return }
        test.wait(for: [pending], timeout: 20)
    }
}

final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var success: Bool?
    private(set) var error: (any Error)?
    private(set) var onMain: Bool?
    private(set) var text: String?

    func set(_ success: Bool, _ error: (any Error)?, _ onMain: Bool, _ text: String? = nil) {
        lock.withLock {
            self.success = success
            self.error = error
            self.onMain = onMain
            self.text = text
        }
    }
}
