// Session agents against the real daemon and python3-dbusmock's logind on a
// private bus (S-65..S-68): the daemon pins each caller by its pidfd, asks
// logind which session it is in, registers an agent only for its owner,
// routes an app's prompts to it, and ends the app's evaluation when the
// agent goes away. Skips where dbusmock or socat is missing.
import Glibc
import LocalAuthProtocol
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class SessionAgentIntegrationTests: XCTestCase {
    /// A daemon asking `mock` for sessions, root with a passcode and a finger.
    func daemon(_ mock: LogindMock) throws -> DaemonProcess {
        let daemon = try DaemonProcess(configuration: DaemonProcess.defaultConfiguration + """
            LogindBus=\(mock.bus)

            """)
        let root = try daemon.connect()
        XCTAssertOK(try root.request("p set-passcode secret=1234"))
        XCTAssertOK(try root.request("e enroll uid=0"))
        return daemon
    }

    /// The pidfs inode of process `pid`, as an agent reads it (S-67).
    func processID(_ pid: pid_t) throws -> String {
        let pinned = try PinnedProcess(pid: pid)
        return String(try XCTUnwrap(pinned.inode))
    }

    func test_S65_S66_S67_anAgentOfTheSessionPromptsForAnAppOfItWithTheKernelsIdentity() throws {
        let mock = try LogindMock()
        try mock.addSession("c1", uid: 0, user: "root", pid: getpid())
        let daemon = try daemon(mock)
        let agent = try daemon.connect()
        let registered = try agent.request("a register-agent")
        XCTAssertEqual(registered.status, .ok, "\(registered)")
        XCTAssertEqual(registered["session"], "c1")
        XCTAssertEqual(registered["uid"], "0")
        // One agent per session.
        let second = try daemon.connect()
        XCTAssertEqual(try second.request("a register-agent").errorName, "permission-denied")

        let app = try daemon.connect()
        let ctx = try XCTUnwrap(try app.request("n new")["ctx"])
        XCTAssertOK(try app.request("s set ctx=\(ctx) prompt=agent"))
        try app.send("e evaluate ctx=\(ctx) policy=biometrics reason=\"unlock your notes\"")
        XCTAssertEqual(try app.nextLine(tag: "e"), "e PROMPT kind=agent")
        let prompt = try agent.next(tag: "a")
        XCTAssertEqual(prompt.status, .prompt)
        XCTAssertEqual(prompt["request"], "1")
        XCTAssertEqual(prompt["app-uid"], "0")
        XCTAssertEqual(prompt["app-pid"], String(getpid()))
        XCTAssertEqual(prompt["app-process"], try processID(getpid()), "the pinned process: this one")
        XCTAssertEqual(prompt["reason"], "unlock your notes")
        let admin = try daemon.connect()
        XCTAssertOK(try admin.request("f sensor uid=0 result=match"))
        XCTAssertEqual(try agent.nextLine(tag: "a"), "a DONE request=1 result=success")
        XCTAssertEqual(try app.next(tag: "e")["method"], "biometric")
    }

    func test_S65_aProcessOutsideEverySessionOrInAnotherUsersCannotRegister() throws {
        let mock = try LogindMock()
        try mock.addSession("c1", uid: 0, user: "root", pid: getpid())
        let daemon = try daemon(mock)
        // socat as root, its pid in no session.
        let outside = try daemon.connect(asUID: 0)
        let refused = try outside.request("a register-agent")
        XCTAssertEqual(refused.errorName, "permission-denied")
        XCTAssertTrue(refused.message?.contains("no logind session") == true, refused.message ?? "")
        // socat as nobody, its pid in root's session (su without a session of its own).
        let nobody = try daemon.connect(asUID: 65534)
        XCTAssertOK(try nobody.request("p ping"))
        try mock.mapPID(try XCTUnwrap(nobody.helperPID), to: "c1")
        let foreign = try nobody.request("a register-agent")
        XCTAssertEqual(foreign.errorName, "permission-denied")
        XCTAssertTrue(foreign.message?.contains("belongs to uid 0") == true, foreign.message ?? "")
        // A session named that the caller is not in.
        try mock.addSession("c2", uid: 0, user: "root")
        let agent = try daemon.connect()
        XCTAssertEqual(try agent.request("a register-agent session=c2").errorName, "permission-denied")
        XCTAssertEqual(try agent.request("b register-agent session=c1").status, .ok)
    }

    func test_S68_theAgentGoingAwayEndsTheAppsEvaluationWithSystemCancel() throws {
        let mock = try LogindMock()
        try mock.addSession("c1", uid: 0, user: "root", pid: getpid())
        let daemon = try daemon(mock)
        let agent = try daemon.connect()
        XCTAssertEqual(try agent.request("a register-agent").status, .ok)
        let app = try daemon.connect()
        let ctx = try XCTUnwrap(try app.request("n new")["ctx"])
        XCTAssertOK(try app.request("s set ctx=\(ctx) prompt=agent"))
        try app.send("e evaluate ctx=\(ctx) policy=owner reason=x")
        XCTAssertEqual(try app.nextLine(tag: "e"), "e PROMPT kind=agent")
        XCTAssertEqual(try agent.next(tag: "a")["kind"], "biometric-or-passcode")
        // The app may not answer for the agent.
        XCTAssertEqual(try app.request("p passcode ctx=\(ctx) secret=1234").errorName, "permission-denied")
        agent.shutDown()
        let end = try app.next(tag: "e")
        XCTAssertEqual(end.errorName, "systemCancel")
        XCTAssertEqual(end["reason"], "agent-gone")
        let status = try app.request("s status")
        XCTAssertEqual(status["passcode-failures"], "0")
        XCTAssertEqual(status["biometric-failures"], "0")
    }

    func test_S65_withoutLogindRegistrationIsUnavailableAndAppsPromptThemselves() throws {
        let directory = TemporaryDirectory(prefix: "localauth-nologind-")
        let daemon = try DaemonProcess(configuration: DaemonProcess.defaultConfiguration + """
            LogindBus=unix:path=\(directory.path)/no-bus

            """)
        let agent = try daemon.connect()
        XCTAssertEqual(try agent.request("a register-agent").errorName, "unavailable")
        let app = try daemon.connect()
        let ctx = try XCTUnwrap(try app.request("n new")["ctx"])
        XCTAssertOK(try app.request("s set ctx=\(ctx) prompt=agent"))
        XCTAssertEqual(try app.request("e can-evaluate ctx=\(ctx) policy=owner").errorName, "passcodeNotSet")
    }
}

extension SessionAgentIntegrationTests {
    /// What systemd's user manager starts (a desktop app's scope, the agent's
    /// own user unit) belongs to no session: it stands for its user's display
    /// session (logind's User.Display), as polkit does (S-65, S-66).
    func test_S65_S66_processesInNoSessionStandForTheirUsersDisplaySession() throws {
        let mock = try LogindMock()
        try mock.addSession("c5", uid: 0, user: "root")
        try mock.setDisplay(uid: 0, to: "c5")
        let daemon = try daemon(mock)
        // socat as root: its pid is in no session, root's display session is c5.
        let agent = try daemon.connect(asUID: 0)
        let registered = try agent.request("a register-agent")
        XCTAssertEqual(registered.status, .ok, "\(registered)")
        XCTAssertEqual(registered["session"], "c5")
        let app = try daemon.connect(asUID: 0)
        let ctx = try XCTUnwrap(try app.request("n new")["ctx"])
        XCTAssertOK(try app.request("s set ctx=\(ctx) prompt=agent"))
        try app.send("e evaluate ctx=\(ctx) policy=biometrics reason=scope")
        XCTAssertEqual(try app.nextLine(tag: "e"), "e PROMPT kind=agent")
        XCTAssertEqual(try agent.next(tag: "a")["app-pid"], String(try XCTUnwrap(app.helperPID)))
        // nobody's process in no session: nobody has no display session.
        let other = try daemon.connect(asUID: 65534)
        XCTAssertEqual(try other.request("a register-agent").errorName, "permission-denied")
    }
}
