// The seed scenario of the issue, end to end over the socket with the real
// daemon: retry limit, lockout, passcode with a wrong attempt, lockout lifted.
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class SeedScenarioTests: IntegrationTestCase {
    func testRetryLimitThenLockoutThenPasscodeLiftsTheLockout() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)

        // 1. Three failed readings in one evaluation: the retry limit (touchID = 3).
        var reply = try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e1")
        assertBiometricPrompt(reply, attempt: 1, fallback: nil)
        XCTAssertEqual(reply["reason"], "unlock your notes")
        try sensor(client, "nomatch")
        reply = try client.next(tag: "e1")
        assertBiometricPrompt(reply, attempt: 2, fallback: "Enter Password")
        try sensor(client, "nomatch")
        assertBiometricPrompt(try client.next(tag: "e1"), attempt: 3, fallback: "Enter Password")
        try sensor(client, "nomatch")
        reply = try client.next(tag: "e1")
        XCTAssertLAError(reply, -1, "authenticationFailed")
        XCTAssertEqual(reply.message, "Application retry limit exceeded.")
        var status = try client.request("st1 status")
        XCTAssertEqual(status["biometric-failures"], "3")
        XCTAssertEqual(status["locked-out"], "false")

        // 2. A new evaluation: two more failures reach LockoutThreshold=5 (S-1, S-2).
        reply = try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e2")
        assertBiometricPrompt(reply, attempt: 1, fallback: nil)
        try sensor(client, "nomatch")
        assertBiometricPrompt(try client.next(tag: "e2"), attempt: 2, fallback: "Enter Password")
        try sensor(client, "nomatch")
        XCTAssertLAError(try client.next(tag: "e2"), -8, "biometryLockout")
        status = try client.request("st2 status")
        XCTAssertEqual(status["biometric-failures"], "5")
        XCTAssertEqual(status["locked-out"], "true")
        let locked = try client.request("c1 can-evaluate ctx=\(ctx) policy=biometrics")
        XCTAssertLAError(locked, -8, "biometryLockout")
        XCTAssertEqual(locked["biometry"], "touchID")

        // 3. Owner policy with biometry locked: straight to the passcode.
        reply = try evaluate(client, ctx: ctx, policy: "owner", tag: "e3")
        assertPasscodePrompt(reply, attemptsLeft: 6)
        XCTAssertOK(try client.request("w1 passcode ctx=\(ctx) secret=WRONG"),
                    "passcode answers OK at once; the verdict arrives on the evaluate's tag")
        assertPasscodePrompt(try client.next(tag: "e3"), attemptsLeft: 5)
        XCTAssertEqual(try client.request("st3 status")["passcode-failures"], "1")
        XCTAssertOK(try client.request("w2 passcode ctx=\(ctx) secret=1234"))
        reply = try client.next(tag: "e3")
        XCTAssertOK(reply)
        XCTAssertEqual(reply["method"], "passcode")

        // 4. S-4: the passcode success lifted the lockout and reset the counters.
        let lifted = try client.request("c2 can-evaluate ctx=\(ctx) policy=biometrics")
        XCTAssertOK(lifted)
        XCTAssertTrue(isHexToken(lifted["domain-state"]))
        status = try client.request("st4 status")
        XCTAssertEqual(status["biometric-failures"], "0")
        XCTAssertEqual(status["locked-out"], "false")
        XCTAssertEqual(status["passcode-failures"], "0")
        XCTAssertEqual(client.pending, [], "no stray replies")
    }

    func testTheProtocolExampleSessionFallbackToPasscodeOnOwnerPolicy() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        XCTAssertOK(try client.request("c2 can-evaluate ctx=\(ctx) policy=biometrics"))
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "owner", tag: "c3"), attempt: 1, fallback: nil)
        try sensor(client, "nomatch")
        assertBiometricPrompt(try client.next(tag: "c3"), attempt: 2, fallback: "Enter Password")
        XCTAssertOK(try client.request("c4 fallback ctx=\(ctx)"))
        assertPasscodePrompt(try client.next(tag: "c3"), attemptsLeft: 6)
        XCTAssertOK(try client.request("c5 passcode ctx=\(ctx) secret=\"1234\""))
        let done = try client.next(tag: "c3")
        XCTAssertOK(done)
        XCTAssertEqual(done["method"], "passcode")
    }

    func testBiometricMatchSucceedsAndTheContextThenAnswersFromCache() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        let token = try prepareOwner(client)
        let ctx = try newContext(client)
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e1"), attempt: 1, fallback: nil)
        try sensor(client, "retry")
        let retry = try client.next(tag: "e1")
        assertBiometricPrompt(retry, attempt: 1, fallback: nil)
        XCTAssertNotNil(retry["message"], "a retry reading explains itself: \(retry)")
        try sensor(client, "match")
        let success = try client.next(tag: "e1")
        XCTAssertOK(success)
        XCTAssertEqual(success["method"], "biometric")
        XCTAssertEqual(success["domain-state"], token)
        XCTAssertEqual(try client.request("st status")["biometric-failures"], "0", "retry is not a failure")

        // S-23: a biometric success satisfies policies 1 and 2 on this context.
        let cached = try client.request("e2 evaluate ctx=\(ctx) policy=biometrics reason=again")
        XCTAssertOK(cached)
        XCTAssertEqual(cached["method"], "cached")
        let cachedOwner = try client.request("e3 evaluate ctx=\(ctx) policy=owner reason=again")
        XCTAssertEqual(cachedOwner["method"], "cached")
    }
}
