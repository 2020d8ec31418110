// S-49 in the log module (issue #15 items 4, 5, 6): a snapshot is trusted
// only when its snapshot-recorded event vouches for its file, and `verify`
// compares every snapshot with the state replayed from the log; the fast
// open hashes sealed segments, so a rewrite with recomputed CRCs and seal
// is refused; a log compares with its anchors (holds, behind, diverges).

import LocalAuthCore
import LocalAuthSystem
import XCTest

@testable import LocalAuthLog
import LocalAuthTestSupport

final class AnchoredLogTests: XCTestCase {
    private let alice: UserID = 1000

    /// A log of real events: alice with 3 biometric failures, a snapshot at
    /// `snapshotAt` and its snapshot-recorded event (when `record`), then more events.
    private func eventLog(_ directory: TemporaryDirectory, snapshotAt: UInt64 = 8, record: Bool = true,
                          segmentSize: Int = 64 << 20) throws -> (state: AuthState, digest: ChainHead) {
        let log = try EventLog.open(directory.path, options: .init(segmentSize: segmentSize))
        var state = AuthState()
        var digest = ChainHead.zero
        let ctx = ContextID(high: 1, low: 2)
        var bodies: [EventBody] = [.daemonStarted(version: "t", bootID: "b", pid: 1), .rulesApplied(.default),
                                   .passcodeChanged(uid: alice, set: true, by: 0), .contextCreated(uid: alice, ctx: ctx, pid: 7),
                                   .evaluationStarted(uid: alice, ctx: ctx, eval: 1, policy: .biometrics, reason: "r")]
        for _ in 0..<3 { bodies.append(.biometricFailed(uid: alice, ctx: ctx, eval: 1)) }
        for index in 0..<30 { bodies.append(.contextPropertySet(uid: alice, ctx: ctx, property: .localizedReason("r\(index)"))) }
        var time: Int64 = 1_764_000_000_000_000
        func append(_ body: EventBody) throws {
            time += 1000
            try log.append(time: time, keys: RecordKeys(type: body.kind.rawValue, uid: body.uid, context: body.ctx),
                           payload: EventCodec.encode(body))
            state.apply(Event(time: time, body))
        }
        for body in bodies {
            try append(body)
            if state.eventCount == snapshotAt {
                try log.waitDurable(snapshotAt)
                digest = try log.snapshots.write(seq: snapshotAt, chainHead: try log.chainHead(at: snapshotAt), time: time,
                                                 payload: StateCodec.encode(state))
                if record { try append(.snapshotRecorded(snapshotSeq: snapshotAt, sha256: digest.hex)) }
            }
        }
        try log.waitDurable(log.lastSeq)
        try log.close()
        return (state, digest)
    }

    private func fold(_ directory: TemporaryDirectory, strict: Bool) throws -> Replay.Outcome {
        let log = try EventLog.open(directory.path)
        defer { try? log.close() }
        return try Replay.fold(log, strict: strict)
    }

    /// The attack of item 4: counters zeroed, CRC and SHA-256 recomputed.
    private func forge(_ directory: TemporaryDirectory, _ seq: UInt64) throws {
        let store = SnapshotStore(directory: directory.path)
        guard case .success(let snapshot) = store.load(seq) else { return XCTFail("no snapshot \(seq)") }
        var state = try StateCodec.decode(snapshot.payload)
        state.users[alice]?.biometricFailures = 0
        try writeFile(store.path(seq), SnapshotStore.encode(seq: seq, chainHead: snapshot.chainHead, time: snapshot.time,
                                                            payload: StateCodec.encode(state)))
    }

    func test_S49_aVouchedSnapshotIsUsedAndAgreesWithTheReplay() throws {
        let directory = TemporaryDirectory(inMemory: true)
        let (state, _) = try eventLog(directory)
        let outcome = try fold(directory, strict: true)
        XCTAssertEqual(outcome.fromSnapshot, 8)
        XCTAssertEqual(outcome.state, state)
        let report = try EventLog.verify(directory.path)
        XCTAssertTrue(report.isOK, "\(report)")
        XCTAssertEqual(report.snapshotsAgreeing, 1)
        XCTAssertTrue(report.description.contains("1 snapshots agree"), report.description)
    }

    /// `replay --until-seq` at the snapshot's own seq: its vouching event comes
    /// after the limit and is still looked for (not folded).
    func test_S49_aReplayUpToTheSnapshotSeqStillFindsItsVouchingEvent() throws {
        let directory = TemporaryDirectory(inMemory: true)
        _ = try eventLog(directory)
        let log = try EventLog.open(directory.path)
        defer { try? log.close() }
        let outcome = try Replay.fold(log, untilSeq: 8)
        XCTAssertEqual(outcome.fromSnapshot, 8)
        XCTAssertEqual(outcome.state.eventCount, 8)
        XCTAssertEqual(outcome.replayed, 0)
        let earlier = try Replay.fold(log, untilSeq: 7)
        XCTAssertNil(earlier.fromSnapshot)
        XCTAssertEqual(earlier.state.eventCount, 7)
    }

    func test_S49_givenAForgedSnapshot_whenTheDaemonFolds_thenItRefusesAndVerifyFails() throws {
        let directory = TemporaryDirectory(inMemory: true)
        let (state, _) = try eventLog(directory)
        try forge(directory, 8)
        XCTAssertThrowsError(try fold(directory, strict: true)) { error in
            XCTAssertTrue("\(error)".contains("changed after it was written"), "\(error)")
            XCTAssertTrue("\(error)".contains("localauthctl verify"), "\(error)")
        }
        // The tools skip it and replay from the start: the true counters.
        let outcome = try fold(directory, strict: false)
        XCTAssertNil(outcome.fromSnapshot)
        XCTAssertEqual(outcome.state.user(alice).biometricFailures, 3)
        XCTAssertEqual(outcome.state, state)
        let report = try EventLog.verify(directory.path)
        XCTAssertFalse(report.isOK)
        XCTAssertEqual(report.snapshotsAgreeing, 0)
        XCTAssertTrue(report.snapshotProblems.first?.reason.contains("differs from the one recorded") == true, "\(report)")
        XCTAssertFalse(report.description.contains("agree"), report.description)
    }

    func test_S49_givenASnapshotNoEventVouchesFor_thenItIsPassedOverAndVerifyNotesIt() throws {
        let directory = TemporaryDirectory(inMemory: true)
        let (state, _) = try eventLog(directory, record: false)
        let outcome = try fold(directory, strict: true)
        XCTAssertNil(outcome.fromSnapshot, "not vouched for: full replay")
        XCTAssertEqual(outcome.state, state)
        XCTAssertTrue(outcome.skippedSnapshots.contains { $0.contains("no snapshot-recorded event") }, "\(outcome.skippedSnapshots)")
        let report = try EventLog.verify(directory.path)
        XCTAssertTrue(report.isOK, "a crash between writing and recording is no failure: \(report)")
        XCTAssertEqual(report.snapshotNotes.count, 1)
        // Forged as well (no event to compare the digest with): the state comparison catches it.
        try forge(directory, 8)
        let forged = try EventLog.verify(directory.path)
        XCTAssertFalse(forged.isOK)
        XCTAssertTrue(forged.snapshotProblems.first?.reason.contains("state differs") == true, "\(forged)")
        XCTAssertEqual(try fold(directory, strict: true).state, state, "and the daemon never used it")
    }

    func test_S49_givenASnapshotBeyondTheLog_thenTheDaemonRefusesAndRepairRecordsTheLoss() throws {
        let directory = TemporaryDirectory(inMemory: true)
        let (state, _) = try eventLog(directory)
        try SnapshotStore(directory: directory.path).write(seq: 500, chainHead: .zero, time: 0, payload: StateCodec.encode(state))
        XCTAssertThrowsError(try fold(directory, strict: true)) { error in
            XCTAssertTrue("\(error)".contains("recorded events were removed"), "\(error)")
            XCTAssertTrue("\(error)".contains("localauthctl repair"), "\(error)")
        }
        let report = try EventLog.verify(directory.path)
        XCTAssertEqual(report.snapshotProblems.map(\.beyondLog), [true])
        let lastSeq = report.lastSeq
        var lost: UInt64?
        let repaired = try EventLog.repair(directory.path, time: 1_764_100_000_000_000) { first in
            lost = first
            let body = EventBody.logRepaired(firstLostSeq: first, by: 0)
            return (RecordKeys(type: body.kind.rawValue), EventCodec.encode(body))
        }
        XCTAssertTrue(repaired.repaired)
        XCTAssertEqual(lost, lastSeq + 1)
        XCTAssertTrue(try EventLog.verify(directory.path).isOK)
        let after = try fold(directory, strict: true)
        XCTAssertTrue(after.state.user(alice).biometryLockedOut, "the loss is folded at its worst")
    }

    func test_S49_snapshotWhoseChainHeadDiffersFromTheLogStopsTheDaemon() throws {
        let directory = TemporaryDirectory(inMemory: true)
        let (state, _) = try eventLog(directory)
        try SnapshotStore(directory: directory.path, keep: 5).write(seq: 20, chainHead: .zero, time: 0, payload: StateCodec.encode(state))
        XCTAssertThrowsError(try fold(directory, strict: true))
        XCTAssertNotNil(try fold(directory, strict: false).fromSnapshot)
    }

    /// Item 5: a sealed segment rewritten with every CRC (records, seal) recomputed.
    func test_S49_rewrittenSealedSegmentWithRecomputedChecksumsIsRefusedByTheFastOpen() throws {
        let directory = TemporaryDirectory(inMemory: true)
        try makeLog(directory, count: 60, segmentSize: 1024)
        let first = try XCTUnwrap(try Directory.entries(directory.log).compactMap { SegmentName.parse($0, suffix: ".seg") }.min())
        let path = segmentPath(directory, first)
        var bytes = try readFile(path)
        // The first record's payload: one byte changed, its CRC recomputed.
        let length = Int(bytes.withUnsafeBytes { RecordFormat.u32($0, SegmentHeader.size) })
        bytes[SegmentHeader.size + 8 + 40] ^= 0x5A
        let crc = CRC32C.checksum(Array(bytes[(SegmentHeader.size + 8)..<(SegmentHeader.size + 8 + length)]))
        for i in 0..<4 { bytes[SegmentHeader.size + 4 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        try writeFile(path, bytes)
        var seal = try XCTUnwrap(SegmentSeal.load(DiskStorage.shared, directory.log, first))
        seal.fileCRC = CRC32C.checksum(bytes)
        try writeFile(SegmentSeal.path(directory.log, first), seal.encoded())
        XCTAssertThrowsError(try EventLog.open(directory.path, options: .init(segmentSize: 1024, verification: .sealed))) { error in
            guard case LogError.untrustworthy(let corruption) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(corruption.reason, .sealMismatch, "\(corruption)")
        }
        let report = try EventLog.verify(directory.path)
        XCTAssertEqual(report.corruption?.reason, .chainBreak, "\(report)")
    }

    func test_S49_aLogComparesWithItsAnchors() throws {
        let directory = TemporaryDirectory(inMemory: true)
        try makeLog(directory, count: 30, segmentSize: 1024)
        let log = try EventLog.open(directory.path, options: .init(readOnly: true))
        let head20 = try log.chainHead(at: 20)
        XCTAssertEqual(log.compare(with: LogAnchor(seq: 20, chainHead: head20)), .holds)
        XCTAssertEqual(log.compare(with: LogAnchor(seq: 30, chainHead: try log.chainHead(at: 30))), .holds)
        XCTAssertEqual(log.compare(with: LogAnchor(seq: 31, chainHead: head20)), .behind(logSeq: 30))
        XCTAssertEqual(log.compare(with: LogAnchor(seq: 20, chainHead: .zero)), .diverges(logHead: head20))
    }

    func test_S49_fileAnchorsReturnTheNewestOfTheirStateDirectory() throws {
        let directory = TemporaryDirectory(inMemory: true)
        let store = FileAnchors(path: directory.path + "/anchors")
        XCTAssertNil(try store.newest(stateDirectory: directory.path))
        let head = try XCTUnwrap(ChainHead(hex: String(repeating: "ab", count: 32)))
        store.record(LogAnchor(seq: 5, chainHead: .zero), stateDirectory: directory.path, event: "start")
        store.record(LogAnchor(seq: 9, chainHead: head), stateDirectory: directory.path, event: "snapshot")
        store.record(LogAnchor(seq: 99, chainHead: .zero), stateDirectory: "/elsewhere", event: "stop")
        XCTAssertEqual(try store.newest(stateDirectory: directory.path), LogAnchor(seq: 9, chainHead: head))
        // A garbled newest line is not skipped silently.
        try writeFile(directory.path + "/anchors", Array("\(Anchors.identity(directory.path))\tnine\tzz\tstop\n".utf8))
        XCTAssertThrowsError(try store.newest(stateDirectory: directory.path))
        XCTAssertNil(ChainHead(hex: "12"))
        XCTAssertEqual(ChainHead(hex: head.hex.uppercased()), head)
    }
}
