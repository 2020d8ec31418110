// evaluate and its prompts' answers (S-21..S-33), over the socket.
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class EvaluateTests: IntegrationTestCase {
    func testEvaluateWithoutOrWithEmptyReasonIsBadArgument() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        XCTAssertProtocolError(try client.request("e1 evaluate ctx=\(ctx) policy=biometrics"), "bad-argument")
        XCTAssertProtocolError(try client.request("e2 evaluate ctx=\(ctx) policy=owner reason=\"\""), "bad-argument")
        XCTAssertProtocolError(try client.request("e3 evaluate ctx=\(ctx) policy=wrist reason=x"), "bad-argument")
        // Nothing started: the context is free for a real evaluation.
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e4"), attempt: 1, fallback: nil)
        XCTAssertOK(try client.request("x cancel ctx=\(ctx)"))
        XCTAssertLAError(try client.next(tag: "e4"), -2, "userCancel")
    }

    func testFallbackOnBiometricsPolicyEndsWithUserFallback() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e1"), attempt: 1, fallback: nil)
        XCTAssertProtocolError(try client.request("f1 fallback ctx=\(ctx)"), "bad-state",
                               "S-27: fallback is never offered on the first prompt")
        try sensor(client, "nomatch")
        assertBiometricPrompt(try client.next(tag: "e1"), attempt: 2, fallback: "Enter Password")
        XCTAssertOK(try client.request("f2 fallback ctx=\(ctx)"))
        XCTAssertLAError(try client.next(tag: "e1"), -3, "userFallback")
        XCTAssertProtocolError(try client.request("f3 fallback ctx=\(ctx)"), "bad-state")
    }

    func testEmptyFallbackTitleHidesTheFallbackOption() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        XCTAssertOK(try client.request("s set ctx=\(ctx) fallback-title=\"\" cancel-title=Abort"))
        let first = try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e1")
        XCTAssertEqual(first["cancel"], "Abort")
        try sensor(client, "nomatch")
        let second = try client.next(tag: "e1")
        XCTAssertEqual(second["attempt"], "2")
        XCTAssertNil(second["fallback"], "\(second)")
        XCTAssertProtocolError(try client.request("f fallback ctx=\(ctx)"), "bad-state")
        XCTAssertOK(try client.request("c cancel ctx=\(ctx)"))
        XCTAssertLAError(try client.next(tag: "e1"), -2, "userCancel")
    }

    func testCancelEndsTheEvaluationWithUserCancel() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "owner", tag: "e1"), attempt: 1, fallback: nil)
        XCTAssertOK(try client.request("c1 cancel ctx=\(ctx)"))
        XCTAssertLAError(try client.next(tag: "e1"), -2, "userCancel")
        XCTAssertProtocolError(try client.request("c2 cancel ctx=\(ctx)"), "bad-state", "nothing left to cancel")
        // Cancel at the passcode prompt too (S-29: at any prompt).
        XCTAssertOK(try client.request("r reset uid=0"))
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "owner", tag: "e2"), attempt: 1, fallback: nil)
        try sensor(client, "nomatch")
        _ = try client.next(tag: "e2")
        XCTAssertOK(try client.request("f fallback ctx=\(ctx)"))
        assertPasscodePrompt(try client.next(tag: "e2"), attemptsLeft: 6)
        XCTAssertOK(try client.request("c3 cancel ctx=\(ctx)"))
        XCTAssertLAError(try client.next(tag: "e2"), -2, "userCancel")
    }

    func testInvalidateDuringEvaluationIsAppCancelThenInvalidContext() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e1"), attempt: 1, fallback: nil)
        XCTAssertOK(try client.request("i1 invalidate ctx=\(ctx)"))
        XCTAssertLAError(try client.next(tag: "e1"), -9, "appCancel")
        let check = try client.request("c1 can-evaluate ctx=\(ctx) policy=biometrics")
        XCTAssertLAError(check, -10, "invalidContext")
        XCTAssertEqual(check["biometry"], "touchID")
        XCTAssertLAError(try client.request("e2 evaluate ctx=\(ctx) policy=biometrics reason=x"), -10, "invalidContext")
        XCTAssertProtocolError(try client.request("s1 sensor uid=0 result=match"), "bad-state",
                               "the prompt ended with the evaluation")
    }

    func testASecondEvaluateOnTheSameContextIsBusyAndTheFirstContinues() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e1"), attempt: 1, fallback: nil)
        XCTAssertProtocolError(try client.request("e2 evaluate ctx=\(ctx) policy=biometrics reason=x"), "busy")
        try sensor(client, "match")
        let done = try client.next(tag: "e1")
        XCTAssertOK(done)
        XCTAssertEqual(done["method"], "biometric")
    }

    func testInteractionNotAllowedEndsWithNotInteractive() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        XCTAssertOK(try client.request("s set ctx=\(ctx) interaction-not-allowed=true"))
        XCTAssertLAError(try client.request("e1 evaluate ctx=\(ctx) policy=biometrics reason=x"), -1004, "notInteractive")
    }

    func testPasscodeFallbackCancelAndSensorWithNoPromptWaitingAreBadState() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        XCTAssertProtocolError(try client.request("a passcode ctx=\(ctx) secret=1234"), "bad-state")
        XCTAssertProtocolError(try client.request("b fallback ctx=\(ctx)"), "bad-state")
        XCTAssertProtocolError(try client.request("c cancel ctx=\(ctx)"), "bad-state")
        XCTAssertProtocolError(try client.request("d sensor uid=0 result=nomatch"), "bad-state")
        XCTAssertEqual(try client.request("st status")["biometric-failures"], "0", "a refused reading counts nothing")
        XCTAssertProtocolError(try client.request("e sensor uid=0 result=sideways"), "bad-argument")
        XCTAssertProtocolError(try client.request("f sensor uid=0"), "missing-argument")
        // A passcode while a *biometric* prompt waits is bad-state too.
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "owner", tag: "e1"), attempt: 1, fallback: nil)
        XCTAssertProtocolError(try client.request("g passcode ctx=\(ctx) secret=1234"), "bad-state")
        XCTAssertOK(try client.request("h cancel ctx=\(ctx)"))
        XCTAssertLAError(try client.next(tag: "e1"), -2, "userCancel")
        XCTAssertEqual(try client.request("st2 status")["passcode-failures"], "0")
    }

    func testUnansweredPromptTimesOutWithSystemCancel() throws {
        let daemon = try startDaemon(configuration: configuration(biometry: ["PromptTimeoutSec=1"]))
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e1"), attempt: 1, fallback: nil)
        let ended = try client.next(tag: "e1")  // waits about a second; the client's timeout is only a safety net
        XCTAssertLAError(ended, -4, "systemCancel")
        XCTAssertEqual(ended["reason"], "timeout")
        XCTAssertEqual(ended.message, "Prompt timed out.")
        XCTAssertOK(try client.request("p ping"))
    }

    func testANewPromptOfTheSameUserPreemptsTheOlderOne() throws {
        let daemon = try startDaemon()
        let first = try daemon.connect()
        let second = try daemon.connect()
        try prepareOwner(first)
        let older = try newContext(first)
        let newer = try newContext(second)
        assertBiometricPrompt(try evaluate(first, ctx: older, policy: "biometrics", tag: "a1"), attempt: 1, fallback: nil)
        assertBiometricPrompt(try evaluate(second, ctx: newer, policy: "biometrics", tag: "b1"), attempt: 1, fallback: nil)
        let preempted = try first.next(tag: "a1")
        XCTAssertLAError(preempted, -4, "systemCancel")
        XCTAssertEqual(preempted["reason"], "preempted")
        // The sensor now serves the newer evaluation.
        try sensor(first, "match")
        XCTAssertEqual(try second.next(tag: "b1")["method"], "biometric")
        XCTAssertEqual(first.pending, [])
    }

    func testClosingTheConnectionEndsItsEvaluation() throws {
        let daemon = try startDaemon()
        let admin = try daemon.connect()
        try prepareOwner(admin)
        let client = try daemon.connect()
        let ctx = try newContext(client)
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e1"), attempt: 1, fallback: nil)
        XCTAssertEqual(try admin.request("st1 status")["contexts"], "1")
        client.shutDown()
        // S-14: the daemon sees the close on its own time; wait (bounded) until it has.
        XCTAssertTrue(try waitUntil { try admin.request("\(tag("st")) status")["contexts"] == "0" },
                      "the closed connection's context was invalidated")
        XCTAssertProtocolError(try admin.request("s1 sensor uid=0 result=match"), "bad-state",
                               "no prompt waits after the evaluation ended")
    }
}
