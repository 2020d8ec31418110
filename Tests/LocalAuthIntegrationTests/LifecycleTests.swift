// Durability across a crash (S-40, S-15) and a clean stop (S-32).
import Glibc
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class LifecycleTests: IntegrationTestCase {
    func testFailuresSurviveSIGKILLAndContextsOfThePreviousRunAreUnknown() throws {
        let daemon = try startDaemon()
        var client = try daemon.connect()
        let token = try prepareOwner(client)
        let ctx = try newContext(client)
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e1"), attempt: 1, fallback: nil)
        for _ in 0..<3 { try sensor(client, "nomatch") }
        _ = try client.next(tag: "e1")
        _ = try client.next(tag: "e1")
        XCTAssertLAError(try client.next(tag: "e1"), -1, "authenticationFailed")

        // S-40: the failures were durable before their outcome was sent.
        daemon.kill()
        XCTAssertEqual(try client.readUntilEOF(), [], "the killed daemon's connection just ends")
        try daemon.start()
        client = try daemon.connect()
        let status = try client.request("s1 status")
        XCTAssertOK(status)
        XCTAssertEqual(status["biometric-failures"], "3")
        XCTAssertEqual(status["passcode-set"], "true")
        XCTAssertEqual(status["enrolled"], "1")
        XCTAssertEqual(status["contexts"], "0", "S-15: the previous run's contexts are invalidated")
        XCTAssertProtocolError(try client.request("g get ctx=\(ctx)"), "unknown-context")
        XCTAssertProtocolError(try client.request("s2 sensor uid=0 result=nomatch"), "bad-state",
                               "no prompt survived the crash")

        // S-10: the domain state is the same across restarts.
        let fresh = try newContext(client)
        let check = try client.request("c can-evaluate ctx=\(fresh) policy=biometrics")
        XCTAssertOK(check)
        XCTAssertEqual(check["domain-state"], token)

        // Two more failures after the restart reach the lockout: the count went on.
        assertBiometricPrompt(try evaluate(client, ctx: fresh, policy: "biometrics", tag: "e2"), attempt: 1, fallback: nil)
        try sensor(client, "nomatch")
        _ = try client.next(tag: "e2")
        try sensor(client, "nomatch")
        XCTAssertLAError(try client.next(tag: "e2"), -8, "biometryLockout")
    }

    func testStateSurvivesACleanRestart() throws {
        let daemon = try startDaemon()
        var client = try daemon.connect()
        let token = try prepareOwner(client)
        let ctx = try newContext(client)
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "owner", tag: "e1"), attempt: 1, fallback: nil)
        try sensor(client, "nomatch")
        _ = try client.next(tag: "e1")
        XCTAssertOK(try client.request("f fallback ctx=\(ctx)"))
        assertPasscodePrompt(try client.next(tag: "e1"), attemptsLeft: 6)
        XCTAssertOK(try client.request("w passcode ctx=\(ctx) secret=0000"))
        assertPasscodePrompt(try client.next(tag: "e1"), attemptsLeft: 5)
        XCTAssertOK(try client.request("c cancel ctx=\(ctx)"))
        XCTAssertLAError(try client.next(tag: "e1"), -2, "userCancel")
        client.shutDown()

        try daemon.restart()
        client = try daemon.connect()
        let status = try client.request("s status")
        XCTAssertEqual(status["biometric-failures"], "1")
        XCTAssertEqual(status["passcode-failures"], "1")
        let fresh = try newContext(client)
        XCTAssertEqual(try client.request("c2 can-evaluate ctx=\(fresh) policy=biometrics")["domain-state"], token)
        // The passcode store survived too: the right passcode still works.
        assertBiometricPrompt(try evaluate(client, ctx: fresh, policy: "owner", tag: "e2"), attempt: 1, fallback: nil)
        try sensor(client, "nomatch")
        _ = try client.next(tag: "e2")
        XCTAssertOK(try client.request("f2 fallback ctx=\(fresh)"))
        assertPasscodePrompt(try client.next(tag: "e2"), attemptsLeft: 5)
        XCTAssertOK(try client.request("r passcode ctx=\(fresh) secret=1234"))
        XCTAssertEqual(try client.next(tag: "e2")["method"], "passcode")
    }

    func testSIGTERMEndsWaitingEvaluationsWithSystemCancelThenByeAndExitsZero() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        let idle = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e1"), attempt: 1, fallback: nil)
        XCTAssertOK(try idle.request("p ping"))

        let code = daemon.signalAndWait(SIGTERM)
        XCTAssertEqual(code, 0, "clean stop; stderr:\n\(daemon.stderr)")

        let lines = try client.readUntilEOF()
        XCTAssertEqual(lines.count, 2, "\(lines)")
        guard lines.count == 2 else { return }
        let ended = try Client.parse(lines[0])
        XCTAssertEqual(ended.tag, "e1")
        XCTAssertLAError(ended, -4, "systemCancel")
        XCTAssertEqual(ended["reason"], "shutdown")
        let bye = try Client.parse(lines[1])
        XCTAssertEqual(bye.tag, "*")
        XCTAssertEqual(bye.status, .bye)
        XCTAssertEqual(bye["reason"], "shutdown")

        let idleLines = try idle.readUntilEOF()
        XCTAssertEqual(idleLines, ["* BYE reason=shutdown"])
    }
}
