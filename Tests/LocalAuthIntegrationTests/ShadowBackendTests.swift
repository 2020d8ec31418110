// S-44 against the real daemon: `[Passcode] Backend=shadow` on a test shadow
// file (never /etc/shadow). uid 65534 (nobody) is the user whose line the
// tests write; its hash is made with libxcrypt like passwd(1) would.
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class ShadowBackendTests: IntegrationTestCase {
    static let password = "correct horse"
    private var shadowDirectory: TemporaryDirectory!

    override func setUpWithError() throws {
        shadowDirectory = TemporaryDirectory()
    }

    var shadowPath: String { shadowDirectory.path + "/shadow" }

    /// A shadow file with nobody's line (hash or `!`-locked) between others
    /// that must be skipped (garbage, a line without its fields).
    func writeShadow(nobodyHash: String) throws {
        let text = """
            root:*:19000:0:99999:7:::
            garbage line without colons
            nobody:\(nobodyHash):19000:0:99999:7:::
            +nis
            cut-short

            """
        try text.write(toFile: shadowPath + ".new", atomically: false, encoding: .utf8)
        // A rename, as passwd does: a new inode the scanner must notice.
        XCTAssertEqual(rename(shadowPath + ".new", shadowPath), 0)
    }

    func shadowDaemon(clientPrompts: Bool = false) throws -> DaemonProcess {
        try writeShadow(nobodyHash: try Yescrypt.hash(secret: Self.password))
        var passcode = ["Backend=shadow", "ShadowFile=\(shadowPath)"]
        if clientPrompts { passcode.append("ClientPrompts=yes") }
        // On-behalf contexts on the simulated sensor: the test-only switch (S-52).
        return try startDaemon(configuration: configuration(daemon: ["InsecureTestBackendsForPAM=yes"], passcode: passcode))
    }

    func test_S44_aUsableHashIsAPasscodeAndTheLoginPasswordOpensAnOnBehalfContext() throws {
        let daemon = try shadowDaemon()
        let root = try daemon.connect()
        XCTAssertEqual(try root.request("s status uid=65534")["passcode-set"], "true")
        XCTAssertEqual(try root.request("s0 status")["passcode-set"], "false", "root's line is `*`: no passcode")
        let ctx = try XCTUnwrap(try root.request("n new uid=65534 service=sudo")["ctx"])
        // Nothing enrolled: policy owner goes to the passcode at once.
        assertPasscodePrompt(try evaluate(root, ctx: ctx, policy: "owner", tag: "e1"), attemptsLeft: 6)
        XCTAssertOK(try root.request("p1 passcode ctx=\(ctx) secret=\"wrong horse\""))
        assertPasscodePrompt(try root.next(tag: "e1"), attemptsLeft: 5)
        XCTAssertEqual(try root.request("s1 status uid=65534")["passcode-failures"], "1", "S-5 counts before the password")
        XCTAssertOK(try root.request("p2 passcode ctx=\(ctx) secret=\"\(Self.password)\""))
        XCTAssertEqual(try root.next(tag: "e1")["method"], "passcode")
        XCTAssertEqual(try root.request("s2 status uid=65534")["passcode-failures"], "0", "S-4")
    }

    func test_S44_setAndClearPasscodeAreUnavailableNamingPasswd() throws {
        let daemon = try shadowDaemon()
        let root = try daemon.connect()
        let user = try daemon.connect(asUID: 65534)
        for (client, request) in [(user, "set-passcode secret=12345678 old-secret=x"), (root, "set-passcode secret=12345678 uid=65534"),
                                  (root, "clear-passcode uid=65534")] {
            let reply = try client.request("x \(request)")
            XCTAssertProtocolError(reply, "unavailable", request)
            XCTAssertTrue(reply["message"]?.contains("passwd") == true, "\(reply)")
        }
        XCTAssertEqual(try root.request("s status uid=65534")["passcode-set"], "true", "nothing changed")
    }

    func test_S44_anOrdinaryClientReachingThePasscodePhaseGetsNotInteractive() throws {
        let daemon = try shadowDaemon()
        let user = try daemon.connect(asUID: 65534)
        let ctx = try newContext(user)
        XCTAssertOK(try user.request("c can-evaluate ctx=\(ctx) policy=owner"), "can-evaluate is unchanged")
        XCTAssertLAError(try evaluate(user, ctx: ctx, policy: "owner", tag: "e1"), -1004, "notInteractive")
        let root = try daemon.connect()
        XCTAssertEqual(try root.request("s status uid=65534")["passcode-failures"], "0")
        // The biometric phase still runs; its fallback ends the same way.
        XCTAssertOK(try root.request("en enroll uid=65534"))
        assertBiometricPrompt(try evaluate(user, ctx: ctx, policy: "owner", tag: "e2"), attempt: 1, fallback: nil)
        XCTAssertOK(try root.request("s1 sensor uid=65534 result=nomatch"))
        assertBiometricPrompt(try user.next(tag: "e2"), attempt: 2, fallback: "Enter Password")
        XCTAssertOK(try user.request("f fallback ctx=\(ctx)"))
        XCTAssertLAError(try user.next(tag: "e2"), -1004, "notInteractive")
    }

    func test_S44_clientPromptsYesLetsAnOrdinaryClientTypeThePassword() throws {
        let daemon = try shadowDaemon(clientPrompts: true)
        let user = try daemon.connect(asUID: 65534)
        let ctx = try newContext(user)
        assertPasscodePrompt(try evaluate(user, ctx: ctx, policy: "owner", tag: "e1"), attemptsLeft: 6)
        XCTAssertOK(try user.request("p passcode ctx=\(ctx) secret=\"\(Self.password)\""))
        XCTAssertEqual(try user.next(tag: "e1")["method"], "passcode")
    }

    func test_S44_S38_aPasswordLockedWithPasswdIsNoticedAndRecorded() throws {
        let daemon = try shadowDaemon()
        let root = try daemon.connect()
        XCTAssertEqual(try root.request("s status uid=65534")["passcode-set"], "true")
        let hash = try Yescrypt.hash(secret: Self.password)
        try writeShadow(nobodyHash: "!" + hash)
        XCTAssertTrue(waitUntil(safetyNet: 15) { (try? root.request("w status uid=65534"))?["passcode-set"] == "false" },
                      "the daemon follows the file")
        try writeShadow(nobodyHash: hash)
        XCTAssertTrue(waitUntil(safetyNet: 15) { (try? root.request("w2 status uid=65534"))?["passcode-set"] == "true" })
        // Replay equals live state (S-38): a restart reads the same.
        try daemon.restart()
        XCTAssertEqual(try daemon.connect().request("s3 status uid=65534")["passcode-set"], "true")
    }

    func test_S44_anUnreadableShadowFileStopsTheDaemonNamingTheFix() throws {
        let daemon = try DaemonProcess(configuration: configuration(passcode: ["Backend=shadow",
            "ShadowFile=\(shadowDirectory.path)/missing"]), start: false)
        let (code, stderr) = daemon.startExpectingFailure()
        XCTAssertNotEqual(code, 0)
        XCTAssertTrue(stderr.contains("SupplementaryGroups=shadow"), stderr)
    }

    func test_S44_aReloadKeepsTheBackendAndSaysItNeedsARestartButClientPromptsApplyToNewContexts() throws {
        let daemon = try shadowDaemon()
        let root = try daemon.connect()
        try configuration(daemon: ["InsecureTestBackendsForPAM=yes"],
                          passcode: ["Backend=shadow", "ShadowFile=\(shadowPath)", "ClientPrompts=yes"])
            .write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        Glibc.kill(daemon.pid!, SIGHUP)
        XCTAssertTrue(waitUntil(safetyNet: 15) { daemon.stderr.contains("Reloaded the configuration") })
        let user = try daemon.connect(asUID: 65534)
        let ctx = try newContext(user)
        assertPasscodePrompt(try evaluate(user, ctx: ctx, policy: "owner", tag: "e1"), attemptsLeft: 6)
        XCTAssertOK(try user.request("c cancel ctx=\(ctx)"))

        try configuration().write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        Glibc.kill(daemon.pid!, SIGHUP)
        XCTAssertTrue(waitUntil(safetyNet: 15) { daemon.stderr.contains("take effect at the next start") }, daemon.stderr)
        XCTAssertTrue(daemon.stderr.contains("still using shadow"), daemon.stderr)
        XCTAssertProtocolError(try root.request("x clear-passcode uid=65534"), "unavailable", "still the shadow backend")
    }
}
