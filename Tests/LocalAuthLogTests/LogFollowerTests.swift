// LogFollower, "what was appended since X": each record once, in order, across
// a rotation between two calls, while the writer is live (preallocated zeros
// ahead of its records); a write caught half done stops the records there
// until it is complete; a corrupt log stops them for good.

import LocalAuthCore
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

@testable import LocalAuthLog

final class LogFollowerTests: XCTestCase {
    private func seqs(_ follower: inout LogFollower) throws -> (seqs: [UInt64], stop: LogFollower.Stop) {
        var seqs: [UInt64] = []
        let stop = try follower.appended { seqs.append($0.seq) }
        return (seqs, stop)
    }

    private func append(_ log: EventLog, _ range: ClosedRange<Int>) throws {
        for index in range {
            try log.append(time: Fixture.time(index), keys: Fixture.keys(index), payload: Fixture.payload(index))
        }
        try log.waitDurable(UInt64(range.upperBound))
    }

    func testAppendedHandsOutEachRecordOnceAcrossARotationBetweenTwoCalls() throws {
        let directory = TemporaryDirectory()
        let log = try EventLog.open(directory.path, options: .init(segmentSize: 1024))
        defer { try? log.close() }
        try append(log, 1...3)
        var follower = LogFollower(logDirectory: directory.log)
        XCTAssertEqual(try seqs(&follower).seqs, [1, 2, 3])
        XCTAssertEqual(try seqs(&follower).seqs, [], "nothing appended since")
        XCTAssertEqual(try seqs(&follower).stop, .caughtUp)
        let segmentsBefore = try Directory.entries(directory.log).compactMap { SegmentName.parse($0) }.count

        try append(log, 4...60)
        let segmentsAfter = try Directory.entries(directory.log).compactMap { SegmentName.parse($0) }.count
        XCTAssertGreaterThan(segmentsAfter, segmentsBefore, "the log rotated between the two calls")
        let after = try seqs(&follower)
        XCTAssertEqual(after.seqs, Array(4...60), "every record since seq 3, once, in order")
        XCTAssertEqual(after.stop, .caughtUp)
        XCTAssertEqual(follower.lastSeq, 60)

        try append(log, 61...61)
        XCTAssertEqual(try seqs(&follower).seqs, [61], "a record written into preallocated space")
    }

    func testAppendedAfterASeqStartsAfterIt() throws {
        let directory = TemporaryDirectory()
        try makeLog(directory, count: 9, segmentSize: 1024)
        var follower = LogFollower(logDirectory: directory.log, after: 6)
        XCTAssertEqual(try seqs(&follower).seqs, [7, 8, 9])
        var beyond = LogFollower(logDirectory: directory.log, after: 9)
        XCTAssertEqual(try seqs(&beyond).seqs, [])
    }

    func testATornTailStopsTheRecordsUntilTheWriteIsComplete() throws {
        let directory = TemporaryDirectory()
        let positions = try makeLog(directory, count: 5)
        let path = segmentPath(directory, 1)
        let original = try readFile(path)
        let start = positions[4].offset
        // The last record caught half written, in the zeros ahead of it.
        try writeFile(path, Array(original[..<(start + 12)]) + [UInt8](repeating: 0, count: 8192))
        var follower = LogFollower(logDirectory: directory.log)
        let first = try seqs(&follower)
        XCTAssertEqual(first.seqs, [1, 2, 3, 4])
        guard case .tornTail(let torn) = first.stop else { return XCTFail("\(first.stop)") }
        XCTAssertEqual(torn.offset, start)
        XCTAssertEqual(try seqs(&follower).seqs, [], "still torn: nothing more")
        XCTAssertEqual(try seqs(&follower).seqs, [], "still torn: nothing more")

        try writeFile(path, original + [UInt8](repeating: 0, count: 8192))
        let completed = try seqs(&follower)
        XCTAssertEqual(completed.seqs, [5], "the completed record, once")
        XCTAssertEqual(completed.stop, .caughtUp)
    }

    func testCorruptionStopsTheRecordsBeforeIt() throws {
        let directory = TemporaryDirectory()
        let positions = try makeLog(directory, count: 5)
        try flipBit(segmentPath(directory, 1), at: positions[2].offset + 20)
        var follower = LogFollower(logDirectory: directory.log)
        let read = try seqs(&follower)
        XCTAssertEqual(read.seqs, [1, 2])
        guard case .corruption = read.stop else { return XCTFail("\(read.stop)") }
    }

    func testAnEmptyOrMissingLogHasNothing() throws {
        let directory = TemporaryDirectory()
        var follower = LogFollower(logDirectory: directory.log)
        XCTAssertThrowsError(try seqs(&follower), "no log directory: the reader's error")
        try Directory.create(directory.log, mode: 0o700)
        var empty = LogFollower(logDirectory: directory.log)
        XCTAssertEqual(try seqs(&empty).seqs, [])
    }
}
