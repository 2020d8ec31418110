// Issue #15 items 4, 5, 6 and 9 against the real daemon (S-41, S-49): root
// tampers with a stopped daemon's state directory the ways the report did,
// and the daemon must refuse to start, naming the command to run, where it
// used to start and lift lockouts. The journal is stood in for by
// LOCALAUTHD_ANCHOR_FILE (these tests run without journald; the real
// journal is scripts/e2e/checks.d/10-anchor.sh's).
import Foundation
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

@testable import LocalAuthLog

final class LogTamperingTests: ReliabilityTestCase {
    private let owner: UInt32 = 0

    /// Five biometric failures of uid 0 (the test's own uid): locked out.
    private func lockOut(_ client: Client) throws {
        var failures = 0
        while failures < 5 {
            let ctx = try newContext(client)
            let e = tag("e")
            try client.send("\(e) evaluate ctx=\(ctx) policy=biometrics reason=tamper")
            var reply = try client.next(tag: e)
            while reply.status == .prompt && failures < 5 {
                XCTAssertOK(try client.request("\(tag("s")) sensor uid=\(owner) result=nomatch"))
                failures += 1
                reply = try client.next(tag: e)
            }
            if reply.status == .prompt {
                XCTAssertOK(try client.request("\(tag("c")) cancel ctx=\(ctx)"))
                _ = try client.next(tag: e)
            }
        }
        XCTAssertEqual(try status(client, uid: owner)["locked-out"], "true")
    }

    /// `count` contexts created and invalidated (two events each).
    private func newContexts(_ client: Client, _ count: Int) throws {
        for _ in 0..<count {
            let ctx = try newContext(client)
            XCTAssertOK(try client.request("\(tag("i")) invalidate ctx=\(ctx)"))
        }
    }

    private func refusal(_ daemon: DaemonProcess, file: StaticString = #filePath, line: UInt = #line) -> String {
        let (code, stderr) = daemon.startExpectingFailure()
        XCTAssertNotNil(code, "the daemon started on a tampered state directory:\n\(daemon.stderr.suffix(2000))", file: file, line: line)
        XCTAssertNotEqual(code, 0, file: file, line: line)
        return stderr
    }

    private func events(_ directory: String) throws -> [LoggedEvent] { try LogContents(stateDirectory: directory).events }

    /// `localauthctl ARGS`.
    private func ctl(_ arguments: [String]) throws -> (code: Int32, out: String, err: String) {
        let (code, out, err) = try runToCompletion(try Binary.find("localauthctl"), arguments)
        return (code, out, err)
    }

    // Item 4: a snapshot with its counters zeroed and its CRC and SHA-256
    // recomputed used to be loaded (and `verify` said the snapshots agreed).
    func test_S49_forgedSnapshotStopsTheStartAndReplayShowsTheLog() throws {
        let daemon = try startDaemon(configuration: configuration(log: ["SnapshotEvery=10"]))
        let client = try daemon.connect()
        try prepareUser(client, uid: owner, passcode: "246810")
        try lockOut(client)
        // Until the log vouches for a snapshot taken after the lockout.
        let lockedAt = try XCTUnwrap(try events(daemon.stateDirectory).last { $0.body.kind == .biometricFailed }?.seq)
        var vouched: [UInt64] = []
        for _ in 0..<100 where !vouched.contains(where: { $0 > lockedAt }) {
            try newContexts(client, 5)
            vouched = try events(daemon.stateDirectory).compactMap { event -> UInt64? in
                if case .snapshotRecorded(let seq, _) = event.body { return seq } else { return nil }
            }
        }
        client.shutDown()
        daemon.stop()
        // The newest snapshot the log vouches for (the one a start would use).
        vouched = try events(daemon.stateDirectory).compactMap { event -> UInt64? in
            if case .snapshotRecorded(let seq, _) = event.body { return seq } else { return nil }
        }
        let store = SnapshotStore(directory: daemon.stateDirectory)
        let seq = try XCTUnwrap(try store.list().filter(vouched.contains).last, "a recorded snapshot")
        guard case .success(let snapshot) = store.load(seq) else { return XCTFail("snapshot \(seq) unreadable") }
        var state = try StateCodec.decode(snapshot.payload)
        XCTAssertEqual(state.user(owner).biometricFailures, 5, "the snapshot is after the lockout")
        state.users[owner]?.biometricFailures = 0
        state.users[owner]?.biometryLockedOut = false
        try Data(SnapshotStore.encode(seq: seq, chainHead: snapshot.chainHead, time: snapshot.time,
                                      payload: StateCodec.encode(state))).write(to: URL(fileURLWithPath: store.path(seq)))
        let stderr = refusal(daemon)
        XCTAssertTrue(stderr.contains("was changed after it was written"), stderr)
        XCTAssertTrue(stderr.contains("localauthctl verify"), stderr)
        let verify = try ctl(["verify", "-D", daemon.stateDirectory])
        XCTAssertEqual(verify.code, 1, verify.out + verify.err)
        XCTAssertFalse(verify.out.contains("agree"), verify.out)
        let replay = try ctl(["replay", "-D", daemon.stateDirectory, "-o", "json"])
        XCTAssertTrue(replay.out.contains("\"biometry_locked_out\":true") || replay.out.contains("\"biometry_locked_out\": true"),
                      "replay shows the log's state, not the forged one: \(replay.out.prefix(600))")
    }

    // Item 5a: a sealed segment rewritten with its records' CRCs and its
    // seal's file CRC recomputed (verify reports a chain break).
    func test_S49_rewrittenSealedSegmentStopsTheStart() throws {
        let daemon = try startDaemon(configuration: configuration(log: ["SegmentSize=4096"]))
        let client = try daemon.connect()
        try prepareUser(client, uid: owner, passcode: "246810")
        try lockOut(client)
        try newContexts(client, 150)
        client.shutDown()
        daemon.stop()
        let log = daemon.stateDirectory + "/log"
        let sealed = try FileManager.default.contentsOfDirectory(atPath: log).filter { $0.hasSuffix(".seg.seal") }.sorted()
        XCTAssertGreaterThanOrEqual(sealed.count, 2, "several sealed segments")
        let segment = try XCTUnwrap(SegmentName.parse(String(sealed[0].dropLast(".seal".count)), suffix: ".seg"))
        let path = log + "/" + SegmentName.fileName(segment)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // The first record's last payload byte, then its CRC and the seal's.
        let start = SegmentHeader.size
        let length = Int(bytes.withUnsafeBytes { RecordFormat.u32($0, start) })
        bytes[start + 8 + length - 1] ^= 0x01
        let crc = CRC32C.checksum(Array(bytes[(start + 8)..<(start + 8 + length)]))
        for i in 0..<4 { bytes[start + 4 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var seal = try XCTUnwrap(SegmentSeal.load(DiskStorage.shared, log, segment))
        seal.fileCRC = CRC32C.checksum(bytes)
        try Data(seal.encoded()).write(to: URL(fileURLWithPath: SegmentSeal.path(log, segment)))
        let stderr = refusal(daemon)
        XCTAssertTrue(stderr.contains("localauthctl verify"), stderr)
        XCTAssertTrue(stderr.contains("localauthctl repair"), stderr)
        let verify = try ctl(["verify", "-D", daemon.stateDirectory])
        XCTAssertEqual(verify.code, 1, verify.out)
        XCTAssertTrue(verify.out.contains("chain break"), verify.out)
    }

    // Item 5b: tail segments deleted while newer snapshots remain.
    func test_S49_tailSegmentsDeletedUnderNewerSnapshotsStopTheStart() throws {
        let daemon = try startDaemon(configuration: configuration(log: ["SegmentSize=4096", "SnapshotEvery=40"]))
        let client = try daemon.connect()
        try prepareUser(client, uid: owner, passcode: "246810")
        try newContexts(client, 20)
        try lockOut(client)
        try newContexts(client, 150)
        client.shutDown()
        daemon.stop()
        let log = daemon.stateDirectory + "/log"
        let segments = try FileManager.default.contentsOfDirectory(atPath: log).compactMap { SegmentName.parse($0, suffix: ".seg") }.sorted()
        XCTAssertGreaterThanOrEqual(segments.count, 4)
        for segment in segments.suffix(2) {
            try FileManager.default.removeItem(atPath: log + "/" + SegmentName.fileName(segment))
            try? FileManager.default.removeItem(atPath: SegmentSeal.path(log, segment))
        }
        let remainingEnd = segments[segments.count - 2] - 1
        let newest = try XCTUnwrap(try SnapshotStore(directory: daemon.stateDirectory).list().last)
        XCTAssertGreaterThan(newest, remainingEnd, "given: a snapshot newer than what is left of the log")
        let stderr = refusal(daemon)
        XCTAssertTrue(stderr.contains("recorded events were removed"), stderr)
        XCTAssertTrue(stderr.contains("localauthctl repair"), stderr)
        // repair moves the snapshot aside and records the loss: the daemon starts, everyone locked out of biometry.
        let repair = try ctl(["repair", "-D", daemon.stateDirectory, "--socket", daemon.directory.path + "/no-daemon"])
        XCTAssertEqual(repair.code, 0, repair.out + repair.err)
        try daemon.start()
        XCTAssertEqual(try status(try daemon.connect(), uid: owner)["locked-out"], "true")
    }

    // Item 6a: the state directory restored from an older copy.
    func test_S49_stateDirectoryRestoredFromAnOlderCopyIsRefusedUnlessAccepted() throws {
        let anchors = NSTemporaryDirectory() + "/anchors-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: anchors) }
        let environment = ["LOCALAUTHD_ANCHOR_FILE": anchors]
        let daemon = try startDaemon(environment: environment)
        var client = try daemon.connect()
        try prepareUser(client, uid: owner, passcode: "246810")
        client.shutDown()
        daemon.stop()
        let copy = daemon.directory.path + "/state-copy"
        try FileManager.default.copyItem(atPath: daemon.stateDirectory, toPath: copy)
        try daemon.start()
        client = try daemon.connect()
        try lockOut(client)
        client.shutDown()
        daemon.stop()
        try FileManager.default.removeItem(atPath: daemon.stateDirectory)
        try FileManager.default.copyItem(atPath: copy, toPath: daemon.stateDirectory)
        let stderr = refusal(daemon)
        XCTAssertTrue(stderr.contains("behind the head recorded in LOCALAUTHD_ANCHOR_FILE"), stderr)
        XCTAssertTrue(stderr.contains("localauthctl verify --journal"), stderr)
        XCTAssertTrue(stderr.contains("--accept-log-rollback"), stderr)
        let verify = try runToCompletion(try Binary.find("localauthctl"), ["verify", "--journal", "-D", daemon.stateDirectory],
                                         environment: environment)
        XCTAssertEqual(verify.0, 1, verify.1 + verify.2)

        // Accepted once: recorded, and every user must use the passcode first.
        let accepting = try DaemonProcess(configuration: ReliabilityTestCase.baseConfiguration, options: .init(
            extraArguments: ["--accept-log-rollback"], stateDirectory: daemon.stateDirectory, environment: environment,
            patientProbe: true, safetyNet: 30))
        let admin = try accepting.connect()
        let after = try status(admin, uid: owner)
        XCTAssertEqual(after["locked-out"], "true", "the rolled-back log's lost lockout is not lifted: \(after)")
        XCTAssertNotEqual(after["retry-after"], "0", "\(after)")
        admin.shutDown()
        accepting.stop()
        let accepted = try events(daemon.stateDirectory).filter { $0.body.kind == .logRollbackAccepted }
        XCTAssertEqual(accepted.count, 1)
        // The next start needs no flag: the anchor is now the accepted log's.
        try daemon.start()
    }

    // Item 6b: the last segment cut at a record boundary.
    func test_S49_lastSegmentCutAtARecordBoundaryIsRefused() throws {
        let anchors = NSTemporaryDirectory() + "/anchors-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: anchors) }
        let daemon = try startDaemon(environment: ["LOCALAUTHD_ANCHOR_FILE": anchors])
        let client = try daemon.connect()
        try prepareUser(client, uid: owner, passcode: "246810")
        try lockOut(client)
        client.shutDown()
        daemon.stop()
        // Cut the lockout's records off: truncate at the first biometric failure's record.
        let reader = try LogReader(logDirectory: daemon.stateDirectory + "/log", chain: .full)
        var cut: LogPosition?
        while case .record(let record) = reader.next() {
            if cut == nil, record.keys.type == EventKind.biometricFailed.rawValue { cut = record.position }
        }
        let position = try XCTUnwrap(cut)
        let path = daemon.stateDirectory + "/log/" + SegmentName.fileName(position.segment)
        XCTAssertEqual(truncate(path, off_t(position.offset)), 0)
        let stderr = refusal(daemon)
        XCTAssertTrue(stderr.contains("behind the head"), stderr)
        XCTAssertTrue(stderr.contains("--accept-log-rollback"), stderr)
    }

    // Item 6c: `log/` emptied while the passcode store remains (no journal needed).
    func test_S49_emptiedLogNextToAPasscodeStoreIsRefusedUnlessAccepted() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try prepareUser(client, uid: owner, passcode: "246810")
        client.shutDown()
        daemon.stop()
        for folder in ["log", "snapshots"] { try FileManager.default.removeItem(atPath: daemon.stateDirectory + "/" + folder) }
        let stderr = refusal(daemon)
        XCTAssertTrue(stderr.contains("the passcode store holds"), stderr)
        XCTAssertTrue(stderr.contains("--accept-log-rollback"), stderr)
        let accepting = try DaemonProcess(configuration: ReliabilityTestCase.baseConfiguration, options: .init(
            extraArguments: ["--accept-log-rollback"], stateDirectory: daemon.stateDirectory, patientProbe: true, safetyNet: 30))
        accepting.stop()
        let accepted = try events(daemon.stateDirectory).compactMap { event -> UInt64? in
            if case .logRollbackAccepted(let journalSeq, _, _) = event.body { return journalSeq } else { return nil }
        }
        XCTAssertEqual(accepted, [0], "recorded, with no journal seq: the passcode store was the evidence")
    }

    // Item 9: a repair used to drop the passcode failures and delay it cut.
    func test_S41_repairAfterPasscodeFailuresKeepsTheUserInADelay() throws {
        let daemon = try startDaemon()
        let admin = try daemon.connect()
        let uid: UInt32 = 1004
        XCTAssertOK(try admin.request("\(tag("p")) set-passcode secret=135790 uid=\(uid)"))
        let user = try daemon.connect(asUID: uid)
        for index in 0..<6 {
            // Six different wrong passcodes (a repeated one counts once, S-7).
            let reply = try user.request("w\(index) set-passcode secret=975310 old-secret=00000\(index)")
            XCTAssertEqual(reply.status, .err, "\(reply)")
        }
        let before = try status(admin, uid: uid)
        XCTAssertNotEqual(before["retry-after"], "0", "given: a delay: \(before)")
        user.shutDown()
        admin.shutDown()
        daemon.stop()
        // Damage the record before the first counted failure: repair cuts from there.
        let reader = try LogReader(logDirectory: daemon.stateDirectory + "/log", chain: .full)
        var previous: LogPosition?
        var target: LogPosition?
        while case .record(let record) = reader.next() {
            if target == nil, record.keys.type == EventKind.passcodeRejected.rawValue { target = previous }
            previous = record.position
        }
        let position = try XCTUnwrap(target)
        let path = daemon.stateDirectory + "/log/" + SegmentName.fileName(position.segment)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[position.offset + 20] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        XCTAssertTrue(refusal(daemon).contains("localauthctl repair"))
        let repair = try ctl(["repair", "-D", daemon.stateDirectory, "--socket", daemon.directory.path + "/no-daemon"])
        XCTAssertEqual(repair.code, 0, repair.out + repair.err)
        try daemon.start()
        let after = try status(try daemon.connect(), uid: uid)
        XCTAssertNotEqual(after["retry-after"], "0", "the cut failures' delay is kept or raised: \(after)")
        XCTAssertEqual(after["locked-out"], "true", "and biometry is locked out, as after every repair (S-41)")
    }
}
