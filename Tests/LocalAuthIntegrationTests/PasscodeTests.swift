// The passcode phase over the socket: counting, repeats, backoff (S-5, S-7,
// S-25, S-28, S-36), and the reuse window (S-24).
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class PasscodeTests: IntegrationTestCase {
    /// Owner policy with nothing enrolled: biometry is unusable, so the
    /// evaluation goes straight to the passcode prompt.
    func testSixthWrongPasscodeStartsTheBackoffAndRepeatsCountOnce() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client, enroll: false)
        let ctx = try newContext(client)
        assertPasscodePrompt(try evaluate(client, ctx: ctx, policy: "owner", tag: "e1"), attemptsLeft: 6)
        XCTAssertOK(try client.request("w0 passcode ctx=\(ctx) secret=0000"))
        assertPasscodePrompt(try client.next(tag: "e1"), attemptsLeft: 5)
        // S-7: the same wrong passcode twice in a row counts once.
        XCTAssertOK(try client.request("w1 passcode ctx=\(ctx) secret=0000"))
        assertPasscodePrompt(try client.next(tag: "e1"), attemptsLeft: 5)
        XCTAssertEqual(try client.request("st status")["passcode-failures"], "1")
        for attempt in 1...4 {
            XCTAssertOK(try client.request("w\(attempt + 1) passcode ctx=\(ctx) secret=000\(attempt)"))
            assertPasscodePrompt(try client.next(tag: "e1"), attemptsLeft: 5 - attempt)
        }
        XCTAssertOK(try client.request("w6 passcode ctx=\(ctx) secret=9999"))
        let ended = try client.next(tag: "e1")
        XCTAssertLAError(ended, -1, "authenticationFailed")
        XCTAssertEqual(ended.message, "Passcode entry is disabled.")
        let retry = Int(ended["retry-after"] ?? "") ?? -1
        XCTAssertTrue((1...60).contains(retry), "BackoffSec starts at 60: \(ended)")

        // S-25: a new owner evaluation ends at once, the right passcode is not even asked for.
        let refused = try client.request("e2 evaluate ctx=\(ctx) policy=owner reason=again")
        XCTAssertLAError(refused, -1, "authenticationFailed")
        XCTAssertNotNil(refused["retry-after"], "\(refused)")
        let status = try client.request("st2 status")
        XCTAssertEqual(status["passcode-failures"], "6")
        XCTAssertNotEqual(status["retry-after"], "0")

        // S-9: an administrator reset clears it.
        XCTAssertOK(try client.request("r reset uid=0"))
        assertPasscodePrompt(try evaluate(client, ctx: ctx, policy: "owner", tag: "e3"), attemptsLeft: 6)
        XCTAssertOK(try client.request("ok passcode ctx=\(ctx) secret=1234"))
        XCTAssertEqual(try client.next(tag: "e3")["method"], "passcode")
    }

    func testChangingOnesPasscodeWithAWrongOldOneCountsAsAFailure() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client, enroll: false)
        let wrong = try client.request("c1 set-passcode secret=5678 old-secret=1111")
        XCTAssertLAError(wrong, -1, "authenticationFailed")
        XCTAssertEqual(try client.request("st status")["passcode-failures"], "1", "S-36: counted as an attempt")
        XCTAssertOK(try client.request("c2 set-passcode secret=5678 old-secret=1234"))
        XCTAssertEqual(try client.request("st2 status")["passcode-failures"], "0")
        // The new passcode is the one checked now.
        let ctx = try newContext(client)
        assertPasscodePrompt(try evaluate(client, ctx: ctx, policy: "owner", tag: "e1"), attemptsLeft: 6)
        XCTAssertOK(try client.request("p1 passcode ctx=\(ctx) secret=1234"))
        assertPasscodePrompt(try client.next(tag: "e1"), attemptsLeft: 5)
        XCTAssertOK(try client.request("p2 passcode ctx=\(ctx) secret=5678"))
        XCTAssertEqual(try client.next(tag: "e1")["method"], "passcode")
        XCTAssertProtocolError(try client.request("c3 set-passcode secret=12"), "bad-argument", "too short")
    }

    func testARecentDeviceUnlockWithinTheReuseDurationSucceedsWithoutPrompt() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        XCTAssertOK(try client.request("s set ctx=\(ctx) reuse-duration=60"))
        XCTAssertOK(try client.request("u unlocked uid=0"))
        let reused = try client.request("e1 evaluate ctx=\(ctx) policy=biometrics reason=x")
        XCTAssertOK(reused)
        XCTAssertEqual(reused["method"], "reuse")
        // Without a reuse duration the same unlock does not count.
        let other = try newContext(client)
        assertBiometricPrompt(try evaluate(client, ctx: other, policy: "biometrics", tag: "e2"), attempt: 1, fallback: nil)
        XCTAssertOK(try client.request("c cancel ctx=\(other)"))
        XCTAssertLAError(try client.next(tag: "e2"), -2, "userCancel")
    }

    func testQuotedReasonsRoundTripThroughPrompts() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        let prompt = try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e1",
                                  reason: #""say \"hi\" \\ to caf\#u{e9}\tnow""#)
        XCTAssertEqual(prompt["reason"], "say \"hi\" \\ to caf\u{e9}\tnow")
        XCTAssertOK(try client.request("c cancel ctx=\(ctx)"))
        XCTAssertLAError(try client.next(tag: "e1"), -2, "userCancel")
    }

    func testSensorDisconnectEndsBiometricsButMovesOwnerToThePasscode() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e1"), attempt: 1, fallback: nil)
        try sensor(client, "disconnect")
        XCTAssertLAError(try client.next(tag: "e1"), -13, "biometryDisconnected")
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "owner", tag: "e2"), attempt: 1, fallback: nil)
        try sensor(client, "disconnect")
        assertPasscodePrompt(try client.next(tag: "e2"), attemptsLeft: 6)
        XCTAssertOK(try client.request("p passcode ctx=\(ctx) secret=1234"))
        XCTAssertEqual(try client.next(tag: "e2")["method"], "passcode")
    }

    func testFaceIDAllowsTwoAttemptsPerEvaluation() throws {
        let daemon = try startDaemon(extraArguments: ["--biometry", "faceID"])
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e1"), attempt: 1, fallback: nil,
                              biometry: "faceID")
        try sensor(client, "nomatch")
        assertBiometricPrompt(try client.next(tag: "e1"), attempt: 2, fallback: "Enter Password", biometry: "faceID")
        try sensor(client, "nomatch")
        let ended = try client.next(tag: "e1")
        XCTAssertLAError(ended, -1, "authenticationFailed")
        XCTAssertEqual(ended.message, "Application retry limit exceeded.")
    }

    func testACachedPasscodeSuccessSatisfiesOwnerButNotBiometrics() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareOwner(client, enroll: false)
        let ctx = try newContext(client)
        assertPasscodePrompt(try evaluate(client, ctx: ctx, policy: "owner", tag: "e1"), attemptsLeft: 6)
        XCTAssertOK(try client.request("p passcode ctx=\(ctx) secret=1234"))
        XCTAssertEqual(try client.next(tag: "e1")["method"], "passcode")
        XCTAssertEqual(try client.request("e2 evaluate ctx=\(ctx) policy=owner reason=again")["method"], "cached")
        XCTAssertOK(try client.request("en enroll uid=0"))
        // S-23: a passcode success satisfies policy 2 only.
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e3"), attempt: 1, fallback: nil)
        XCTAssertOK(try client.request("c cancel ctx=\(ctx)"))
        XCTAssertLAError(try client.next(tag: "e3"), -2, "userCancel")
    }
}
