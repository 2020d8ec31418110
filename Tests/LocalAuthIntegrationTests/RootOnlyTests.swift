// S-52 against the real daemon (issue 27 item 1): an AdminGroup member
// authenticated as root by enrolling root and feeding root's `su` prompt a
// match, by setting root's passcode, or by resetting root's delays. Every
// act on uid 0 is now root's alone, a reading for a PAM prompt is root's
// alone, and PAM is not served on backends that administrators control.
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class RootOnlyTests: IntegrationTestCase {
    /// uid 65534 is a member (nobody's primary group is nogroup).
    var memberConfiguration: String { configuration(daemon: ["AdminGroup=nogroup", "InsecureTestBackendsForPAM=yes"]) }

    func test_S52_anAdminGroupMemberCannotActOnRoot() throws {
        let daemon = try startDaemon(configuration: memberConfiguration)
        let member = try daemon.connect(asUID: 65534)
        XCTAssertOK(try member.request("s status uid=0"), "reading root's state stays an administrator's")
        for request in ["enroll uid=0", "unenroll uid=0", "sensor uid=0 result=match", "set-passcode uid=0 secret=4321",
                        "clear-passcode uid=0", "reset uid=0", "unlocked uid=0"] {
            let reply = try member.request("x \(request)")
            XCTAssertProtocolError(reply, "permission-denied", request)
            XCTAssertTrue(reply["message"]?.contains("root's alone") == true, "\(request): \(reply)")
        }
        let root = try daemon.connect()
        let status = try root.request("st status uid=0")
        XCTAssertEqual(status["enrolled"], "0", "nothing was recorded")
        XCTAssertEqual(status["passcode-set"], "false")
        // The member still administers everyone else; root administers itself.
        XCTAssertOK(try member.request("e1 enroll uid=1"))
        XCTAssertOK(try member.request("r1 reset uid=1"))
        XCTAssertOK(try root.request("e0 enroll uid=0"))
        XCTAssertOK(try root.request("r0 reset uid=0"))
    }

    /// The attack itself: root's `su root` prompt (an on-behalf context for
    /// uid 0, as pam_localauth opens it) answered by a member's reading.
    func test_S52_aMembersReadingNeverAnswersAPAMPrompt() throws {
        let daemon = try startDaemon(configuration: memberConfiguration)
        let root = try daemon.connect()
        XCTAssertOK(try root.request("p0 set-passcode secret=0000"), "biometry needs a passcode set (S-18)")
        XCTAssertOK(try root.request("e0 enroll uid=0"))
        XCTAssertOK(try root.request("e1 enroll uid=1"))
        XCTAssertOK(try root.request("p1 set-passcode uid=1 secret=1111"))
        let member = try daemon.connect(asUID: 65534)

        let su = try XCTUnwrap(try root.request("n new uid=0 service=su tty=/dev/pts/3")["ctx"])
        assertBiometricPrompt(try evaluate(root, ctx: su, policy: "biometrics", tag: "su"), attempt: 1, fallback: nil)
        XCTAssertProtocolError(try member.request("m0 sensor uid=0 result=match"), "permission-denied")
        // And another user's PAM prompt (`su daemon`): root's alone as well.
        let other = try XCTUnwrap(try root.request("n1 new uid=1 service=su")["ctx"])
        assertBiometricPrompt(try evaluate(root, ctx: other, policy: "biometrics", tag: "su1"), attempt: 1, fallback: nil)
        let refused = try member.request("m1 sensor uid=1 result=match")
        XCTAssertProtocolError(refused, "permission-denied")
        XCTAssertTrue(refused["message"]?.contains("PAM conversation") == true, "\(refused)")
        // The prompts still wait, and only root's readings reach them.
        XCTAssertOK(try root.request("r0 sensor uid=0 result=nomatch"))
        assertBiometricPrompt(try root.next(tag: "su"), attempt: 2, fallback: "Enter Password")
        XCTAssertOK(try root.request("r1 sensor uid=1 result=match"))
        XCTAssertEqual(try root.next(tag: "su1")["method"], "biometric")
        XCTAssertOK(try root.request("c cancel ctx=\(su)"))

        // A user's own prompt (not PAM) is still fed by any administrator (S-34).
        let user = try daemon.connect(asUID: 1)
        let own = try newContext(user)
        assertBiometricPrompt(try evaluate(user, ctx: own, policy: "biometrics", tag: "own"), attempt: 1, fallback: nil)
        XCTAssertOK(try member.request("m2 sensor uid=1 result=match"))
        XCTAssertEqual(try user.next(tag: "own")["method"], "biometric")
    }

    func test_S52_onBehalfContextsNeedBackendsNoAdministratorControls() throws {
        let daemon = try startDaemon()
        let root = try daemon.connect()
        let hello = try root.request("h hello")
        XCTAssertEqual(hello["sensor-backend"], "simulated")
        XCTAssertEqual(hello["passcode-backend"], "builtin")
        for request in ["new uid=1 service=su", "new uid=0", "new service=login", "new tty=tty1", "new rhost=host"] {
            let reply = try root.request("x \(request)")
            XCTAssertProtocolError(reply, "unavailable", request)
            XCTAssertTrue(reply["message"]?.contains("InsecureTestBackendsForPAM") == true, "\(reply)")
        }
        XCTAssertOK(try root.request("n new"), "root's own context is not on behalf of anyone")
        let user = try daemon.connect(asUID: 65534)
        XCTAssertProtocolError(try user.request("u new uid=1"), "permission-denied", "S-42 is still judged first")

        let noSensor = try startDaemon(configuration: configuration(biometry: ["Type=none"]))
        let rootAgain = try noSensor.connect()
        XCTAssertEqual(try rootAgain.request("h hello")["sensor-backend"], "none")
        XCTAssertProtocolError(try rootAgain.request("x new uid=1 service=su"), "unavailable", "builtin passcodes")
    }
}
