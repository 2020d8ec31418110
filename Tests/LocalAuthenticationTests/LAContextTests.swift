// LAContext against a real daemon: canEvaluate in each user state, every way
// an evaluation ends, properties reaching the daemon, the prompt handler
// contract, and the unreachable and vanished daemon.
import Foundation
import Glibc
import LocalAuthentication
import LocalAuthTestSupport
import XCTest

class LiveTestCase: XCTestCase {
    var daemon: DaemonProcess!
    var admin: Admin!

    /// The daemon's configuration for this class.
    class var configuration: String { "[Biometry]\nType=touchID\nPromptTimeoutSec=60\n" }

    /// How this class runs its daemon (a class may hand it a key, as systemd would).
    func daemonOptions() throws -> DaemonProcess.Options { .forClients }

    override func setUpWithError() throws {
        daemon = try DaemonProcess(configuration: Self.configuration, options: try daemonOptions())
        admin = try Admin(daemon.socketPath)
        LAContext.defaultPromptHandler = nil
    }

    override func tearDown() {
        admin = nil
        if let daemon { XCTAssertEqual(daemon.stop(), 0, "clean stop; stderr:\n\(daemon.stderr.suffix(800))") }
        daemon = nil
        LAContext.defaultPromptHandler = LATerminalPromptHandler()
        super.tearDown()
    }

    /// Passcode 1234 and one template for uid 0.
    func prepareOwner(enroll: Bool = true) throws {
        try admin.ok("set-passcode secret=1234")
        if enroll { try admin.ok("enroll uid=0 template=right-index") }
    }

    /// Brings uid 0 to biometric lockout (5 failures, over two evaluations).
    func lockOut() throws {
        for misses in [3, 2] {
            let context = LAContext()
            let handler = ScriptedHandler()
            context.promptHandler = handler
            let box = ReplyBox()
            context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "lock out", reply: box.reply)
            for _ in 0..<misses {
                XCTAssertEqual(handler.nextPrompt(), "biometric")
                try admin.ok("sensor uid=0 result=nomatch")
            }
            let result = box.wait()
            XCTAssertEqual(result.error?.code, misses == 3 ? .authenticationFailed : .biometryLockout)
        }
    }
}

final class LAContextTests: LiveTestCase {
    func testCanEvaluateFollowsTheUsersStateAndSetsBiometryType() throws {
        let context = LAContext()
        XCTAssertEqual(context.biometryType, .none, "S-17: none until canEvaluate")
        var error: NSError?
        XCTAssertFalse(context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
        XCTAssertEqual(error?.code, LAError.passcodeNotSet.rawValue)
        XCTAssertEqual(error?.domain, LAErrorDomain)
        XCTAssertEqual(context.biometryType, .touchID, "S-17: set after any canEvaluate")

        try prepareOwner(enroll: false)
        XCTAssertFalse(context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
        XCTAssertEqual((error as? LAError)?.code, .biometryNotEnrolled)
        XCTAssertTrue(context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error))
        XCTAssertNil(error)
        XCTAssertNil(context.evaluatedPolicyDomainState)

        let token = try admin.ok("enroll uid=0")["domain-state"]
        XCTAssertTrue(context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
        XCTAssertEqual(context.evaluatedPolicyDomainState?.map { String(format: "%02x", $0) }.joined(), token)
        XCTAssertGreaterThanOrEqual(context.evaluatedPolicyDomainState?.count ?? 0, 16)

        XCTAssertFalse(context.canEvaluatePolicy(.deviceOwnerAuthenticationWithCompanion, error: &error))
        XCTAssertEqual((error as? LAError)?.code, .companionNotAvailable)
        XCTAssertTrue(context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometricsOrCompanion, error: &error))
        XCTAssertNotNil(context.evaluatedPolicyDomainState)

        // Apple: non-nil only after a check that succeeds for a biometric
        // policy; a failed one leaves nil, not the token of an earlier check.
        try admin.ok("unenroll uid=0")
        XCTAssertFalse(context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
        XCTAssertEqual((error as? LAError)?.code, .biometryNotEnrolled)
        XCTAssertNil(context.evaluatedPolicyDomainState)
    }

    func testBiometricMatchSucceedsOnceOnAPrivateQueue() throws {
        try prepareOwner()
        let context = LAContext()
        let handler = ScriptedHandler()
        context.promptHandler = handler
        let box = ReplyBox()
        context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "unlock your notes", reply: box.reply)
        XCTAssertEqual(handler.nextPrompt(), "biometric")
        XCTAssertEqual(handler.biometricPrompts.first?.attempt, 1)
        XCTAssertEqual(handler.biometricPrompts.first?.localizedReason, "unlock your notes")
        XCTAssertNil(handler.biometricPrompts.first?.fallbackTitle, "S-27: no fallback on the first prompt")
        try admin.ok("sensor uid=0 result=match")
        let result = box.wait()
        XCTAssertTrue(result.success)
        XCTAssertNil(result.error)
        XCTAssertFalse(result.onMain, "never the caller's (main) thread")
        XCTAssertNotNil(context.evaluatedPolicyDomainState)
        // A cached success (S-23) needs no prompt.
        let again = ReplyBox()
        context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "again", reply: again.reply)
        XCTAssertTrue(again.wait().success)
        XCTAssertEqual(box.count, 1, "exactly one reply")
    }

    func testMissesOfferTheFallbackAndChoosingItRepliesUserFallback() throws {
        try prepareOwner()
        let context = LAContext()
        context.localizedFallbackTitle = "Use Password"
        context.localizedCancelTitle = "Abort"
        let handler = ScriptedHandler()
        handler.chooseFallback = true
        context.promptHandler = handler
        let box = ReplyBox()
        context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "pay", reply: box.reply)
        XCTAssertEqual(handler.nextPrompt(), "biometric")
        try admin.ok("sensor uid=0 result=nomatch")
        XCTAssertEqual(handler.nextPrompt(), "biometric")
        let result = box.wait()
        XCTAssertEqual(result.error?.code, .userFallback)
        XCTAssertEqual(handler.biometricPrompts.last?.fallbackTitle, "Use Password", "set reached the daemon")
        XCTAssertEqual(handler.biometricPrompts.last?.cancelTitle, "Abort")
        XCTAssertEqual(handler.biometricPrompts.last?.attempt, 2)
    }

    func testAnEmptyFallbackTitleHidesTheFallback() throws {
        try prepareOwner()
        let context = LAContext()
        context.localizedFallbackTitle = ""
        let handler = ScriptedHandler()
        context.promptHandler = handler
        let box = ReplyBox()
        context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "pay", reply: box.reply)
        for _ in 0..<3 {
            XCTAssertEqual(handler.nextPrompt(), "biometric")
            try admin.ok("sensor uid=0 result=nomatch")
        }
        let result = box.wait()
        XCTAssertEqual(result.error?.code, .authenticationFailed)
        XCTAssertEqual(result.error?.localizedDescription, "Application retry limit exceeded.", "the daemon's message")
        XCTAssertTrue(handler.biometricPrompts.allSatisfy { $0.fallbackTitle == nil })
    }

    func testOwnerPolicyFallsBackToThePasscodeFromTheHandler() throws {
        try prepareOwner()
        let context = LAContext()
        let handler = ScriptedHandler(passcodes: ["0000", "1234"])
        context.promptHandler = handler
        let box = ReplyBox()
        context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "unlock", reply: box.reply)
        for _ in 0..<3 {
            XCTAssertEqual(handler.nextPrompt(), "biometric")
            try admin.ok("sensor uid=0 result=nomatch")
        }
        XCTAssertEqual(handler.nextPrompt(), "passcode")
        XCTAssertEqual(handler.nextPrompt(), "passcode", "a wrong passcode prompts again")
        let result = box.wait()
        XCTAssertTrue(result.success, "\(String(describing: result.error))")
        XCTAssertEqual(handler.passcodePrompts.first?.attemptsLeft, 6)
        XCTAssertEqual(handler.passcodePrompts.last?.attemptsLeft, 5)
        XCTAssertNotNil(handler.passcodePrompts.last?.message)
        XCTAssertEqual(try admin.ok("status uid=0")["passcode-failures"], "0", "S-4")
    }

    func testAPasscodePromptNobodyCanAnswerEndsAtOnceWithNotInteractive() throws {
        try prepareOwner(enroll: false)
        for handler in [nil, LATerminalPromptHandler(path: "/nonexistent/tty")] as [LATerminalPromptHandler?] {
            let context = LAContext()
            context.promptHandler = handler  // nil: and no process-wide handler either
            let box = ReplyBox()
            context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "unlock", reply: box.reply)
            let result = box.wait()
            XCTAssertFalse(result.success)
            XCTAssertEqual(result.error?.code, .notInteractive)
            XCTAssertEqual(result.error?.reason, "no-prompt-handler")
        }
        XCTAssertEqual(try admin.ok("status uid=0")["passcode-failures"], "0", "nothing was counted")
    }

    func testAHandlerThatReturnsNilCancels() throws {
        try prepareOwner(enroll: false)
        let context = LAContext()
        let handler = ScriptedHandler(passcodes: [nil])
        LAContext.defaultPromptHandler = handler  // the process-wide handler
        let box = ReplyBox()
        context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "unlock", reply: box.reply)
        XCTAssertEqual(handler.nextPrompt(), "passcode")
        XCTAssertEqual(box.wait().error?.code, .userCancel)
    }

    func testInvalidateEndsTheEvaluationWithAppCancelThenInvalidContext() throws {
        try prepareOwner()
        let context = LAContext()
        let handler = ScriptedHandler()
        context.promptHandler = handler
        let box = ReplyBox()
        context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "x", reply: box.reply)
        XCTAssertEqual(handler.nextPrompt(), "biometric")
        context.invalidate()
        context.invalidate()
        XCTAssertEqual(box.wait().error?.code, .appCancel)
        var error: NSError?
        XCTAssertFalse(context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error))
        XCTAssertEqual(error?.code, LAError.invalidContext.rawValue)
        // Invalidated before first use: no connection needed to know.
        let unused = LAContext()
        unused.invalidate()
        XCTAssertFalse(unused.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error))
        XCTAssertEqual(error?.code, LAError.invalidContext.rawValue)
    }

    /// invalidate() racing a context's first call (which connects and makes
    /// the context): whichever wins, every call after invalidate() returned
    /// answers invalidContext (S-13). Found by an audit: 33 of 200 such
    /// contexts stayed usable.
    func testInvalidateRacingTheFirstCallAlwaysWins() throws {
        try prepareOwner()
        for round in 0..<150 {
            // LAContext is not Sendable (as Apple's); its methods are thread-safe.
            nonisolated(unsafe) let context = LAContext()
            let first = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                var ignored: NSError?
                _ = context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &ignored)
                first.signal()
            }
            usleep(useconds_t(round % 15 * 60))  // 0..840 us: before, during and after the connect
            context.invalidate()
            first.wait()
            var error: NSError?
            XCTAssertFalse(context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error), "round \(round)")
            XCTAssertEqual(error?.code, LAError.invalidContext.rawValue, "round \(round)")
        }
    }

    func testInteractionNotAllowedRepliesNotInteractive() throws {
        try prepareOwner()
        let context = LAContext()
        context.interactionNotAllowed = true
        let box = ReplyBox()
        context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "x", reply: box.reply)
        XCTAssertEqual(box.wait().error?.code, .notInteractive)
    }

    func testReuseDurationReachesTheDaemon() throws {
        try prepareOwner()
        try admin.ok("unlocked uid=0")
        let context = LAContext()
        context.touchIDAuthenticationAllowableReuseDuration = LATouchIDAuthenticationMaximumAllowableReuseDuration
        let box = ReplyBox()
        context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "x", reply: box.reply)
        XCTAssertTrue(box.wait().success, "S-24: within the reuse window, no prompt")
    }

    func testAsyncVariantReturnsTrueOrThrowsTheLAError() async throws {
        try prepareOwner()
        let handler = ScriptedHandler()
        let context = LAContext()
        context.promptHandler = handler
        let admin = self.admin!
        let feeder = Thread {
            _ = handler.nextPrompt()
            _ = try? admin.request("sensor uid=0 result=match")
        }
        feeder.start()
        let success = try await context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "async")
        XCTAssertTrue(success)

        let second = LAContext()
        second.interactionNotAllowed = true
        do {
            _ = try await second.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "async")
            XCTFail("must throw")
        } catch LAError.notInteractive {
        } catch {
            XCTFail("unexpected \(error)")
        }
    }

    func testLockoutIsReportedWithTheDeprecatedNameToo() throws {
        try prepareOwner()
        try lockOut()
        var error: NSError?
        let context = LAContext()
        XCTAssertFalse(context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
        switch (error as? LAError)?.code {
        case .touchIDLockout?: break
        default: XCTFail("\(String(describing: error))")
        }
        XCTAssertTrue(context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error), "the passcode remains")
    }

    func testADaemonThatGoesAwayEndsTheEvaluationAndInvalidatesTheContext() throws {
        try prepareOwner()
        let context = LAContext()
        let handler = ScriptedHandler()
        context.promptHandler = handler
        let box = ReplyBox()
        context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "x", reply: box.reply)
        XCTAssertEqual(handler.nextPrompt(), "biometric")
        admin = nil
        XCTAssertEqual(daemon.stop(), 0)
        XCTAssertEqual(box.wait().error?.code, .systemCancel, "S-32")
        var error: NSError?
        XCTAssertFalse(context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error))
        XCTAssertEqual(error?.code, LAError.invalidContext.rawValue)
        // A new context finds no daemon: biometryNotAvailable, never a hang.
        let fresh = LAContext()
        XCTAssertFalse(fresh.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error))
        XCTAssertEqual(error?.code, LAError.biometryNotAvailable.rawValue)
        XCTAssertEqual((error as? LAError)?.reason, "daemon-unreachable")
        XCTAssertTrue(error?.localizedDescription.contains(daemon.socketPath) ?? false, "\(String(describing: error))")
        XCTAssertEqual(fresh.biometryType, .none)
        let reply = ReplyBox()
        fresh.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "x", reply: reply.reply)
        XCTAssertEqual(reply.wait().error?.code, .biometryNotAvailable)
        daemon = nil
    }
}
