// Disk faults (issue 8 item 4): a full disk (a 256 KiB tmpfs as the state
// directory), a log segment and a state directory that become unreadable (a
// daemon running as another uid, so that chmod binds it), and a snapshot
// replaced by garbage.
import Foundation
import Glibc
import LocalAuthCore
import LocalAuthLog
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class DiskFaultTests: ReliabilityTestCase {
    /// Writes a file until the filesystem is full; returns its path.
    @discardableResult
    func fill(_ directory: String) -> String {
        let path = directory + "/filler-\(UInt32.random(in: 0..<UInt32.max))"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let chunk = [UInt8](repeating: 0x55, count: 4096)
        while true {
            let written = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written <= 0 { break }
        }
        // The last few bytes too.
        while (chunk.withUnsafeBytes { write(fd, $0.baseAddress, 1) }) > 0 {}
        close(fd)
        return path
    }

    // MARK: - Full disk

    /// A nomatch reading while the disk is full: the failure cannot be made
    /// durable, so neither the evaluation's owner nor the admin may hear of it
    /// (S-40). Afterwards the daemon must still answer everyone with a clear
    /// error (PROTOCOL.md `unavailable`), and a restart after space returns
    /// must recover with a state that is the fold of the log.
    func testAFailureThatCannotBeMadeDurableIsNeverRevealed() throws {
        let mount = try tinyFilesystem("256k")
        // The padding below stores values of up to a page: above the default caps (S-48).
        let daemon = try startDaemon(configuration: configuration(daemon: ["MaxPropertyBytes=8192", "MaxPropertyBytesPerContext=8192"]),
                                     stateDirectory: mount.path + "/mnt/state")
        uncleanStopAllowed.insert(ObjectIdentifier(daemon))
        let admin = try daemon.connect()
        try prepareUser(admin, uid: 0, passcode: Secrets.make("FullD1skPass"))
        let client = try daemon.connect()
        let ctx = try newContext(client)
        try client.send("ev evaluate ctx=\(ctx) policy=biometrics reason=full")
        XCTAssertEqual(try client.next(tag: "ev")["attempt"], "1")
        XCTAssertOK(try admin.request("sync ping"))

        let filler = fill(mount.path + "/mnt")
        // tmpfs allocates whole pages: fill the rest of the segment's last
        // page with events of exact sizes, so that the next record (the
        // biometric failure) is the first one that does not fit.
        try padSegmentToPageEnd(daemon, client, ctx: ctx)
        // The reading is taken, but the failure cannot reach the disk.
        try admin.send("s1 sensor uid=0 result=nomatch")
        // The daemon fails closed once the write fails: from then on whatever it
        // would (wrongly) reveal has been sent. Wait for that event, not a time.
        XCTAssertTrue(waitUntil { daemon.stderr.contains("The event log failed") },
                      "the daemon never noticed the full disk: \(daemon.stderr.suffix(800))")
        // Meanwhile, a bystander must get an answer: OK or a clear refusal.
        let bystander = try daemon.connect()
        bystander.timeout = 3
        let answer = try? bystander.request("b1 ping")
        let evaluation = try? bystander.request("b2 new")
        daemon.kill()
        let ownerLines = (try? client.readUntilEOF()) ?? []
        let adminLines = (try? admin.readUntilEOF()) ?? []
        // The evaluation's one final answer (S-33) may only say that the log
        // failed — which a match would have caused as well — never a PROMPT
        // for the next attempt or an LAError that reveals the miss (S-40).
        let evaluationLines = ownerLines.filter { $0.hasPrefix("ev ") }
        XCTAssertTrue(evaluationLines.allSatisfy { $0.hasPrefix("ev ERR domain=protocol name=unavailable") },
                      "the evaluation's owner heard of a failure that was not durable (S-40): \(ownerLines)")
        XCTAssertLessThanOrEqual(evaluationLines.count, 1, "one final answer at most: \(ownerLines)")
        XCTAssertFalse(adminLines.contains { $0.hasPrefix("s1 ") }, "the admin heard of a failure that was not durable: \(adminLines)")
        XCTAssertNotNil(answer, "with the log failed, the daemon stopped answering everybody (a ping got no reply)")
        if let evaluation {
            XCTAssertProtocolError(evaluation, "unavailable", "new while the log cannot write")
        } else {
            XCTFail("with the log failed, `new` got no reply at all instead of ERR unavailable")
        }
        // Space returns; a restart recovers and the state is the fold of the log.
        unlink(filler)
        try daemon.start()
        try assertRecovered(daemon)
    }

    /// Appends `context-property-set` records (84 + n bytes for a value of
    /// n < 128 bytes, 85 + n up to 16383) until the last segment ends exactly
    /// on a page boundary. Checks by reading the file size back.
    func padSegmentToPageEnd(_ daemon: DaemonProcess, _ client: Client, ctx: String) throws {
        let page = 4096
        func segmentSize() throws -> Int {
            let names = try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/log").filter { $0.hasSuffix(".seg") }.sorted()
            var info = stat()
            guard let last = names.last, stat(daemon.stateDirectory + "/log/" + last, &info) == 0 else { throw HarnessError("no segment") }
            return Int(info.st_size)
        }
        func append(total: Int) throws {
            let length = total - 84 < 128 ? total - 84 : total - 85
            precondition(length >= 1)
            XCTAssertOK(try client.request("pad set ctx=\(ctx) localized-reason=\(String(repeating: "r", count: length))"))
            XCTAssertOK(try client.request("sync ping"))
        }
        for _ in 0..<50 {
            // What was appended is on disk once it is durable: stats says when.
            XCTAssertTrue(try waitUntil {
                let stats = try client.request("pad-st stats")
                return stats["durable-seq"] == stats["log-seq"]
            }, "the padding never became durable")
            let size = try segmentSize()
            var room = (page - size % page) % page
            if room == 0 { return }
            if room < 85 { room += page }
            while room > 0 {
                let take = room > 3000 + 85 ? 2000 : room
                try append(total: take)
                room -= take
            }
        }
        throw HarnessError("could not pad the segment to a page boundary")
    }

    /// Filling the disk with no failure pending: the daemon must refuse to act
    /// (`ERR domain=protocol name=unavailable`) rather than answer from memory,
    /// and say why on stderr. Recovery needs a restart (the writer's failure is
    /// final by design); after it, everything works again.
    func testAFullDiskRefusesNewEvaluationsWithUnavailable() throws {
        let mount = try tinyFilesystem("256k")
        let daemon = try startDaemon(stateDirectory: mount.path + "/mnt/state")
        uncleanStopAllowed.insert(ObjectIdentifier(daemon))
        let admin = try daemon.connect()
        let passcode = Secrets.make("FullD1skTwo")
        try prepareUser(admin, uid: 0, passcode: passcode)
        let client = try daemon.connect()
        let filler = fill(mount.path + "/mnt")
        // Each request appends events; the first write that fails makes every later command unavailable.
        var refusal: Response?
        for index in 0..<2000 {
            let reply = try client.request("n\(index) new")
            if reply.status == .err { refusal = reply; break }
            if let ctx = reply["ctx"] { _ = try client.request("i\(index) invalidate ctx=\(ctx)") }
        }
        guard let refusal else { return XCTFail("2000 contexts created on a full disk, never refused") }
        XCTAssertProtocolError(refusal, "unavailable")
        // Evaluations are refused the same way, and nothing is answered from memory.
        let evaluation = try client.request("e1 evaluate ctx=00000000000000000000000000000000 policy=owner reason=x")
        XCTAssertEqual(evaluation.status, .err, "\(evaluation)")
        XCTAssertOK(try client.request("p1 ping"), "ping needs no log")
        // Space returns: the daemon reopens its log by itself (it retries every
        // few seconds; the loop below is a safety net, not a timing assertion).
        unlink(filler)
        var recovered: Response?
        var attempt = 0
        try waitUntil(safetyNet: 30) {
            attempt += 1
            let reply = try client.request("n-after\(attempt) new")
            if reply.status == .ok { recovered = reply; return true }
            XCTAssertProtocolError(reply, "unavailable")
            return false
        }
        XCTAssertNotNil(recovered?["ctx"], "the daemon serves again once the disk has room, without a restart")
        // The daemon should have said why, on stderr (the journal).
        let stderr = daemon.stderr
        XCTAssertTrue(stderr.lowercased().contains("no space") || stderr.contains("ENOSPC") || stderr.contains("write"),
                      "the daemon did not say on stderr that the log failed: \(stderr.suffix(1000))")
        // A restart recovers.
        daemon.signalAndWait(SIGTERM)
        try daemon.start()
        let again = try daemon.connect()
        let ctx = try newContext(again)
        try again.send("ev evaluate ctx=\(ctx) policy=owner reason=recovered")
        XCTAssertEqual(try again.next(tag: "ev")["kind"], "biometric")
        XCTAssertOK(try again.request("s sensor uid=0 result=match"))
        XCTAssertEqual(try again.next(tag: "ev")["method"], "biometric")
        try assertRecovered(daemon)
    }

    /// The daemon's status equals the fold of its log, and the log verifies.
    func assertRecovered(_ daemon: DaemonProcess, file: StaticString = #filePath, line: UInt = #line) throws {
        let admin = try daemon.connect()
        let status = try self.status(admin, uid: 0)
        let folded = try LogContents(stateDirectory: daemon.stateDirectory).state.status(0, now: Int64(Date().timeIntervalSince1970 * 1e6))
        XCTAssertEqual(status["biometric-failures"], String(folded.biometricFailures), file: file, line: line)
        XCTAssertEqual(status["passcode-failures"], String(folded.passcodeFailures), file: file, line: line)
        XCTAssertEqual(status["passcode-set"], folded.passcodeSet ? "true" : "false", file: file, line: line)
        assertLogVerifies(daemon.stateDirectory, allowTornTail: true, "after recovery", file: file, line: line)
    }

    // MARK: - Unreadable segment and state directory

    /// A daemon running as uid 1005 (root ignores mode bits): a segment made
    /// unreadable must stop the start (fail closed, S-41) with a message.
    func testAnUnreadableLogSegmentStopsTheStart() throws {
        let uid: UInt32 = 1005
        let base = TemporaryDirectory()
        let state = base.path + "/state"
        mkdir(state, 0o700)
        chown(state, uid, uid)
        let daemon = try startDaemon(stateDirectory: state, runAsUID: uid)
        let admin = try daemon.connect()
        try prepareUser(admin, uid: 0, passcode: Secrets.make("Unr3adable"))
        try prepareUser(admin, uid: 1000, passcode: Secrets.make("Unr3adable2"))
        admin.shutDown()
        daemon.stop()
        let before = try LogContents(stateDirectory: state)
        let segments = (try FileManager.default.contentsOfDirectory(atPath: state + "/log")).filter { $0.hasSuffix(".seg") }
        XCTAssertFalse(segments.isEmpty)
        for segment in segments { chmod(state + "/log/" + segment, 0o000) }
        let refused = daemon.startExpectingFailure()
        XCTAssertNotNil(refused.code, "the daemon started with an unreadable log segment")
        XCTAssertNotEqual(refused.code, 0)
        XCTAssertTrue(refused.stderr.contains("ermission") || refused.stderr.contains("EACCES"),
                      "the refusal does not say why: \(refused.stderr)")
        // Readable again: it starts, and nothing was lost or changed.
        for segment in segments { chmod(state + "/log/" + segment, 0o600) }
        try daemon.start()
        let after = try LogContents(stateDirectory: state)
        XCTAssertEqual(after.state.users.dictionary, before.state.users.dictionary.merging(after.state.users.dictionary) { old, _ in old })
        daemon.stop()
    }

    /// The log directory becomes unreadable and unwritable while the daemon
    /// runs (uid 1005): appends keep going to the open segment, but a new
    /// segment cannot be created; the daemon must then refuse to act, never
    /// answer from memory, and after the directory is fixed a restart recovers.
    func testAStateDirectoryThatBecomesUnwritableFailsClosed() throws {
        let uid: UInt32 = 1005
        let base = TemporaryDirectory()
        let state = base.path + "/state"
        mkdir(state, 0o700)
        chown(state, uid, uid)
        let daemon = try startDaemon(configuration: configuration(log: ["SegmentSize=8K"]), stateDirectory: state, runAsUID: uid)
        uncleanStopAllowed.insert(ObjectIdentifier(daemon))
        let admin = try daemon.connect()
        try prepareUser(admin, uid: 0, passcode: Secrets.make("Unwr1table"))
        chmod(state + "/log", 0o000)
        let client = try daemon.connect()
        var refusal: Response?
        for index in 0..<2000 {
            let reply = try client.request("n\(index) new")
            if reply.status == .err { refusal = reply; break }
            if let ctx = reply["ctx"] { _ = try client.request("i\(index) invalidate ctx=\(ctx)") }
        }
        chmod(state + "/log", 0o750)
        guard let refusal else { return XCTFail("the daemon kept creating contexts with an unwritable log directory") }
        XCTAssertProtocolError(refusal, "unavailable")
        daemon.signalAndWait(SIGTERM)
        try daemon.start()
        XCTAssertOK(try daemon.connect().request("p ping"))
        try assertRecovered(daemon)
    }

    // MARK: - Garbage snapshot

    func testASnapshotReplacedByGarbageFallsBackToReplay() throws {
        let daemon = try startDaemon(configuration: configuration(log: ["SnapshotEvery=10"]))
        let admin = try daemon.connect()
        let passcode = Secrets.make("Sn4pshotPass")
        try prepareUser(admin, uid: 0, passcode: passcode)
        // Some failures, so the state is not the default one.
        for round in 0..<3 {
            let ctx = try newContext(admin)
            try admin.send("ev\(round) evaluate ctx=\(ctx) policy=biometrics reason=snap")
            _ = try admin.next(tag: "ev\(round)")
            XCTAssertOK(try admin.request("s\(round) sensor uid=0 result=nomatch"))
            _ = try admin.next(tag: "ev\(round)")
            XCTAssertOK(try admin.request("c\(round) cancel ctx=\(ctx)"))
            _ = try admin.next(tag: "ev\(round)")
        }
        let before = try status(admin, uid: 0)
        admin.shutDown()
        daemon.stop()
        let store = SnapshotStore(directory: daemon.stateDirectory)
        let seqs = try store.list()
        XCTAssertFalse(seqs.isEmpty, "no snapshot was written")
        var random = SeededGenerator(seed: 41)
        for (variant, seq) in seqs.enumerated() {
            let path = store.path(seq)
            switch variant % 3 {
            case 0:  // random bytes
                let garbage = (0..<600).map { _ in UInt8.random(in: 0...255, using: &random) }
                _ = FileManager.default.createFile(atPath: path, contents: Data(garbage))
            case 1:  // truncated
                let bytes = readBytes(path)
                _ = FileManager.default.createFile(atPath: path, contents: Data(bytes.prefix(bytes.count / 2)))
            default:  // a valid file around a garbage payload, with the right chain head
                let log = try EventLog.open(daemon.stateDirectory, options: EventLog.Options(readOnly: true))
                try store.write(seq: seq, chainHead: try log.chainHead(at: seq), time: 0, payload: [1, 2, 3, 4, 5])
            }
            chmod(path, 0o600)
        }
        try daemon.start()
        let after = try status(try daemon.connect(), uid: 0)
        for key in ["biometric-failures", "passcode-failures", "locked-out", "enrolled", "passcode-set", "admin-locked"] {
            XCTAssertEqual(after[key], before[key], "\(key) after falling back to replay")
        }
        XCTAssertTrue(daemon.stderr.contains("snapshot"), "skipped snapshots are not reported: \(daemon.stderr.suffix(800))")
    }
}
