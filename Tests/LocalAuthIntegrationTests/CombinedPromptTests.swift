// S-60 over the socket: PROTOCOL.md 1.2's combined prompt, its opt-in, both
// halves' fields, and how each half's end is reported.
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class CombinedPromptTests: IntegrationTestCase {
    func evaluateCombined(_ client: Client, ctx: String, tag evalTag: String) throws -> Response {
        try client.send("\(evalTag) evaluate ctx=\(ctx) policy=owner reason=\"sudo: authenticate\" prompt=combined")
        return try client.next(tag: evalTag)
    }

    func assertCombined(_ reply: Response, attempt: Int, left: Int, message: String? = nil,
                        file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(reply.status, .prompt, "\(reply)", file: file, line: line)
        XCTAssertEqual(reply["kind"], "biometric-or-passcode", "\(reply)", file: file, line: line)
        XCTAssertEqual(reply["attempt"], String(attempt), "\(reply)", file: file, line: line)
        XCTAssertEqual(reply["attempts-left"], String(left), "\(reply)", file: file, line: line)
        XCTAssertEqual(reply["biometry"], "touchID", "\(reply)", file: file, line: line)
        XCTAssertEqual(reply["reason"], "sudo: authenticate", "\(reply)", file: file, line: line)
        XCTAssertEqual(reply["cancel"], "Cancel", "\(reply)", file: file, line: line)
        XCTAssertNil(reply["fallback"], "no fallback option at a combined prompt: \(reply)", file: file, line: line)
        XCTAssertEqual(reply["message"], message, "\(reply)", file: file, line: line)
    }

    func test_S60_onlyAClientThatAsksGetsTheCombinedPrompt_badValuesAreBadArgument() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        XCTAssertProtocolError(try client.request("e0 evaluate ctx=\(ctx) policy=owner reason=x prompt=both"), "bad-argument")
        XCTAssertProtocolError(try client.request("e0 evaluate ctx=\(ctx) policy=owner reason=x notice=all"), "bad-argument")
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "owner", tag: "e1"), attempt: 1, fallback: nil)
        XCTAssertOK(try client.request("c cancel ctx=\(ctx)"))
        XCTAssertLAError(try client.next(tag: "e1"), -2, "userCancel")
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "owner prompt=sequential", tag: "e2"),
                              attempt: 1, fallback: nil)
        XCTAssertOK(try client.request("c cancel ctx=\(ctx)"))
        XCTAssertLAError(try client.next(tag: "e2"), -2, "userCancel")
        assertCombined(try evaluateCombined(client, ctx: ctx, tag: "e3"), attempt: 1, left: 6)
        XCTAssertProtocolError(try client.request("f fallback ctx=\(ctx)"), "bad-state")
        XCTAssertOK(try client.request("c cancel ctx=\(ctx)"))
        XCTAssertLAError(try client.next(tag: "e3"), -2, "userCancel")
    }

    func test_S60_aMissPromptsAgain_thenThePasscodeTypedWhileTheSensorWaitsWins() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        assertCombined(try evaluateCombined(client, ctx: ctx, tag: "e1"), attempt: 1, left: 6)
        try sensor(client, "nomatch")
        assertCombined(try client.next(tag: "e1"), attempt: 2, left: 6, message: "Try again.")
        XCTAssertOK(try client.request("p passcode ctx=\(ctx) secret=4321"))
        assertCombined(try client.next(tag: "e1"), attempt: 2, left: 5, message: "Wrong passcode.")
        XCTAssertOK(try client.request("p passcode ctx=\(ctx) secret=1234"))
        let done = try client.next(tag: "e1")
        XCTAssertOK(done)
        XCTAssertEqual(done["method"], "passcode")
        // The scan stopped with the evaluation: a reading now finds no prompt.
        XCTAssertProtocolError(try client.request("s sensor uid=0 result=match"), "bad-state")
    }

    func test_S60_aMatchWins() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        assertCombined(try evaluateCombined(client, ctx: ctx, tag: "e1"), attempt: 1, left: 6)
        try sensor(client, "match")
        let done = try client.next(tag: "e1")
        XCTAssertOK(done)
        XCTAssertEqual(done["method"], "biometric")
        XCTAssertProtocolError(try client.request("p passcode ctx=\(ctx) secret=1234"), "bad-state")
    }

    func test_S60_theBiometricHalfEndsByLockout_aPasscodePromptSaysWhy() throws {
        let daemon = try startDaemon(configuration: configuration(biometry: ["LockoutThreshold=1"]))
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        assertCombined(try evaluateCombined(client, ctx: ctx, tag: "e1"), attempt: 1, left: 6)
        try sensor(client, "nomatch")
        let next = try client.next(tag: "e1")
        assertPasscodePrompt(next, attemptsLeft: 6)
        XCTAssertEqual(next["message"], "Biometry is locked out.")
        XCTAssertProtocolError(try client.request("s sensor uid=0 result=match"), "bad-state", "the scan stopped")
        XCTAssertOK(try client.request("p passcode ctx=\(ctx) secret=1234"))
        XCTAssertEqual(try client.next(tag: "e1")["method"], "passcode")
    }

    func test_S60_thePasscodeHalfEndsByADelay_theScanGoesOnWithRetryAfter() throws {
        let daemon = try startDaemon(configuration: configuration(passcode: ["DelayAfterFailures=1"]))
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        assertCombined(try evaluateCombined(client, ctx: ctx, tag: "e1"), attempt: 1, left: 1)
        XCTAssertOK(try client.request("p passcode ctx=\(ctx) secret=4321"))
        let next = try client.next(tag: "e1")
        XCTAssertEqual(next["kind"], "biometric", "\(next)")
        XCTAssertEqual(next["retry-after"], "60", "\(next)")
        XCTAssertEqual(next["message"], "Passcode entry is disabled.", "\(next)")
        XCTAssertProtocolError(try client.request("p passcode ctx=\(ctx) secret=1234"), "bad-state")
        try sensor(client, "match")
        XCTAssertEqual(try client.next(tag: "e1")["method"], "biometric")
    }
}
