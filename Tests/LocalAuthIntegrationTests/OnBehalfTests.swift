// S-42 against the real daemon: only a root caller (SO_PEERCRED uid 0) may
// open a context for another user; the context is then the subject's for
// every per-user rule, and stays bound to root's connection. On the
// simulated sensor that needs the test-only switch (S-52, RootOnlyTests).
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class OnBehalfTests: IntegrationTestCase {
    func test_S42_aNonRootCallerNamingAnyUidIsPermissionDenied() throws {
        let daemon = try startDaemon()
        let user = try daemon.connect(asUID: 65534)
        for request in ["new uid=0", "new uid=65534", "new uid=1000 service=sudo", "new service=sudo",
                        "new tty=/dev/pts/0", "new rhost=example.org"] {
            XCTAssertProtocolError(try user.request("x \(request)"), "permission-denied", request)
        }
        XCTAssertOK(try user.request("n new"), "a plain new is still fine")
    }

    func test_S42_evenAnAdminGroupMemberIsPermissionDenied() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: ["AdminGroup=nogroup"]))
        let member = try daemon.connect(asUID: 65534)
        XCTAssertOK(try member.request("s status uid=0"), "the member is an administrator")
        XCTAssertProtocolError(try member.request("x new uid=0"), "permission-denied")
        XCTAssertProtocolError(try member.request("y new uid=1000 service=sudo"), "permission-denied")
    }

    func test_S42_rootOpensAContextForAnotherUserWhoseRulesApply() throws {
        let daemon = try startDaemon(configuration: DaemonProcess.onBehalfTestConfiguration)
        let root = try daemon.connect()
        XCTAssertOK(try root.request("e enroll uid=65534"))
        let user = try daemon.connect(asUID: 65534)
        XCTAssertOK(try user.request("p set-passcode secret=4321"))
        // The local host: from another, S-61 offers no biometry (WhereaboutsTests).
        let created = try root.request("n new uid=65534 service=sudo tty=/dev/pts/7 rhost=\"localhost\"")
        XCTAssertOK(created)
        let ctx = try XCTUnwrap(created["ctx"])
        XCTAssertOK(try root.request("c can-evaluate ctx=\(ctx) policy=biometrics"), "uid 65534 is enrolled, root is not")
        assertBiometricPrompt(try evaluate(root, ctx: ctx, policy: "biometrics", tag: "e1"), attempt: 1, fallback: nil)
        XCTAssertProtocolError(try root.request("s0 sensor uid=0 result=nomatch"), "bad-state", "the prompt is 65534's")
        XCTAssertOK(try root.request("s1 sensor uid=65534 result=nomatch"))
        assertBiometricPrompt(try root.next(tag: "e1"), attempt: 2, fallback: "Enter Password")
        XCTAssertEqual(try root.request("st status uid=65534")["biometric-failures"], "1", "counted for the subject")
        XCTAssertEqual(try root.request("st2 status")["biometric-failures"], "0")
        XCTAssertOK(try root.request("s2 sensor uid=65534 result=match"))
        XCTAssertEqual(try root.next(tag: "e1")["method"], "biometric")
        // Bound to root's connection (S-12): the subject cannot see it.
        XCTAssertProtocolError(try user.request("g get ctx=\(ctx)"), "unknown-context")
        XCTAssertOK(try root.request("r new uid=0 service=login"), "root may name itself")
    }

    func test_S42_badOnBehalfValuesAreBadArgument() throws {
        let daemon = try startDaemon(configuration: DaemonProcess.onBehalfTestConfiguration)
        let root = try daemon.connect()
        let long = String(repeating: "s", count: 257)
        for request in ["new uid=abc", "new uid=-1", "new uid=4294967296", "new uid=4294967295", "new uid=+1002",
                        "new uid=01001", "new uid=-0", "new uid=0 service=\(long)",
                        "new uid=0 tty=\"a\\nb\"", "new uid=0 rhost=\"\"", "new uid=0 service=\"x\\ty\""] {
            XCTAssertProtocolError(try root.request("b \(request)"), "bad-argument", request)
        }
        XCTAssertOK(try root.request("ok new uid=0 service=\(String(repeating: "s", count: 256))"), "256 bytes is the limit")
        XCTAssertProtocolError(try root.request("u new uid=0 user=alice"), "bad-argument", "unknown keys stay errors")
    }
}
