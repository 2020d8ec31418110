// Preallocation (FORMAT.md "Preallocation"): the writer keeps zeros ahead of
// its records; readers take them for the clean end of the last segment; a
// finished segment is cut to its records before it is sealed; reopening goes
// on right after the last record. (A kill loses nothing written:
// OnDemandSyncTests.testRecordsWrittenBeforeSIGKILLAreAllThereWithPreallocation.)

import LocalAuthSystem
import XCTest

@testable import LocalAuthLog

final class PreallocationTests: XCTestCase {
    private let step = 4096

    private func options(segmentSize: Int = 64 << 20, policy: SyncPolicy = .eachAppend) -> EventLog.Options {
        .init(segmentSize: segmentSize, syncPolicy: policy, preallocation: step)
    }

    private func fileSize(_ path: String) throws -> Int {
        let file = try FileDescriptor.open(path, .readOnly)
        defer { try? file.close() }
        return Int(try file.size())
    }

    func testZerosAheadOfTheRecordsAreTheCleanEndAndReopenGoesOnAfterTheLastRecord() throws {
        let directory = TemporaryDirectory()
        var log = try EventLog.open(directory.path, options: options())
        for index in 1...50 { try log.append(time: Fixture.time(index), keys: Fixture.keys(index), payload: Fixture.payload(index)) }
        try log.waitDurable(50)
        let path = segmentPath(directory, 1)
        let size = try fileSize(path)
        XCTAssertEqual(size % step, 0, "whole steps are preallocated")
        try log.close()
        let reader = try LogReader(logDirectory: directory.log, chain: .full)
        var seqs: [UInt64] = []
        while case .record(let record) = reader.next() { seqs.append(record.seq) }
        XCTAssertEqual(seqs, Array(1...50))
        guard case .end = reader.next() else { return XCTFail("the zeros are the clean end") }
        let dataEnd = reader.currentOffset
        XCTAssertLessThan(dataEnd, size, "zeros follow the records")
        XCTAssertTrue(try readFile(path)[dataEnd...].allSatisfy { $0 == 0 })

        for round in 0..<3 {
            log = try EventLog.open(directory.path, options: options())
            XCTAssertNil(log.recovery.tornTail, "round \(round)")
            XCTAssertEqual(log.recovery.lastSeq, UInt64(50 + 10 * round))
            for index in 1...10 {
                let seq = try log.append(time: Fixture.time(index), keys: Fixture.keys(index), payload: Fixture.payload(index))
                XCTAssertEqual(seq, UInt64(50 + 10 * round + index))
            }
            try log.close()
        }
        XCTAssertEqual(try readAll(directory).seqs, Array(1...80))
        XCTAssertTrue(try EventLog.verify(directory.path).isOK)
        // Tools that do not preallocate read and append to the same log.
        let plain = try EventLog.open(directory.path)
        XCTAssertNil(plain.recovery.tornTail)
        XCTAssertEqual(try plain.append(time: 1, keys: RecordKeys(type: 1), payload: [1]), 81)
        try plain.close()
        XCTAssertTrue(try EventLog.verify(directory.path).isOK)
    }

    func testFinishedSegmentsAreCutToTheirRecordsBeforeTheyAreSealed() throws {
        let directory = TemporaryDirectory()
        let log = try EventLog.open(directory.path, options: options(segmentSize: 3000, policy: .onDemand))
        for index in 1...400 {
            try log.append(time: Fixture.time(index), keys: Fixture.keys(index), payload: Fixture.payload(index))
            if index % 7 == 0 { try log.write() }
        }
        try log.close()
        let names = try LogReader(logDirectory: directory.log).segments
        XCTAssertGreaterThan(names.count, 5)
        for name in names.dropLast() {
            let seal = try XCTUnwrap(SegmentSeal.load(directory.log, name), "seal of \(name)")
            XCTAssertEqual(try fileSize(segmentPath(directory, name)), seal.length, "segment \(name) holds nothing after its records")
        }
        let fast = try EventLog.open(directory.path, options: .init(segmentSize: 3000, verification: .sealed))
        XCTAssertEqual(fast.recovery.lastSeq, 400)
        XCTAssertEqual(fast.recovery.sealsWritten, 0, "every seal matched its cut segment")
        try fast.close()
        XCTAssertTrue(try EventLog.verify(directory.path).isOK)
    }
}
