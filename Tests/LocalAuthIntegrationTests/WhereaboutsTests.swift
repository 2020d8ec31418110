// S-61..S-63 over the socket, with python3-dbusmock's logind on a private
// bus (LogindBus=): a client in a remote session, an on-behalf context from
// another host, the lid closed on a dock, and the system going to sleep.
import Glibc
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class WhereaboutsTests: IntegrationTestCase {
    func daemon(_ logind: LogindMock, _ extra: [String] = []) throws -> DaemonProcess {
        // On-behalf contexts on the simulated sensor: the test-only switch (S-52).
        try startDaemon(configuration: configuration(daemon: ["InsecureTestBackendsForPAM=yes"],
                                                     biometry: ["LogindBus=\(logind.bus)"] + extra))
    }

    func test_S61_aClientInARemoteLogindSession_getsNoBiometry_policy2GoesToThePasscode() throws {
        let logind = try LogindMock()
        try logind.addSession("c9", uid: 0, user: "root", remote: true, remoteHost: "laptop.example.org", pid: getpid())
        let daemon = try daemon(logind)
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        let check = try client.request("c can-evaluate ctx=\(ctx) policy=biometrics")
        XCTAssertLAError(check, -6, "biometryNotAvailable")
        XCTAssertEqual(check["reason"], "remote")
        XCTAssertTrue(check["message"]?.contains("laptop.example.org") == true, "\(check)")
        XCTAssertOK(try client.request("c2 can-evaluate ctx=\(ctx) policy=owner"), "the passcode remains")
        assertPasscodePrompt(try evaluate(client, ctx: ctx, policy: "owner", tag: "e1"), attemptsLeft: 6)
        XCTAssertOK(try client.request("p passcode ctx=\(ctx) secret=1234"))
        XCTAssertEqual(try client.next(tag: "e1")["method"], "passcode")
        let log = try daemon.logText()
        XCTAssertTrue(log.contains("biometry-skipped") && log.contains("reason=remote"), log)
    }

    func test_S61_aLocalSessionAndAProcessWithoutOneKeepBiometry() throws {
        let logind = try LogindMock()
        let daemon = try daemon(logind)
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        XCTAssertOK(try client.request("c can-evaluate ctx=\(ctx) policy=biometrics"), "no session: not remote")
        try logind.addSession("3", uid: 0, user: "root", pid: getpid())
        let other = try daemon.connect()
        let ctx2 = try newContext(other)
        XCTAssertOK(try other.request("c can-evaluate ctx=\(ctx2) policy=biometrics"), "a local session")
    }

    func test_S61_anOnBehalfContextFromAnotherHost_getsNoBiometry_fromThisHostItDoes() throws {
        let logind = try LogindMock()
        let daemon = try daemon(logind)
        let client = try daemon.connect()
        try prepareOwner(client)
        let remote = try client.request("n new uid=0 service=sshd rhost=laptop.example.org")
        guard let ctx = remote["ctx"] else { return XCTFail("\(remote)") }
        let check = try client.request("c can-evaluate ctx=\(ctx) policy=biometrics")
        XCTAssertLAError(check, -6, "biometryNotAvailable")
        XCTAssertEqual(check["reason"], "remote", "\(check)")
        XCTAssertTrue(check["message"]?.contains("laptop.example.org") == true, "\(check)")
        // Policy owner goes straight to the passcode, the combined prompt too.
        try client.send("e evaluate ctx=\(ctx) policy=owner reason=x prompt=combined")
        assertPasscodePrompt(try client.next(tag: "e"), attemptsLeft: 6)
        XCTAssertOK(try client.request("p passcode ctx=\(ctx) secret=1234"))
        XCTAssertEqual(try client.next(tag: "e")["method"], "passcode")
        let local = try client.request("n2 new uid=0 service=sudo rhost=localhost")
        guard let ctx2 = local["ctx"] else { return XCTFail("\(local)") }
        XCTAssertOK(try client.request("c2 can-evaluate ctx=\(ctx2) policy=biometrics"))
    }

    func test_S62_theLidClosedOnADockMakesTheReaderInaccessible_statusAndWatchSaySo() throws {
        let logind = try LogindMock()
        let daemon = try daemon(logind)
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        XCTAssertOK(try client.request("c can-evaluate ctx=\(ctx) policy=biometrics"))
        try client.send("w watch")
        XCTAssertOK(try client.next(tag: "w"))
        XCTAssertEqual(try client.next(tag: "w")["sensor-inaccessible"], "false")
        try logind.setLid(closed: true, docked: true)
        // Read again once the last reading is a second old: polled, not timed.
        var check = Response(tag: "", status: .ok, arguments: Arguments())
        XCTAssertTrue(try waitUntil {
            check = try client.request("c can-evaluate ctx=\(ctx) policy=biometrics")
            return check.status == .err
        })
        XCTAssertLAError(check, -6, "biometryNotAvailable")
        XCTAssertEqual(check["reason"], "lid-closed")
        XCTAssertEqual(try client.next(tag: "w")["sensor-inaccessible"], "true", "LAEnvironment hears it")
        XCTAssertEqual(try client.request("s status")["sensor-inaccessible"], "true")
        // Closed but not docked: a reader not named built-in stays accessible.
        try logind.setLid(closed: true, docked: false)
        XCTAssertTrue(try waitUntil { try client.request("c can-evaluate ctx=\(ctx) policy=biometrics").status == .ok })
    }

    func test_S62_aBuiltInReaderIsInaccessibleWithTheLidClosedDockedOrNot() throws {
        let logind = try LogindMock()
        try logind.setLid(closed: true, docked: false)
        let daemon = try daemon(logind, ["BuiltInReader=*"])
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        XCTAssertEqual(try client.request("c can-evaluate ctx=\(ctx) policy=biometrics")["reason"], "lid-closed")
    }

    func test_S63_sleepEndsTheBiometricPromptWithSystemCancel_nothingCounted_afterResumeANewPromptWorks() throws {
        let logind = try LogindMock()
        let daemon = try daemon(logind)
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e1"), attempt: 1, fallback: nil)
        try logind.prepareForSleep(true)
        let end = try client.next(tag: "e1")
        XCTAssertLAError(end, -4, "systemCancel")
        XCTAssertEqual(end["reason"], "suspend")
        XCTAssertEqual(try client.request("s status")["biometric-failures"], "0", "nothing counted")
        XCTAssertEqual(try client.request("c can-evaluate ctx=\(ctx) policy=biometrics")["reason"], "suspend",
                       "no new scan while suspending")
        try logind.prepareForSleep(false)
        XCTAssertTrue(try waitUntil { try client.request("c can-evaluate ctx=\(ctx) policy=biometrics").status == .ok })
        assertBiometricPrompt(try evaluate(client, ctx: ctx, policy: "biometrics", tag: "e2"), attempt: 1, fallback: nil)
        try sensor(client, "match")
        XCTAssertEqual(try client.next(tag: "e2")["method"], "biometric")
        let log = try daemon.logText()
        XCTAssertTrue(log.contains("system-sleep") && log.contains("state=suspending") && log.contains("state=resumed"), log)
    }

    func test_S61_S62_S63_switchedOff_logindChangesNothing() throws {
        let logind = try LogindMock()
        try logind.addSession("c9", uid: 0, user: "root", remote: true, pid: getpid())
        try logind.setLid(closed: true, docked: true)
        let daemon = try daemon(logind, ["SkipRemote=no", "LidClosedInaccessible=no", "CancelOnSuspend=no"])
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        XCTAssertOK(try client.request("c can-evaluate ctx=\(ctx) policy=biometrics"))
    }
}

extension DaemonProcess {
    /// `localauthctl log` of its state directory, short form (the daemon runs: the log is read live).
    func logText() throws -> String {
        try runToCompletion(try Binary.find("localauthctl"), ["log", "-D", stateDirectory, "--no-pager"]).1
    }
}
