// What an administrator does to a running daemon: reload its configuration
// with SIGHUP (connections survive; a bad file is refused and the old one
// kept), start a second daemon on the same state directory (refused), name an
// AdminGroup, and restart from a snapshot.
import Foundation
import LocalAuthProtocol
import Glibc
import LocalAuthTestSupport
import XCTest

final class OperationsTests: IntegrationTestCase {
    func testSIGHUPReloadsTheRulesAndKeepsConnections() throws {
        let daemon = try startDaemon(configuration: configuration(biometry: ["LockoutThreshold=5"]))
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        XCTAssertOK(try client.request("\(tag()) can-evaluate ctx=\(ctx) policy=biometrics"))

        // A stricter threshold arrives with the reload.
        try configuration(biometry: ["LockoutThreshold=1"]).write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        try reload(daemon, client)
        let e = tag("e")
        try client.send("\(e) evaluate ctx=\(ctx) policy=biometrics reason=unlock")
        _ = try client.next(tag: e)  // PROMPT
        try sensor(client, "nomatch")
        XCTAssertLAError(try client.next(tag: e), -8, "biometryLockout")  // one failure locks out after the reload
    }

    func testABadConfigurationOnReloadKeepsTheOldOne() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try "[Daemon]\nNoSuchKey=1\n".write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        try reload(daemon, client)
        XCTAssertOK(try client.request("\(tag()) ping"), "the daemon and the connection survive a bad reload")
        XCTAssertTrue(daemon.stderr.contains("NoSuchKey"), "the refusal names the key: \(daemon.stderr)")
        XCTAssertTrue(daemon.stderr.contains("keeping the old one"), daemon.stderr)
    }

    func testASecondDaemonOnTheSameStateDirectoryIsRefused() throws {
        let first = try startDaemon()
        let (code, _, err) = try runToCompletion(first.binary, ["--config", first.configPath,
            "--socket", first.socketPath + "2", "--state-dir", first.stateDirectory])
        XCTAssertNotEqual(code, 0)
        XCTAssertTrue(err.contains("another localauthd"), err)
        XCTAssertOK(try first.connect().request("p ping"), "the first daemon is untouched")
    }

    func testMembersOfAdminGroupAreAdministrators() throws {
        // uid 65534 (nobody) is in group nogroup's gid only as primary group
        // when we say so with setpriv; use a group it is a member of.
        let daemon = try startDaemon(configuration: configuration(daemon: ["AdminGroup=nogroup"]))
        let outsider = try daemon.connect(asUID: 65534)
        let reply = try outsider.request("a1 status uid=0")
        // getgrouplist(nobody) includes its primary group (nogroup, 65534).
        XCTAssertOK(reply, "a member of AdminGroup may read another user's status")
        let other = try startDaemon()
        XCTAssertProtocolError(try other.connect(asUID: 65534).request("a2 status uid=0"), "permission-denied")
    }

    func testAnAdminGroupThatDoesNotExistIsWarnedAbout() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: ["AdminGroup=no-such-group-xyz"]))
        XCTAssertTrue(daemon.stderr.contains("AdminGroup=no-such-group-xyz names no group"), daemon.stderr)
        let quiet = try startDaemon(configuration: configuration(daemon: ["AdminGroup=nogroup"]))
        XCTAssertFalse(quiet.stderr.contains("names no group"), quiet.stderr)
    }

    func testRestartFromASnapshotGivesTheSameState() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: []) + "[Log]\nSnapshotEvery=10\n")
        let client = try daemon.connect()
        try prepareOwner(client)
        for _ in 0..<3 {
            let ctx = try newContext(client)
            let e = tag("e")
            try client.send("\(e) evaluate ctx=\(ctx) policy=biometrics reason=unlock")
            _ = try client.next(tag: e)
            try sensor(client, "nomatch")
            _ = try client.next(tag: e)
            XCTAssertOK(try client.request("\(tag()) cancel ctx=\(ctx)"))
            _ = try client.next(tag: e)
        }
        let before = try client.request("s1 status")
        // Snapshots are written off the event loop: give the writer a moment.
        XCTAssertTrue(waitUntil(safetyNet: 10) {
            ((try? FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/snapshots")) ?? [])
                .contains { $0.hasSuffix(".snap") }
        }, "snapshots were written")
        // S-49: a snapshot is used only once its snapshot-recorded event is in
        // the log (the loop appends it after the file is written): wait for it.
        XCTAssertTrue(try waitUntil(safetyNet: 10) {
            let (_, out, _) = try runToCompletion(try Binary.find("localauthctl"),
                                                  ["log", "-D", daemon.stateDirectory, "-o", "json", "--no-pager"])
            return out.contains("\"snapshot-recorded\"")
        }, "the snapshot was recorded in the log")
        daemon.kill()
        try daemon.restart()
        let after = try daemon.connect().request("s1 status")
        for key in ["biometric-failures", "locked-out", "passcode-failures", "enrolled", "passcode-set"] {
            XCTAssertEqual(after.arguments.value(for: key), before.arguments.value(for: key), key)
        }
        XCTAssertEqual(after.arguments.value(for: "biometric-failures"), "3")
        // The restart started from a snapshot: one written off the loop
        // carries the right chain head (else it is skipped for a full replay).
        XCTAssertTrue(daemon.stderr.contains("Started: snapshot "), daemon.stderr)
    }

    /// A snapshot after every event: the snapshot queue is handed new ones
    /// while it writes (each replaces the one waiting), the loop keeps
    /// answering, and a restart starts from one of them with the same state.
    func testASnapshotAfterEveryEventKeepsTheDaemonAnsweringAndRestartable() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: []) + "[Log]\nSnapshotEvery=1\n")
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        // 400 checks in one write: 400 events, each one a snapshot seq.
        try client.sendRaw(Array((0..<400).map { "p\($0) can-evaluate ctx=\(ctx) policy=biometrics\n" }.joined().utf8))
        for index in 0..<400 { XCTAssertOK(try client.next(tag: "p\(index)")) }
        let e = tag("e")
        try client.send("\(e) evaluate ctx=\(ctx) policy=biometrics reason=unlock")
        _ = try client.next(tag: e)
        try sensor(client, "nomatch")
        _ = try client.next(tag: e)
        let before = try client.request("s1 status")
        client.shutDown()
        XCTAssertEqual(daemon.stop(), 0, "a clean stop, after the snapshot being written")
        let snapshots = ((try? FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/snapshots")) ?? [])
            .filter { $0.hasSuffix(".snap") }
        XCTAssertFalse(snapshots.isEmpty)
        XCTAssertLessThanOrEqual(snapshots.count, 3, "the newest three are kept: \(snapshots)")
        try daemon.start()
        XCTAssertTrue(daemon.stderr.contains("Started: snapshot "), daemon.stderr)
        let after = try daemon.connect().request("s1 status")
        for key in ["biometric-failures", "locked-out", "passcode-failures", "enrolled", "passcode-set"] {
            XCTAssertEqual(after.arguments.value(for: key), before.arguments.value(for: key), key)
        }
        XCTAssertEqual(after.arguments.value(for: "biometric-failures"), "1")
    }

    func testHostileInputIsCountedInStats() throws {
        let daemon = try startDaemon()
        let admin = try daemon.connect()
        let before = try admin.request("s1 stats")
        XCTAssertOK(before)
        let hostile = try daemon.connect(asUID: 65534)
        XCTAssertProtocolError(try hostile.request("h1 enroll uid=0"), "permission-denied")
        try hostile.send("h2 bad\u{01}line")
        _ = try hostile.next()
        let after = try admin.request("s2 stats")
        func count(_ response: LocalAuthProtocol.Response, _ key: String) -> Int { Int(response.arguments.value(for: key) ?? "") ?? -1 }
        XCTAssertEqual(count(after, "permission-denied"), count(before, "permission-denied") + 1)
        XCTAssertEqual(count(after, "bad-lines"), count(before, "bad-lines") + 1)
        XCTAssertProtocolError(try hostile.request("h3 stats"), "permission-denied", "stats is for administrators")
    }

    /// SIGHUP, then a round trip: the loop handled the signal before the ping.
    private func reload(_ daemon: DaemonProcess, _ client: Client) throws {
        guard let pid = daemon.pid else { throw HarnessError("not running") }
        Glibc.kill(pid, SIGHUP)
        waitUntil(safetyNet: 2) {
            daemon.stderr.contains("Reloaded the configuration") || daemon.stderr.contains("reload the configuration")
        }
        XCTAssertOK(try client.request("\(tag()) ping"))
    }
}
