// S-43 against Debian's real fprintd with libfprint's virtual device on a
// private bus (FprintdStack): enrolled fingers become templates, a scan of
// the enrolled print matches, another print is a counted and durable
// failure (S-40), retries and unplugging behave as S-27 says, fprintd going
// and coming back is noticed without a daemon restart, and every way a
// prompt ends gives the device back. The tests run as root; the second
// user is nobody (65534).
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class FprintdBackendTests: XCTestCase {
    /// The print id the virtual device scans for root's enrolled finger, and another print.
    let enrolledPrint = "print-root", otherPrint = "print-other"

    func daemon(_ stack: FprintdStack, promptTimeout: Int = 60) throws -> DaemonProcess {
        try DaemonProcess(configuration: """
            [Biometry]
            Type=touchID
            Backend=fprintd
            FprintdBus=\(stack.bus)
            PromptTimeoutSec=\(promptTimeout)

            """)
    }

    /// A stack with root's right index finger enrolled, a daemon on it, and
    /// root's passcode 1234; returns once can-evaluate sees the finger.
    func ready(promptTimeout: Int = 60) throws -> (FprintdStack, DaemonProcess, Client, String) {
        let stack = try FprintdStack()
        try stack.enroll("root", finger: "right-index-finger", id: enrolledPrint)
        let daemon = try daemon(stack, promptTimeout: promptTimeout)
        let client = try daemon.connect()
        XCTAssertOK(try client.request("p set-passcode secret=1234"))
        let ctx = try newContext(client)
        try until("the daemon sees root's finger") {
            try client.request("c can-evaluate ctx=\(ctx) policy=biometrics").status == .ok
        }
        return (stack, daemon, client, ctx)
    }

    func newContext(_ client: Client) throws -> String {
        let reply = try client.request("n new")
        guard let ctx = reply["ctx"] else { throw HarnessError("no context: \(reply)") }
        return ctx
    }

    func status(_ client: Client, uid: UInt32 = 0) throws -> Response { try client.request("s status uid=\(uid)") }

    /// Starts an evaluation and reads its first PROMPT (sent once the reader verifies).
    func evaluate(_ client: Client, _ ctx: String, tag: String, policy: String = "biometrics") throws -> Response {
        try client.send("\(tag) evaluate ctx=\(ctx) policy=\(policy) reason=\"Unlock the vault\"")
        return try client.next(tag: tag)
    }

    func test_S43_enrolledFingerMatchesOtherIsCountedDurablyThreeMissesFailFiveLockOutPasscodeLifts() throws {
        let (stack, daemon, client, ctx) = try ready()
        XCTAssertEqual(try status(client)["enrolled"], "1")
        XCTAssertEqual(try status(client)["backend"], "fprintd")
        XCTAssertEqual(try status(client)["reader-present"], "true")
        XCTAssertEqual(try status(client)["reader"], "Virtual device for debugging")

        // The enrolled print matches.
        XCTAssertEqual(try evaluate(client, ctx, tag: "e1").status, .prompt)
        try stack.device("SCAN \(enrolledPrint)")
        let match = try client.next(tag: "e1")
        XCTAssertOK(match)
        XCTAssertEqual(match["method"], "biometric")

        // Another print: a counted failure, durable before its PROMPT (S-40):
        // the daemon killed right after it still counts it.
        let second = try newContext(client)
        XCTAssertEqual(try evaluate(client, second, tag: "e2").status, .prompt)
        try stack.device("SCAN \(otherPrint)")
        let again = try client.next(tag: "e2")
        XCTAssertEqual(again.status, .prompt)
        XCTAssertEqual(again["attempt"], "2")
        daemon.kill()
        try daemon.start()
        let fresh = try daemon.connect()
        XCTAssertEqual(try status(fresh)["biometric-failures"], "1")

        // Three misses end policy 1 with authenticationFailed.
        let third = try newContext(fresh)
        try until("the reader is back for the restarted daemon") {
            try fresh.request("c can-evaluate ctx=\(third) policy=biometrics").status == .ok
        }
        XCTAssertEqual(try evaluate(fresh, third, tag: "e3").status, .prompt)
        for attempt in 1...3 {
            try stack.device("SCAN \(otherPrint)")
            let reply = try fresh.next(tag: "e3")
            if attempt < 3 { XCTAssertEqual(reply.status, .prompt, "\(reply)") } else {
                XCTAssertLAError(reply, -1, "authenticationFailed")
            }
        }
        XCTAssertEqual(try status(fresh)["biometric-failures"], "4")

        // The fifth failure across evaluations locks biometry out (-8).
        let fourth = try newContext(fresh)
        XCTAssertEqual(try evaluate(fresh, fourth, tag: "e4").status, .prompt)
        try stack.device("SCAN \(otherPrint)")
        XCTAssertLAError(try fresh.next(tag: "e4"), -8, "biometryLockout")
        XCTAssertEqual(try status(fresh)["locked-out"], "true")
        // The passcode lifts it.
        let fifth = try newContext(fresh)
        let prompt = try evaluate(fresh, fifth, tag: "e5", policy: "owner")
        XCTAssertEqual(prompt["kind"], "passcode", "\(prompt)")
        XCTAssertOK(try fresh.request("w passcode ctx=\(fifth) secret=1234"))
        XCTAssertEqual(try fresh.next(tag: "e5")["method"], "passcode")
        XCTAssertEqual(try status(fresh)["locked-out"], "false")
        XCTAssertEqual(try status(fresh)["biometric-failures"], "0")
    }

    func test_S43_retryPromptsAgainWithAMessageAndCountsNothing_unplugIsMinus13ForPolicy1() throws {
        let (stack, daemon, client, ctx) = try ready()
        defer { withExtendedLifetime(daemon) {} }
        XCTAssertEqual(try evaluate(client, ctx, tag: "e1").status, .prompt)
        try stack.device("RETRY 1")
        let retry = try client.next(tag: "e1")
        XCTAssertEqual(retry.status, .prompt)
        XCTAssertEqual(retry["message"], "Swipe was too short; try again.")
        XCTAssertEqual(try status(client)["biometric-failures"], "0")
        // The verification kept running: the enrolled print still matches.
        // (After a retry fprintd does not raise finger-needed again.)
        try stack.device("SCAN \(enrolledPrint)", waitForFinger: false)
        XCTAssertOK(try client.next(tag: "e1"))

        let second = try newContext(client)
        XCTAssertEqual(try evaluate(client, second, tag: "e2").status, .prompt)
        try stack.device("UNPLUG", waitForFinger: false)
        XCTAssertLAError(try client.next(tag: "e2"), -13, "biometryDisconnected")
        XCTAssertEqual(try status(client)["biometric-failures"], "0")
    }

    func test_S43_unplugDuringPolicy2MovesToThePasscode() throws {
        let (stack, daemon, client, ctx) = try ready()
        defer { withExtendedLifetime(daemon) {} }
        XCTAssertEqual(try evaluate(client, ctx, tag: "e1", policy: "owner").status, .prompt)
        try stack.device("UNPLUG", waitForFinger: false)
        let passcode = try client.next(tag: "e1")
        XCTAssertEqual(passcode.status, .prompt)
        XCTAssertEqual(passcode["kind"], "passcode")
        XCTAssertOK(try client.request("w passcode ctx=\(ctx) secret=1234"))
        XCTAssertEqual(try client.next(tag: "e1")["method"], "passcode")
    }

    func test_S43_fprintdKilledIsBiometryNotAvailableAndRestartedIsAvailableWithoutADaemonRestart() throws {
        let (stack, daemon, client, ctx) = try ready()
        let pid = daemon.pid
        stack.killFprintd()
        var refusal: Response?
        try until("can-evaluate says the reader is gone") {
            let reply = try client.request("c can-evaluate ctx=\(ctx) policy=biometrics")
            refusal = reply
            return reply.errorCode == -6 && reply.message == "fprintd is not running."
        }
        XCTAssertLAError(refusal!, -6, "biometryNotAvailable")
        XCTAssertEqual(refusal?.message, "fprintd is not running.")
        XCTAssertEqual(try status(client)["reader-present"], "false")
        // Policy 2 still works with the passcode meanwhile.
        let prompt = try evaluate(client, ctx, tag: "e1", policy: "owner")
        XCTAssertEqual(prompt["kind"], "passcode")
        XCTAssertOK(try client.request("w passcode ctx=\(ctx) secret=1234"))
        XCTAssertOK(try client.next(tag: "e1"))

        try stack.startFprintd()
        let later = try newContext(client)
        try until("can-evaluate sees the reader again") {
            try client.request("c can-evaluate ctx=\(later) policy=biometrics").status == .ok
        }
        XCTAssertEqual(daemon.pid, pid, "the daemon was not restarted")
        XCTAssertEqual(try evaluate(client, later, tag: "e2").status, .prompt)
        try stack.device("SCAN \(enrolledPrint)")
        XCTAssertOK(try client.next(tag: "e2"))
    }

    func test_S43_enrollAndDeleteWithFprintdChangeTheDomainStateAndReplayAgrees() throws {
        let (stack, daemon, client, ctx) = try ready()
        let first = try client.request("c can-evaluate ctx=\(ctx) policy=biometrics")["domain-state"]
        XCTAssertNotNil(first)
        try stack.enroll("root", finger: "left-thumb", id: "print-thumb")
        var second: String?
        try until("the second finger changes the domain state") {
            second = try client.request("c can-evaluate ctx=\(ctx) policy=biometrics")["domain-state"]
            return second != nil && second != first
        }
        XCTAssertEqual(try status(client)["enrolled"], "2")
        try stack.delete("root")
        try until("deleting the fingers leaves none") {
            try client.request("c can-evaluate ctx=\(ctx) policy=biometrics").errorCode == -7
        }
        XCTAssertEqual(try status(client)["enrolled"], "0")
        XCTAssertEqual(daemon.stop(), 0)

        // The log names the fingers and fprintd; replay gives the same state.
        let ctl = try Binary.find("localauthctl")
        let log = try runToCompletion(ctl, ["log", "-D", daemon.stateDirectory, "-o", "json"])
        let changes = log.1.split(separator: "\n").filter { $0.contains("\"enrollment-changed\"") }
        XCTAssertEqual(changes.count, 3, log.1)
        XCTAssertTrue(changes.allSatisfy { $0.contains("\"by\":\"fprintd\"") }, "\(changes)")
        XCTAssertTrue(changes[1].contains("\"fingers\":[\"left-thumb\",\"right-index-finger\"]"), "\(changes)")
        let replay = try runToCompletion(ctl, ["replay", "-D", daemon.stateDirectory, "-o", "json"])
        XCTAssertEqual(replay.0, 0, replay.2)
        let state = try JSONSerialization.jsonObject(with: Data(replay.1.utf8)) as? [String: Any]
        let root = (state?["users"] as? [String: Any])?["0"] as? [String: Any]
        XCTAssertEqual(root?["templates"] as? Int, 0, replay.1)
        try daemon.start()
        XCTAssertEqual(try status(try daemon.connect())["enrolled"], "0")
    }

    func test_S43_twoUsersShareTheReaderInArrivalOrder() throws {
        let (stack, daemon, root, rootCtx) = try ready()
        try stack.enroll("nobody", finger: "right-index-finger", id: "print-nobody")
        XCTAssertOK(try root.request("p2 set-passcode uid=65534 secret=4321"))
        let nobody = try daemon.connect(asUID: 65534)
        let nobodyCtx = try newContext(nobody)
        try until("the daemon sees nobody's finger") {
            try nobody.request("c can-evaluate ctx=\(nobodyCtx) policy=biometrics").status == .ok
        }
        XCTAssertEqual(try evaluate(root, rootCtx, tag: "e1").status, .prompt)
        // nobody asks second: the reader is root's, so no PROMPT yet; a
        // reply sent after the evaluate comes first.
        try nobody.send("e2 evaluate ctx=\(nobodyCtx) policy=biometrics reason=\"Unlock the vault\"")
        XCTAssertOK(try nobody.request("s status"))
        XCTAssertFalse(nobody.pending.contains { $0.hasPrefix("e2 ") }, "\(nobody.pending)")
        try stack.device("SCAN \(enrolledPrint)")
        XCTAssertOK(try root.next(tag: "e1"))
        // Now nobody's scan starts, with its PROMPT, and its print matches.
        let nobodyPrompt = try nobody.next(tag: "e2")
        XCTAssertEqual(nobodyPrompt.status, .prompt, "\(nobodyPrompt) \(daemon.stderr)")
        try stack.device("SCAN print-nobody")
        XCTAssertOK(try nobody.next(tag: "e2"))
    }

    func test_S43_cancelInvalidateDisconnectTimeoutAndShutdownEachReleaseTheDevice() throws {
        let (stack, daemon, client, _) = try ready(promptTimeout: 2)
        let ends: [(String, (Client, String) throws -> Void)] = [
            ("cancel", { client, ctx in XCTAssertOK(try client.request("x cancel ctx=\(ctx)")) }),
            ("invalidate", { client, ctx in XCTAssertOK(try client.request("x invalidate ctx=\(ctx)")) }),
            ("disconnect", { client, _ in client.shutDown() }),
            ("timeout", { client, _ in XCTAssertLAError(try client.next(tag: "e"), -4, "systemCancel") }),
        ]
        _ = client
        for (name, end) in ends {
            let owner = try daemon.connect()
            let ctx = try newContext(owner)
            XCTAssertEqual(try evaluate(owner, ctx, tag: "e").status, .prompt, name)
            XCTAssertFalse(stack.claimSucceeds("root"), "\(name): the daemon holds the reader while it prompts")
            try end(owner, ctx)
            try until("\(name) releases the reader") { stack.claimSucceeds("root") }
        }
        // Shutdown (S-32) too: the prompt gets its final answer and the reader is free.
        let owner = try daemon.connect()
        let ctx = try newContext(owner)
        XCTAssertEqual(try evaluate(owner, ctx, tag: "e").status, .prompt)
        XCTAssertFalse(stack.claimSucceeds("root"), "shutdown: the daemon holds the reader while it prompts")
        XCTAssertEqual(daemon.stop(), 0)
        XCTAssertLAError(try owner.next(tag: "e"), -4, "systemCancel")
        try until("shutdown releases the reader") { stack.claimSucceeds("root") }
    }
}
