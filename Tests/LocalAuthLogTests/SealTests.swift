// Sealed segments (FORMAT.md "Seals"): seals are written on rotation and
// describe their segment; the fast open (`.sealed`) refuses any changed,
// cut or extended sealed segment naming it, falls back to a scan (and
// re-seals) when a seal is missing or wrong, agrees with the full open, and
// `verify` still finds everything.

import LocalAuthSystem
import XCTest

@testable import LocalAuthLog
import LocalAuthTestSupport

final class SealTests: XCTestCase {
    private let segmentSize = 600
    private let count = 120

    private func fastOptions(readOnly: Bool = false) -> EventLog.Options {
        .init(segmentSize: segmentSize, verification: .sealed, readOnly: readOnly)
    }

    private func segments(_ directory: TemporaryDirectory) throws -> [UInt64] {
        try LogReader(logDirectory: directory.log).segments
    }

    private func sealPath(_ directory: TemporaryDirectory, _ segment: UInt64) -> String {
        SegmentSeal.path(directory.log, segment)
    }

    /// The fast open refuses with a corruption in `segment` (one of `reasons` when given).
    private func assertFastRefuses(
        _ directory: TemporaryDirectory, segment: UInt64, _ reasons: Set<CorruptionReason>? = nil, _ what: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        for readOnly in [true, false] {
            XCTAssertThrowsError(try EventLog.open(directory.path, options: fastOptions(readOnly: readOnly)), what, file: file, line: line) { error in
                guard case LogError.untrustworthy(let corruption) = error else {
                    return XCTFail("\(what): expected untrustworthy, got \(error)", file: file, line: line)
                }
                XCTAssertEqual(corruption.segment, segment, "\(what): \(corruption)", file: file, line: line)
                if let reasons { XCTAssertTrue(reasons.contains(corruption.reason), "\(what): \(corruption)", file: file, line: line) }
                let message = "\(error)"
                XCTAssertTrue(message.contains("localauthctl verify") && message.contains("localauthctl repair"), file: file, line: line)
            }
        }
    }

    func testSealsAreWrittenOnRotationAndDescribeTheirSegment() throws {
        let directory = TemporaryDirectory(inMemory: true)
        try makeLog(directory, count: count, segmentSize: segmentSize)
        let names = try segments(directory)
        XCTAssertGreaterThan(names.count, 5)
        for (index, name) in names.enumerated() {
            guard index < names.count - 1 else {
                XCTAssertFalse(File.exists(sealPath(directory, name)), "the last segment is not sealed")
                continue
            }
            let seal = try XCTUnwrap(SegmentSeal.load(DiskStorage.shared, directory.log, name), "seal of \(name)")
            let bytes = try readFile(segmentPath(directory, name))
            XCTAssertEqual(seal.firstSeq, name)
            XCTAssertEqual(seal.lastSeq, names[index + 1] - 1)
            XCTAssertEqual(seal.length, bytes.count)
            XCTAssertEqual(seal.fileCRC, CRC32C.checksum(bytes))
            let reader = try LogReader(logDirectory: directory.log, chain: .full)
            while case .record(let record) = reader.next(), record.seq < seal.lastSeq {}
            XCTAssertEqual(seal.chainHead, reader.chainHead)
            XCTAssertEqual(SegmentHeader.decode(try readFile(segmentPath(directory, names[index + 1])).withUnsafeBytes { $0 })?.chainBefore, seal.chainHead)
        }
        let report = try EventLog.verify(directory.path)
        XCTAssertTrue(report.isOK, "\(report)")
        XCTAssertEqual(report.sealsChecked, names.count - 1)
    }

    func testFastOpenAgreesWithFullOpen() throws {
        let directory = TemporaryDirectory(inMemory: true)
        try makeLog(directory, count: count, segmentSize: segmentSize)
        let names = try segments(directory)
        let full = try EventLog.open(directory.path, options: .init(segmentSize: segmentSize, readOnly: true))
        let fastReadOnly = try EventLog.open(directory.path, options: fastOptions(readOnly: true))
        XCTAssertEqual(fastReadOnly.recovery.sealedSegmentsTrusted, names.count - 1)
        for log in [fastReadOnly] {
            XCTAssertEqual(log.recovery.lastSeq, full.recovery.lastSeq)
            XCTAssertEqual(log.lastSeq, UInt64(count))
            for seq: UInt64 in [1, 17, 50, UInt64(count)] { XCTAssertEqual(try log.chainHead(at: seq), try full.chainHead(at: seq)) }
            XCTAssertEqual(log.positions(context: Fixture.contextA), full.positions(context: Fixture.contextA))
            XCTAssertEqual(log.positions(uid: 1001), full.positions(uid: 1001))
            XCTAssertEqual(try log.history(context: Fixture.contextB), try full.history(context: Fixture.contextB))
        }
        // Writable: the lazy index plus what is appended after open.
        let fast = try EventLog.open(directory.path, options: fastOptions())
        XCTAssertEqual(fast.recovery.lastSeq, UInt64(count))
        XCTAssertEqual(try fast.chainHead(at: UInt64(count)), try full.chainHead(at: UInt64(count)))
        let before = fast.positions(context: Fixture.contextA)
        XCTAssertEqual(before, full.positions(context: Fixture.contextA))
        let seq = try fast.append(time: 1, keys: RecordKeys(type: 1, context: Fixture.contextA), payload: [1, 2, 3])
        try fast.waitDurable(seq)
        XCTAssertEqual(try fast.history(context: Fixture.contextA).map(\.seq), try full.history(context: Fixture.contextA).map(\.seq) + [seq])
        try fast.close()
        let report = try EventLog.verify(directory.path)
        XCTAssertTrue(report.isOK, "\(report)")
        // An empty directory and a log with one segment.
        let empty = TemporaryDirectory(inMemory: true)
        let fresh = try EventLog.open(empty.path, options: fastOptions())
        XCTAssertEqual(fresh.lastSeq, 0)
        try fresh.close()
    }

    func testAnyFlippedBitInASealedSegmentRefusesNamingIt() throws {
        let directory = TemporaryDirectory(inMemory: true)
        let positions = try makeLog(directory, count: count, segmentSize: segmentSize)
        let names = try segments(directory)
        let segment = names[names.count / 2]
        let path = segmentPath(directory, segment)
        let original = try readFile(path)
        let inSegment = positions.filter { $0.segment == segment }
        let middle = inSegment[inSegment.count / 2].offset
        // Header fields, every field of a middle record, the last byte.
        var offsets = [0, 8, 12, 16, 24, 55, 56, 60, 63]
        offsets += [0, 1, 4, 8, 15, 16, 24, 26, 28, 32, 47].map { middle + $0 }
        offsets += [original.count - 1]
        for offset in offsets {
            try flipBit(path, at: offset, bit: offset % 8)
            assertFastRefuses(directory, segment: segment, nil, "flip at \(offset)")
            // Same first bad place as the full open and verify.
            var full: LogError?
            do { _ = try EventLog.open(directory.path, options: .init(readOnly: true)) } catch { full = error }
            var fast: LogError?
            do { _ = try EventLog.open(directory.path, options: fastOptions(readOnly: true)) } catch { fast = error }
            XCTAssertNotNil(full, "flip at \(offset)")
            XCTAssertEqual(fast, full, "flip at \(offset): the fast open names the same record")
            if case .untrustworthy(let corruption) = full {
                XCTAssertEqual(try EventLog.verify(directory.path).corruption, corruption, "flip at \(offset)")
            }
            try writeFile(path, original)
        }
        XCTAssertNoThrow(try EventLog.open(directory.path, options: fastOptions(readOnly: true)))
    }

    func testCutOrExtendedSealedSegmentRefuses() throws {
        let directory = TemporaryDirectory(inMemory: true)
        let positions = try makeLog(directory, count: count, segmentSize: segmentSize)
        let names = try segments(directory)
        let segment = names[1]
        let path = segmentPath(directory, segment)
        let original = try readFile(path)
        // Mid-record, and exactly at the last record's start (every record left is intact).
        let lastRecord = positions.filter { $0.segment == segment }.last!.offset
        for size in [original.count - 1, lastRecord, SegmentHeader.size] {
            try truncateFile(path, to: size)
            assertFastRefuses(directory, segment: segment, nil, "cut to \(size)")
            try writeFile(path, original)
        }
        try truncateFile(path, to: lastRecord)
        assertFastRefuses(directory, segment: segment, [.sealMismatch], "cut at a record boundary")
        try writeFile(path, original + [0, 0, 0, 0, 0, 0, 0, 0])
        assertFastRefuses(directory, segment: segment, nil, "extended with zeros")
        try writeFile(path, original)
        // A missing sealed segment.
        try File.rename(path, to: path + ".away")
        assertFastRefuses(directory, segment: names[2], [.missingSegment], "segment deleted")
        try File.rename(path + ".away", to: path)
        XCTAssertNoThrow(try EventLog.open(directory.path, options: fastOptions(readOnly: true)))
    }

    func testMissingOrGarbledSealFallsBackToAScanAndReseals() throws {
        let directory = TemporaryDirectory(inMemory: true)
        try makeLog(directory, count: count, segmentSize: segmentSize)
        let names = try segments(directory)
        let segment = names[2]
        let seal = sealPath(directory, segment)
        let original = try readFile(seal)
        for damage in ["deleted", "garbled", "short"] {
            switch damage {
            case "deleted": try File.unlink(seal)
            case "garbled": try flipBit(seal, at: 30)
            default: try writeFile(seal, Array(original.prefix(50)))
            }
            let readOnly = try EventLog.open(directory.path, options: fastOptions(readOnly: true))
            XCTAssertEqual(readOnly.recovery.sealedSegmentsTrusted, names.count - 2, damage)
            XCTAssertEqual(readOnly.lastSeq, UInt64(count), damage)
            if damage == "garbled" {
                let report = try EventLog.verify(directory.path)
                XCTAssertNil(report.corruption, damage)
                XCTAssertEqual(report.sealProblems.map(\.file), [SegmentSeal.fileName(segment)], damage)
            }
            let log = try EventLog.open(directory.path, options: fastOptions())
            XCTAssertEqual(log.recovery.sealsWritten, 1, damage)
            try log.close()
            XCTAssertEqual(try readFile(seal), original, "\(damage): re-sealed as the writer sealed it")
        }
        // No seal and a flipped bit in that segment: the scan finds it.
        try File.unlink(seal)
        let path = segmentPath(directory, segment)
        try flipBit(path, at: SegmentHeader.size + 20)
        assertFastRefuses(directory, segment: segment, [.crcMismatch], "no seal, bad record")
    }

    func testOldLogWithoutSealsOpensAndGetsSealed() throws {
        let directory = TemporaryDirectory(inMemory: true)
        try makeLog(directory, count: count, segmentSize: segmentSize)
        let names = try segments(directory)
        let seals = try names.dropLast().map { try readFile(sealPath(directory, $0)) }
        for name in names.dropLast() { try File.unlink(sealPath(directory, name)) }
        XCTAssertTrue(try EventLog.verify(directory.path).isOK)
        let log = try EventLog.open(directory.path, options: fastOptions())
        XCTAssertEqual(log.recovery.sealedSegmentsTrusted, 0)
        XCTAssertEqual(log.recovery.sealsWritten, names.count - 1)
        try log.close()
        XCTAssertEqual(try names.dropLast().map { try readFile(sealPath(directory, $0)) }, seals)
        let again = try EventLog.open(directory.path, options: fastOptions(readOnly: true))
        XCTAssertEqual(again.recovery.sealedSegmentsTrusted, names.count - 1)
    }

    func testSealThatDisagreesWithItsSegment() throws {
        let directory = TemporaryDirectory(inMemory: true)
        try makeLog(directory, count: count, segmentSize: segmentSize)
        let names = try segments(directory)
        let segment = names[1]
        let path = sealPath(directory, segment)
        let good = try XCTUnwrap(SegmentSeal.load(DiskStorage.shared, directory.log, segment))
        let goodBytes = try readFile(path)

        // Wrong CRC/length fields only: the segment is scanned, found to be what
        // the seal says (seqs, chain), used, and re-sealed; verify flags the seal
        // and repair moves it aside.
        var wrong = good
        wrong.fileCRC ^= 1
        try writeFile(path, wrong.encoded())
        XCTAssertEqual(try EventLog.open(directory.path, options: fastOptions(readOnly: true)).lastSeq, UInt64(count))
        var report = try EventLog.verify(directory.path)
        XCTAssertNil(report.corruption)
        XCTAssertFalse(report.isOK)
        XCTAssertEqual(report.sealProblems.map(\.file), [SegmentSeal.fileName(segment)])
        let repaired = try EventLog.repair(directory.path, time: 1_764_000_000_000_000) { _ in (RecordKeys(type: 1), []) }
        XCTAssertTrue(repaired.repaired, "\(repaired)")
        XCTAssertFalse(File.exists(path))
        report = try EventLog.verify(directory.path)
        XCTAssertTrue(report.isOK, "\(report)")
        try EventLog.open(directory.path, options: fastOptions()).close()
        XCTAssertEqual(try readFile(path), goodBytes)

        // A seal claiming other seqs or another chain head with the right CRC: the seam refuses.
        var otherSeqs = good
        otherSeqs.lastSeq -= 1
        try writeFile(path, otherSeqs.encoded())
        assertFastRefuses(directory, segment: names[2], [.duplicateSegment, .missingSegment], "seal with other seqs")
        var otherChain = good
        otherChain.chainHead = .zero
        try writeFile(path, otherChain.encoded())
        // The fast open hashes the sealed segment (S-49): its chain is not the
        // seal's, so the segment is scanned and found not to match its seal.
        assertFastRefuses(directory, segment: segment, [.sealMismatch], "seal with another chain head")
        XCTAssertThrowsError(try EventLog.open(directory.path, options: fastOptions())) { error in
            XCTAssertTrue("\(error)".contains("seal says \(good.lastSeq) with another chain head"), "\(error)")
        }
        XCTAssertEqual(try EventLog.verify(directory.path).sealProblems.count, 1)
        try writeFile(path, goodBytes)
        XCTAssertTrue(try EventLog.verify(directory.path).isOK)
    }

    /// A crash after the seal and before the next segment: the last segment is
    /// sealed; open drops that seal and appends.
    func testSealedLastSegmentAfterCrashDuringRotation() throws {
        let directory = TemporaryDirectory(inMemory: true)
        try makeLog(directory, count: count, segmentSize: segmentSize)
        let names = try segments(directory)
        let last = names[names.count - 1], previous = names[names.count - 2]
        try File.unlink(segmentPath(directory, last))
        XCTAssertTrue(File.exists(sealPath(directory, previous)))
        XCTAssertTrue(try EventLog.verify(directory.path).isOK)
        let log = try EventLog.open(directory.path, options: fastOptions())
        XCTAssertEqual(log.lastSeq, last - 1)
        XCTAssertFalse(File.exists(sealPath(directory, previous)))
        let seq = try log.append(time: 5, keys: RecordKeys(type: 2), payload: [7])
        try log.waitDurable(seq)
        try log.close()
        XCTAssertTrue(try EventLog.verify(directory.path).isOK)
        XCTAssertEqual(try EventLog.open(directory.path, options: fastOptions(readOnly: true)).lastSeq, seq)
    }

    /// Replay from a seq reads from that seq's segment on: damage before it is not read.
    func testReaderFromSeqStartsInItsSegment() throws {
        let directory = TemporaryDirectory(inMemory: true)
        try makeLog(directory, count: count, segmentSize: segmentSize)
        let names = try segments(directory)
        try flipBit(segmentPath(directory, names[0]), at: SegmentHeader.size + 10)
        let from = names[3] + 2
        let reader = try LogReader(logDirectory: directory.log, from: from)
        var seqs: [UInt64] = []
        while case .record(let record) = reader.next() { seqs.append(record.seq) }
        XCTAssertEqual(seqs, Array(from...UInt64(count)))
        if case .end = reader.next() {} else { XCTFail("expected the clean end") }
    }

    func testRepairMovesTheSealsOfWhatItCuts() throws {
        let directory = TemporaryDirectory(inMemory: true)
        try makeLog(directory, count: count, segmentSize: segmentSize)
        let names = try segments(directory)
        let damaged = names[2]
        try flipBit(segmentPath(directory, damaged), at: SegmentHeader.size + 60)
        assertFastRefuses(directory, segment: damaged, nil, "before repair")
        let report = try EventLog.repair(directory.path, time: 1_764_000_000_000_000) { _ in (RecordKeys(type: 1), []) }
        XCTAssertTrue(report.repaired)
        for name in names where name >= damaged { XCTAssertFalse(File.exists(sealPath(directory, name)), "seal \(name)") }
        XCTAssertTrue(try EventLog.verify(directory.path).isOK)
        // Append past the old segment boundaries: new rotations seal the new segments.
        let log = try EventLog.open(directory.path, options: fastOptions())
        for index in 0..<count { try log.append(time: Int64(index), keys: Fixture.keys(index), payload: Fixture.payload(index)) }
        try log.waitDurable(log.lastSeq)
        try log.close()
        let verified = try EventLog.verify(directory.path)
        XCTAssertTrue(verified.isOK, "\(verified)")
        XCTAssertEqual(verified.sealsChecked, verified.segments - 1)
        XCTAssertNoThrow(try EventLog.open(directory.path, options: fastOptions(readOnly: true)))
    }
}
