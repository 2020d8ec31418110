// S-58 against a real journald (issue 27 item 3, the anchors): many uids'
// evaluations spend the daemon's journald rate limit, and the "head at
// stop" anchor must still reach the journal, so that a state directory
// restored from a copy taken before the flood is refused. The attack of
// the issue: the anchors shared the notice/info pool with every
// evaluation's entry, the stop's was suppressed, and the copy started with
// a 3600 s delay erased.
//
// journald here is the test's own (PrivateJournal), its limit made small
// (10 per 30 s, scaled by journald with free space), and the daemon runs in
// a cgroup named like a service, so the limit applies to it as to a unit.
// Snapshots every 20 events: the flood also drives snapshots, each of which
// anchors the log's head, in the anchors' own pool.
//
// That the flood spent the pool is journald's own word ("Suppressed N
// messages from <unit>"), and the stop falls inside the spent window: the
// daemon's "Stopped." entry (notice) of the same moment is missing.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class JournalAnchorFloodTests: ReliabilityTestCase {
    private let anchorID = "3c6d8f1a2e4b4f79a5d0c2e8b7f1a964"
    private let stoppedID = "2f7a9c1e4b3d48a6b5e0c8d1f9a27e34"
    private let evaluationFailedID = "d3f8a1c6e9b24d7a8e0c5b1f6a2d9e47"
    /// journald's "Suppressed N messages from UNIT" (SD_MESSAGE_JOURNAL_DROPPED).
    private let droppedID = "a596d6fe7bfa4994828e72309e95d61e"

    func test_S58_aFloodFromManyUidsCannotHaveTheStopAnchorSuppressed() throws {
        let journal = try PrivateJournal(rateLimitInterval: "30s", rateLimitBurst: 10)
        let unit = try PrivateJournal.Unit()
        let daemon = try DaemonProcess(configuration: configuration(log: ["SnapshotEvery=20"]), start: false)
        var pid = try start(daemon, journal, unit)
        defer { stop(pid) }

        // Given the start's anchor, attributed to the unit (so journald's limit is the unit's).
        var startAnchors: [[String: Any]] = []
        XCTAssertTrue(try waitUntil(safetyNet: 20) {
            startAnchors = try journal.entries(["MESSAGE_ID=\(anchorID)", "LOCALAUTH_ANCHOR=start"])
            return !startAnchors.isEmpty
        }, "the start's anchor never reached the journal")
        XCTAssertEqual(startAnchors.first?["_SYSTEMD_UNIT"] as? String, unit.name,
                       "journald did not name the daemon's unit: its rate limit would not apply")
        XCTAssertEqual(startAnchors.first?["PRIORITY"] as? String, "4")
        // And a copy of the state directory taken then, the attacker's.
        let copy = TemporaryDirectory(prefix: "localauth-state-copy-")
        try copyTree(daemon.stateDirectory, to: copy.path + "/state")

        // When 12 uids flood the daemon with evaluations (each ends at once,
        // journaled), the daemon's notice/info pool is spent...
        let sent = try flood(daemon, uids: 3001...3012, evaluations: 40)
        let journaled = try journal.entries(["MESSAGE_ID=\(evaluationFailedID)", "_SYSTEMD_UNIT=\(unit.name)"]).count
        XCTAssertLessThan(journaled, sent, "journald kept every evaluation's entry: the flood spent nothing")
        // ... and the daemon stops within that window.
        kill(pid, SIGTERM)
        XCTAssertEqual(waitForExit(pid, timeout: 30), 0, "the daemon did not stop cleanly")
        pid = 0
        XCTAssertTrue(try journal.entries(["MESSAGE_ID=\(stoppedID)"]).isEmpty,
                      "the daemon's \"Stopped.\" entry was kept: the stop fell after the flood's window (a slow run?)")

        // Then the stop's anchor is in the journal nevertheless,
        let stopAnchors = try journal.entries(["MESSAGE_ID=\(anchorID)", "LOCALAUTH_ANCHOR=stop"])
        XCTAssertEqual(stopAnchors.count, 1, "the head at stop was suppressed (S-58)")
        // and the copy from before the flood is refused.
        try FileManager.default.removeItem(atPath: daemon.stateDirectory)
        try copyTree(copy.path + "/state", to: daemon.stateDirectory)
        let second = try journal.launch(daemon, in: unit)
        var exit: Int32?
        XCTAssertTrue(waitUntil(safetyNet: 30) {
            exit = waitForExit(second, timeout: 0)
            return exit != nil || serves(daemon)
        })
        if exit == nil { stop(second) }
        XCTAssertNotNil(exit, "the rolled-back state directory started (S-49, S-58)")
        XCTAssertNotEqual(exit, 0)
        XCTAssertTrue(try journal.entries(["_SYSTEMD_UNIT=\(unit.name)"]).contains {
            ($0["MESSAGE"] as? String)?.hasPrefix("Refusing to start: the event log ends at seq") == true
        }, "no refusal naming the anchor in the journal")

        // journald's own account: it suppressed entries of the unit. It says
        // so with the unit's first entry of the pool after the window.
        var reports: [[String: Any]] = []
        XCTAssertTrue(try waitUntil(safetyNet: 90) {
            try journal.send("window probe", priority: "info", from: unit)
            reports = try journal.entries(["MESSAGE_ID=\(droppedID)"])
            return !reports.isEmpty
        }, "journald never reported suppressing anything")
        let report = reports.first?["MESSAGE"] as? String ?? ""
        XCTAssertTrue(report.hasPrefix("Suppressed ") && report.hasSuffix(" messages from \(unit.name)"), report)
    }

    // MARK: - Helpers

    /// Starts the daemon under the journal and waits until it serves.
    private func start(_ daemon: DaemonProcess, _ journal: PrivateJournal, _ unit: PrivateJournal.Unit) throws -> pid_t {
        let pid = try journal.launch(daemon, in: unit)
        var exit: Int32?
        let served = waitUntil(safetyNet: 30) {
            exit = waitForExit(pid, timeout: 0)
            return exit != nil || serves(daemon)
        }
        guard served, exit == nil else { throw HarnessError("localauthd did not start under the private journald (exit \(String(describing: exit)))") }
        return pid
    }

    /// Whether a daemon answers on its socket.
    private func serves(_ daemon: DaemonProcess) -> Bool {
        guard let client = try? Client(socketPath: daemon.socketPath), let reply = try? client.request("ready quit") else {
            return false
        }
        return reply.status == .ok
    }

    private func stop(_ pid: pid_t) {
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        if waitForExit(pid, timeout: 20) == nil {
            kill(pid, SIGKILL)
            _ = waitForExit(pid, timeout: 5)
        }
    }

    /// `evaluations` biometric evaluations per uid, nothing enrolled: each
    /// ends at once with a recorded, journaled failure. Returns how many ended.
    private func flood(_ daemon: DaemonProcess, uids: ClosedRange<UInt32>, evaluations: Int) throws -> Int {
        var ended = 0
        for uid in uids {
            let client = try daemon.connect(asUID: uid)
            defer { client.shutDown() }
            let ctx = try newContext(client)
            for index in 0..<evaluations { try client.send("e\(index) evaluate ctx=\(ctx) policy=biometrics reason=flood") }
            for index in 0..<evaluations {
                let reply = try client.next(tag: "e\(index)")
                XCTAssertEqual(reply.status, .err, "\(reply)")
                ended += 1
            }
        }
        return ended
    }

    private func copyTree(_ source: String, to destination: String) throws {
        let (code, _, err) = try runToCompletion("/bin/cp", ["-a", source, destination])
        guard code == 0 else { throw HarnessError("cp -a \(source) \(destination): \(err)") }
    }
}
