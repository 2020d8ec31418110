// Runs the seed articles' verbatim code (Seed000..002.swift, Swift 5 mode)
// against a live daemon, as the articles' apps would: their checks follow
// the user's state, and their authentication calls succeed on a simulated
// match, with completions on the main queue as the articles expect.
//
// This target is built with -suppress-warnings: the verbatim code draws
// "switch must be exhaustive" for LABiometryType.opticID (as Apple's iOS 17
// SDK does); SeedVerbatimTests pins its diagnostics to exactly those.
import Foundation
import LocalAuthentication
import LocalAuthTestSupport
import XCTest

/// Signals each biometric prompt, so the test feeds the sensor only then.
final class PromptSignal: LAPromptHandler, @unchecked Sendable {
    private let arrived = DispatchSemaphore(value: 0)

    func showBiometricPrompt(_ prompt: LABiometricPrompt, session: any LAPromptSession) { arrived.signal() }
    func passcode(for prompt: LAPasscodePrompt, session: any LAPromptSession) async -> String? { nil }

    func waitForPrompt(file: StaticString = #filePath, line: UInt = #line) {
        if arrived.wait(timeout: .now() + 15) == .timedOut { XCTFail("no biometric prompt (safety net)", file: file, line: line) }
    }
}

final class SeedDelegate: NSObject, ZTBiometricDelegate {
    var results: [ZTBiometricResult] = []
    var done: XCTestExpectation?
    func handleBiometricResult(result: ZTBiometricResult, type: ZTBiometricType) {
        results.append(result)
        done?.fulfill()
    }
}

final class SeedRunTests: XCTestCase {
    var daemon: DaemonProcess!
    var admin: Admin!
    let prompts = PromptSignal()

    override func setUpWithError() throws {
        daemon = try DaemonProcess(options: .forClients)
        admin = try Admin(daemon.socketPath)
        LAContext.defaultPromptHandler = prompts
    }

    override func tearDown() {
        admin = nil
        if let daemon { XCTAssertEqual(daemon.stop(), 0) }
        daemon = nil
        LAContext.defaultPromptHandler = LATerminalPromptHandler()
        super.tearDown()
    }

    /// Feeds a match once the prompt is up (off the main thread, which waits).
    func matchWhenPrompted() {
        let (prompts, socket) = (self.prompts, daemon.socketPath)
        Thread.detachNewThread {
            prompts.waitForPrompt()
            _ = (try? Admin(socket))?.send("sensor uid=0 result=match")
        }
    }

    func testSeed000ChecksFollowTheUsersState() throws {
        guard case .unknown(let first) = checkBiometrySupport() else { return XCTFail("passcode not set") }
        XCTAssertEqual((first as? LAError)?.code, .passcodeNotSet)
        XCTAssertFalse(isBiometryHardwareSupported())
        _ = try admin.ok("set-passcode secret=1234")
        guard case .notEnrolled = checkBiometrySupport() else { return XCTFail("nothing enrolled") }
        XCTAssertTrue(isBiometryHardwareSupported(), "unenrolled counts as supported hardware")
        guard case .notEnrolled(.touchID) = BiometryHelper.check() else { return XCTFail("BiometryHelper: not enrolled") }
        _ = try admin.ok("enroll uid=0")
        guard case .available(.touchID) = checkBiometrySupport() else { return XCTFail("available") }
        guard case .available(.touchID) = BiometryHelper.check() else { return XCTFail("BiometryHelper: available") }
        XCTAssertEqual(getBiometryTypeName(), "Touch ID")
    }

    func testSeed000AuthenticatesOnAMatch() throws {
        _ = try admin.ok("set-passcode secret=1234")
        _ = try admin.ok("enroll uid=0")
        let done = expectation(description: "authenticateWithBiometrics")
        matchWhenPrompted()
        authenticateWithBiometrics(reason: "解锁") { success, error in
            XCTAssertTrue(success)
            XCTAssertNil(error)
            XCTAssertTrue(Thread.isMainThread, "the article's DispatchQueue.main.async")
            done.fulfill()
        }
        wait(for: [done], timeout: 20)

        let helper = expectation(description: "BiometryHelper.authenticate")
        matchWhenPrompted()
        BiometryHelper.authenticate(reason: "解锁") { success, _ in
            XCTAssertTrue(success)
            helper.fulfill()
        }
        wait(for: [helper], timeout: 20)
    }

    func testSeed001ManagerReportsToItsDelegate() throws {
        _ = try admin.ok("set-passcode secret=1234")
        _ = try admin.ok("enroll uid=0")
        let manager = ZTBiometricManager.shared
        XCTAssertTrue(manager.biometricAvaliable())
        XCTAssertEqual(manager.biometricType(), .touchID)
        let delegate = SeedDelegate()
        delegate.done = expectation(description: "delegate")
        manager.resultDelegate = delegate
        matchWhenPrompted()
        manager.evokeBiometric()
        wait(for: [delegate.done!], timeout: 20)
        guard case .success = delegate.results.first else { return XCTFail("\(delegate.results)") }
    }

    func testSeed002ManagerAuthenticatesAndExplainsErrors() throws {
        XCTAssertEqual(BiometricAuthManager.supportedType, .none)
        let refused = expectation(description: "refused")
        BiometricAuthManager.authenticate(reason: "登录", allowFallback: false) { success, message, _ in
            XCTAssertFalse(success)
            XCTAssertEqual(message, "设备未设置密码")
            refused.fulfill()
        }
        wait(for: [refused], timeout: 20)

        _ = try admin.ok("set-passcode secret=1234")
        _ = try admin.ok("enroll uid=0")
        XCTAssertEqual(BiometricAuthManager.supportedType, .touchID)
        let done = expectation(description: "authenticate")
        matchWhenPrompted()
        BiometricAuthManager.authenticate(reason: "登录") { success, message, error in
            XCTAssertTrue(success)
            XCTAssertEqual(message, "认证成功")
            XCTAssertNil(error)
            done.fulfill()
        }
        wait(for: [done], timeout: 20)
    }
}
