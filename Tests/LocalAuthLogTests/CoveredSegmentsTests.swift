// S-49 as amended by issue 34 item 3: the daemon's open leaves the records
// of the sealed segments that the newest snapshot wholly covers unhashed
// (`deferCoveredSegments`), still checks their headers, lengths and seams,
// and `checkDeferred` later refuses exactly what the hashing open refuses.

import LocalAuthSystem
import XCTest

@testable import LocalAuthLog
import LocalAuthTestSupport

final class CoveredSegmentsTests: XCTestCase {
    private let segmentSize = 600
    private let count = 120

    private func options(deferring: Bool = true, readOnly: Bool = false) -> EventLog.Options {
        .init(segmentSize: segmentSize, verification: .sealed, readOnly: readOnly, deferCoveredSegments: deferring)
    }

    /// A log of sealed segments and a snapshot file at `seq` (its contents do not matter to the open).
    private func given(_ directory: TemporaryDirectory, snapshotAt seq: (_ names: [UInt64]) -> UInt64) throws
        -> (names: [UInt64], positions: [LogPosition], snapshot: UInt64) {
        let positions = try makeLog(directory, count: count, segmentSize: segmentSize)
        let names = try LogReader(logDirectory: directory.log).segments
        XCTAssertGreaterThan(names.count, 6)
        let at = seq(names)
        try SnapshotStore(directory: directory.path).write(seq: at, chainHead: .zero, time: 0, payload: [1])
        return (names, positions, at)
    }

    func test_S49_openDefersOnlyTheSegmentsTheNewestSnapshotWhollyCovers() throws {
        let directory = TemporaryDirectory(inMemory: true)
        // The snapshot ends inside the fourth segment: three are wholly covered.
        let (names, _, _) = try given(directory) { $0[3] + 1 }
        let log = try EventLog.open(directory.path, options: options(readOnly: true))
        XCTAssertEqual(log.recovery.deferredSegments.map(\.firstSeq), Array(names.prefix(3)))
        XCTAssertEqual(log.recovery.sealedSegmentsTrusted, names.count - 1 - 3, "the others are hashed at open")
        XCTAssertEqual(log.lastSeq, UInt64(count))
        XCTAssertNil(log.checkDeferred(log.recovery.deferredSegments))
        let split = log.deferredSegments(coveredThrough: names[2] - 1)
        XCTAssertEqual(split.covered.map(\.firstSeq), Array(names.prefix(2)))
        XCTAssertEqual(split.uncovered.map(\.firstSeq), [names[2]])
        let hashing = try EventLog.open(directory.path, options: options(deferring: false, readOnly: true))
        XCTAssertEqual(hashing.recovery.deferredSegments, [])
        XCTAssertEqual(try XCTUnwrap(try? log.chainHead(at: UInt64(count))), try hashing.chainHead(at: UInt64(count)))
    }

    func test_S49_changedRecordInACoveredSegmentOpensAndTheLaterCheckRefusesAsTheOpenWould() throws {
        let directory = TemporaryDirectory(inMemory: true)
        let (names, positions, _) = try given(directory) { $0[4] }
        let segment = names[1]
        let path = segmentPath(directory, segment)
        let inSegment = positions.filter { $0.segment == segment }
        let middle = inSegment[inSegment.count / 2].offset
        let last = try readFile(path).count - 1
        for offset in [0, 1, 4, 8, 16, 24, 32].map({ middle + $0 }) + [last] {
            try flipBit(path, at: offset, bit: offset % 8)
            var hashing: LogError?
            do { _ = try EventLog.open(directory.path, options: options(deferring: false, readOnly: true)) } catch { hashing = error }
            XCTAssertNotNil(hashing, "flip at \(offset): the hashing open refuses")
            for readOnly in [true, false] {
                let log = try EventLog.open(directory.path, options: options(readOnly: readOnly))
                XCTAssertTrue(log.recovery.deferredSegments.contains { $0.firstSeq == segment }, "flip at \(offset)")
                let found = log.checkDeferred(log.recovery.deferredSegments)
                XCTAssertEqual(found, hashing, "flip at \(offset): the same refusal, naming the same record")
                XCTAssertTrue("\(found.map { "\($0)" } ?? "")".contains("localauthctl repair"))
                try log.close()
            }
            try flipBit(path, at: offset, bit: offset % 8)
        }
    }

    func test_S49_headerLengthAndSeamsOfCoveredSegmentsAreStillCheckedAtOpen() throws {
        let directory = TemporaryDirectory(inMemory: true)
        let (names, _, _) = try given(directory) { $0[4] }
        let segment = names[2]
        let path = segmentPath(directory, segment)
        // The header (magic, first seq, chain before, CRC), then a cut.
        for offset in [0, 16, 24, 56, 63] {
            try flipBit(path, at: offset, bit: offset % 8)
            XCTAssertThrowsError(try EventLog.open(directory.path, options: options(readOnly: true)), "flip at \(offset)") { error in
                guard case LogError.untrustworthy(let corruption) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(corruption.segment, segment, "\(corruption)")
            }
            try flipBit(path, at: offset, bit: offset % 8)
        }
        let original = try readFile(path)
        try writeFile(path, Array(original.dropLast(3)))
        XCTAssertThrowsError(try EventLog.open(directory.path, options: options(readOnly: true)), "a cut covered segment")
        try writeFile(path, original)
        // A missing covered segment.
        try FileManager.default.removeItem(atPath: path)
        XCTAssertThrowsError(try EventLog.open(directory.path, options: options(readOnly: true)), "a missing covered segment")
    }

    func test_S49_withoutASnapshotOrPastItNothingIsDeferred() throws {
        let directory = TemporaryDirectory(inMemory: true)
        let (names, positions, _) = try given(directory) { $0[1] - 1 }
        XCTAssertEqual(try EventLog.open(directory.path, options: options(readOnly: true)).recovery.deferredSegments.map(\.firstSeq),
                       [names[0]])
        // A changed record after the snapshot is refused at open, as before.
        let segment = names[3]
        let offset = try XCTUnwrap(positions.first { $0.segment == segment }).offset + 20
        try flipBit(segmentPath(directory, segment), at: offset, bit: 1)
        XCTAssertThrowsError(try EventLog.open(directory.path, options: options(readOnly: true)))
    }
}
