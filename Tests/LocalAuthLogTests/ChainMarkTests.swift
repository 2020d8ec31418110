// Options.chainMarkEvery: the writer keeps chain[seq] at multiples of the
// interval, so `chainHead(at:)` answers for a snapshot's seq after later
// records became durable, without rereading the segment. The kept heads
// must equal the chain a full read computes, across writes of any size,
// segment rotations and a reopen (whose scan keeps the heads it passes);
// older ones fall back to the reread.

import LocalAuthSystem
import XCTest

@testable import LocalAuthLog
import LocalAuthTestSupport

final class ChainMarkTests: XCTestCase {
    func testKeptHeadsEqualTheFullChainAcrossWritesAndRotations() throws {
        let directory = TemporaryDirectory()
        let options = EventLog.Options(segmentSize: 400, syncPolicy: .onDemand, chainMarkEvery: 10)
        var log = try EventLog.open(directory.path, options: options)
        var seq = 0
        // Writes of every size from 1 to 13 records: marks fall at the start,
        // the middle and the end of chunks, and in chunks that open a segment.
        for size in 1...13 {
            for _ in 0..<size {
                seq += 1
                try log.append(time: Fixture.time(seq), keys: Fixture.keys(seq), payload: Fixture.payload(seq))
            }
            try log.write()
        }
        try log.waitDurable(UInt64(seq))
        XCTAssertEqual(seq, 91)
        let heads = try fullChain(directory)
        XCTAssertGreaterThan(Set(try positions(directory).map(\.segment)).count, 5, "the test spans rotations")
        for mark: UInt64 in [60, 70, 80, 90] {
            XCTAssertEqual(log.writer?.markedChain(mark), heads[mark], "kept head at \(mark)")
            XCTAssertEqual(try log.chainHead(at: mark), heads[mark])
        }
        // Only the last four are kept; not-multiples never are. chainHead
        // still answers (from the segment).
        for seq: UInt64 in [10, 50, 55, 91] {
            XCTAssertNil(log.writer?.markedChain(seq), "\(seq)")
        }
        for seq: UInt64 in [10, 50, 55, 91] { XCTAssertEqual(try log.chainHead(at: seq), heads[seq]) }
        try log.close()

        // After a reopen the marks continue from the recovered last seq.
        log = try EventLog.open(directory.path, options: options)
        for _ in 0..<20 {
            seq += 1
            try log.append(time: Fixture.time(seq), keys: Fixture.keys(seq), payload: Fixture.payload(seq))
        }
        try log.waitDurable(UInt64(seq))
        let again = try fullChain(directory)
        XCTAssertEqual(log.writer?.markedChain(100), again[100])
        XCTAssertEqual(log.writer?.markedChain(110), again[110])
        // The open's scan kept the heads it passed (OpenChainMarksTests); the oldest fell out.
        XCTAssertEqual(log.writer?.markedChain(90), again[90], "heads the reopen's scan passed are kept")
        XCTAssertNil(log.writer?.markedChain(70), "only the last four are kept")
        XCTAssertEqual(try log.chainHead(at: 100), again[100])
        try log.close()
    }

    func testWithoutAnIntervalNothingIsKept() throws {
        let directory = TemporaryDirectory()
        let log = try EventLog.open(directory.path, options: .init(segmentSize: 400, syncPolicy: .onDemand))
        for seq in 1...30 { try log.append(time: Fixture.time(seq), keys: Fixture.keys(seq), payload: Fixture.payload(seq)) }
        try log.waitDurable(30)
        for seq: UInt64 in 1...30 { XCTAssertNil(log.writer?.markedChain(seq)) }
        XCTAssertEqual(try log.chainHead(at: 20), try fullChain(directory)[20])
        try log.close()
    }

    private func fullChain(_ directory: TemporaryDirectory) throws -> [UInt64: ChainHead] {
        var heads: [UInt64: ChainHead] = [:]
        let reader = try LogReader(logDirectory: directory.log, chain: .full)
        while case .record(let record) = reader.next() { heads[record.seq] = reader.chainHead }
        return heads
    }
}
