// Who may do what (S-34..S-36): a real second uid, 65534, speaking through
// `setpriv ... socat`, so that the daemon sees it with SO_PEERCRED.
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class PermissionTests: IntegrationTestCase {
    func testANonAdministratorIsRefusedAdminVerbsButReadsItsOwnStatus() throws {
        let daemon = try startDaemon()
        let user = try daemon.connect(asUID: 65534)
        let hello = try user.request("h hello")
        XCTAssertOK(hello)
        XCTAssertEqual(hello["uid"], "65534", "the daemon sees the second uid")

        for verb in ["enroll uid=65534", "enroll uid=0", "sensor uid=65534 result=match", "sensor uid=0 result=match",
                     "status uid=0", "unenroll uid=65534", "unlocked uid=65534", "reset uid=65534",
                     "clear-passcode uid=65534", "set-passcode secret=12345678 uid=0", "stats"] {
            XCTAssertProtocolError(try user.request("x \(verb)"), "permission-denied")
        }
        let status = try user.request("s status")
        XCTAssertOK(status)
        XCTAssertEqual(status["uid"], "65534")
        XCTAssertEqual(status["passcode-set"], "false")
        XCTAssertEqual(try user.request("s2 status uid=65534")["uid"], "65534", "naming one's own uid is fine")
        XCTAssertOK(try user.request("p1 set-passcode secret=4321"), "S-36: users set their own passcode")
        XCTAssertEqual(try user.request("s3 status")["passcode-set"], "true")
        XCTAssertProtocolError(try user.request("p2 set-passcode secret=5555"), "missing-argument",
                               "changing it needs the old one")

        // The administrator sees the user's state.
        let admin = try daemon.connect()
        let seen = try admin.request("a status uid=65534")
        XCTAssertOK(seen)
        XCTAssertEqual(seen["passcode-set"], "true")
    }

    func testOnlyTheAdministratorFeedsTheSensorForAnotherUsersEvaluation() throws {
        let daemon = try startDaemon()
        let admin = try daemon.connect()
        let user = try daemon.connect(asUID: 65534)
        XCTAssertOK(try user.request("p set-passcode secret=4321"))
        XCTAssertOK(try admin.request("e enroll uid=65534"))
        let ctx = try newContext(user)
        XCTAssertOK(try user.request("c can-evaluate ctx=\(ctx) policy=biometrics"))
        // The administrator cannot use the user's context either (S-12).
        XCTAssertProtocolError(try admin.request("x get ctx=\(ctx)"), "unknown-context")

        assertBiometricPrompt(try evaluate(user, ctx: ctx, policy: "biometrics", tag: "u1"), attempt: 1, fallback: nil)
        XCTAssertProtocolError(try user.request("y sensor uid=65534 result=match"), "permission-denied",
                               "S-34: results never come from the client that asked")
        // uid 0 has no prompt waiting; uid 65534 does.
        XCTAssertProtocolError(try admin.request("s0 sensor uid=0 result=match"), "bad-state")
        XCTAssertOK(try admin.request("s1 sensor uid=65534 result=match"))
        let done = try user.next(tag: "u1")
        XCTAssertOK(done)
        XCTAssertEqual(done["method"], "biometric")
        XCTAssertTrue(isHexToken(done["domain-state"]))
    }

    func testPromptsOfDifferentUsersDoNotPreemptEachOther() throws {
        let daemon = try startDaemon()
        let admin = try daemon.connect()
        let user = try daemon.connect(asUID: 65534)
        try prepareOwner(admin)
        XCTAssertOK(try user.request("p set-passcode secret=4321"))
        XCTAssertOK(try admin.request("e enroll uid=65534"))
        let userContext = try newContext(user)
        let adminContext = try newContext(admin)
        assertBiometricPrompt(try evaluate(user, ctx: userContext, policy: "biometrics", tag: "u1"), attempt: 1, fallback: nil)
        assertBiometricPrompt(try evaluate(admin, ctx: adminContext, policy: "biometrics", tag: "a1"), attempt: 1, fallback: nil)
        // S-30 is per user: both prompts are still waiting.
        XCTAssertOK(try admin.request("s1 sensor uid=65534 result=nomatch"))
        assertBiometricPrompt(try user.next(tag: "u1"), attempt: 2, fallback: "Enter Password")
        XCTAssertOK(try admin.request("s2 sensor uid=0 result=match"))
        XCTAssertEqual(try admin.next(tag: "a1")["method"], "biometric")
        XCTAssertOK(try user.request("c cancel ctx=\(userContext)"))
        XCTAssertLAError(try user.next(tag: "u1"), -2, "userCancel")
        XCTAssertEqual(try admin.request("st status uid=65534")["biometric-failures"], "1")
        XCTAssertEqual(try admin.request("st2 status")["biometric-failures"], "0", "S-1: counted per uid")
    }
}
