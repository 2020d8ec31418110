// Records come back as written (every key combination, empty and large
// payloads), across reopen and rotation; reads start at any seq; the indexes
// find each context's and user's records.

import LocalAuthCore
import LocalAuthSystem
import XCTest

@testable import LocalAuthLog
import LocalAuthTestSupport

final class RoundTripTests: XCTestCase {
    func testRoundTripAllKeyCombinations() throws {
        let directory = TemporaryDirectory()
        let count = 64
        try makeLog(directory, count: count)
        let reader = try LogReader(logDirectory: directory.log, chain: .full)
        for index in 1...count {
            guard case .record(let record) = reader.next() else { return XCTFail("missing record \(index)") }
            XCTAssertEqual(record.seq, UInt64(index))
            XCTAssertEqual(record.time, Fixture.time(index))
            XCTAssertEqual(record.keys, Fixture.keys(index))
            XCTAssertEqual(Array(record.payload), Fixture.payload(index))
        }
        guard case .end = reader.next() else { return XCTFail("expected clean end") }
        XCTAssertEqual(try EventLog.verify(directory.path).isOK, true)
    }

    /// Records are built on the stack when header and payload fit in 256
    /// bytes, else the payload follows the header: both sides of the
    /// boundary encode the same layout (each byte of the record as a simple
    /// reference writes it) and read back with their CRC and chain checked.
    func testRecordsOnBothSidesOfTheStackBufferBoundary() throws {
        let sizes = [0, 1, 7, 8, 100, 206, 207, 208, 209, 210, 300, 4096]
        for (index, size) in sizes.enumerated() {
            let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }
            let keys = Fixture.keys(index)
            var encoded: [UInt8] = [0xEE]  // encode appends: what was there stays
            payload.withUnsafeBytes {
                RecordFormat.encode(seq: UInt64(index + 1), time: Fixture.time(index), keys: keys, payload: $0, into: &encoded)
            }
            XCTAssertEqual(encoded.first, 0xEE)
            XCTAssertEqual(Array(encoded.dropFirst()), referenceRecord(seq: UInt64(index + 1), time: Fixture.time(index), keys: keys,
                                                                       payload: payload), "payload of \(size) bytes")
        }
        let directory = TemporaryDirectory()
        let log = try EventLog.open(directory.path)
        for (index, size) in sizes.enumerated() {
            try log.append(time: Fixture.time(index), keys: Fixture.keys(index), payload: [UInt8](repeating: UInt8(index), count: size))
        }
        try log.waitDurable(UInt64(sizes.count))
        try log.close()
        let reader = try LogReader(logDirectory: directory.log, chain: .full)
        for (index, size) in sizes.enumerated() {
            guard case .record(let record) = reader.next() else { return XCTFail("missing record \(index + 1)") }
            XCTAssertEqual(Array(record.payload), [UInt8](repeating: UInt8(index), count: size))
            XCTAssertEqual(record.keys, Fixture.keys(index))
        }
        XCTAssertTrue(try EventLog.verify(directory.path).isOK)
    }

    /// FORMAT.md's record layout, written field by field.
    private func referenceRecord(seq: UInt64, time: Int64, keys: RecordKeys, payload: [UInt8]) -> [UInt8] {
        func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
        func be(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
        var flags: UInt16 = 0
        if keys.uid != nil { flags |= 1 }
        if keys.context != nil { flags |= 2 }
        var body = le(seq) + le(time) + le(keys.type) + le(flags) + le(keys.uid ?? 0)
        body += keys.context.map { be($0.high) + be($0.low) } ?? [UInt8](repeating: 0, count: 16)
        body += payload
        return le(UInt32(body.count)) + le(CRC32C.checksum(body)) + body
    }

    func testLargePayloadAndEmptyPayload() throws {
        let directory = TemporaryDirectory()
        let log = try EventLog.open(directory.path)
        let big = [UInt8](repeating: 0xAB, count: 1 << 20)
        try log.append(time: 1, keys: RecordKeys(type: 1), payload: big)
        try log.append(time: 2, keys: RecordKeys(type: 2), payload: [])
        XCTAssertThrowsError(try log.append(time: 3, keys: RecordKeys(type: 3), payload: [UInt8](repeating: 0, count: (16 << 20) + 1)))
        try log.waitDurable(2)
        try log.close()
        let (seqs, last) = try readAll(directory)
        XCTAssertEqual(seqs, [1, 2])
        guard case .end = last else { return XCTFail("\(last)") }
    }

    func testReopenContinuesSeqAndChain() throws {
        let directory = TemporaryDirectory()
        try makeLog(directory, count: 10, segmentSize: 300)
        let log = try EventLog.open(directory.path, options: .init(segmentSize: 300))
        XCTAssertEqual(log.recovery.lastSeq, 10)
        XCTAssertEqual(try log.append(time: 5, keys: RecordKeys(type: 1), payload: [1, 2, 3]), 11)
        try log.waitDurable(11)
        try log.close()
        let report = try EventLog.verify(directory.path)
        XCTAssertTrue(report.isOK, "\(report)")
        XCTAssertEqual(report.lastSeq, 11)
    }

    func testRotationAtSmallSegmentSize() throws {
        let directory = TemporaryDirectory()
        let positions = try makeLog(directory, count: 100, segmentSize: 512)
        let segments = Set(positions.map(\.segment)).sorted()
        XCTAssertGreaterThan(segments.count, 10)
        let names = try Directory.entries(directory.log).filter { $0.hasSuffix(".seg") }
        XCTAssertEqual(names, segments.map { SegmentName.fileName($0) })
        for segment in segments {
            let size = try readFile(segmentPath(directory, segment)).count
            XCTAssertLessThanOrEqual(size, 512)
            XCTAssertEqual(positions.first { $0.segment == segment }?.offset, 64)
        }
        // Each segment is named by the first seq it holds.
        let reader = try LogReader(logDirectory: directory.log, chain: .full)
        while case .record(let record) = reader.next() {
            if record.position.offset == 64 { XCTAssertEqual(record.position.segment, record.seq) }
        }
        let report = try EventLog.verify(directory.path)
        XCTAssertTrue(report.isOK, "\(report)")
        XCTAssertEqual(report.segments, segments.count)
        XCTAssertTrue(try Directory.entries(directory.log).allSatisfy { !$0.hasSuffix(".tmp") })
    }

    func testReadFromSeq() throws {
        let directory = TemporaryDirectory()
        try makeLog(directory, count: 50, segmentSize: 400)
        for start: UInt64 in [1, 2, 17, 49, 50] {
            let reader = try LogReader(logDirectory: directory.log, from: start, chain: .full)
            guard case .record(let record) = reader.next() else { return XCTFail("no record at \(start)") }
            XCTAssertEqual(record.seq, start)
        }
        let reader = try LogReader(logDirectory: directory.log, from: 51)
        guard case .end = reader.next() else { return XCTFail("expected end after the last seq") }
    }

    func testChainHeadAtSeqMatchesFullReplay() throws {
        let directory = TemporaryDirectory()
        try makeLog(directory, count: 30, segmentSize: 400)
        var heads: [UInt64: ChainHead] = [:]
        let reader = try LogReader(logDirectory: directory.log, chain: .full)
        while case .record(let record) = reader.next() { heads[record.seq] = reader.chainHead }
        let log = try EventLog.open(directory.path, options: .init(segmentSize: 400))
        for seq: UInt64 in [1, 7, 15, 29, 30] { XCTAssertEqual(try log.chainHead(at: seq), heads[seq]) }
        XCTAssertEqual(try log.chainHead(at: 0), .zero)
        try log.close()
    }

    func testIndexLookupsLiveAndAfterReopen() throws {
        let directory = TemporaryDirectory()
        let log = try EventLog.open(directory.path, options: .init(segmentSize: 600))
        for index in 1...80 {
            try log.append(time: Fixture.time(index), keys: Fixture.keys(index), payload: Fixture.payload(index))
        }
        // Read before durability: served from the writer's memory or the file.
        func check(_ log: EventLog) throws {
            let expectedA = (1...80).filter { Fixture.keys($0).context == Fixture.contextA }
            XCTAssertEqual(try log.history(context: Fixture.contextA).map(\.seq), expectedA.map(UInt64.init))
            for record in try log.history(context: Fixture.contextA) {
                XCTAssertEqual(record.payload, Fixture.payload(Int(record.seq)))
                XCTAssertEqual(record.keys, Fixture.keys(Int(record.seq)))
            }
            let expected1001 = (1...80).filter { Fixture.keys($0).uid == 1001 }
            XCTAssertEqual(try log.history(uid: 1001).map(\.seq), expected1001.map(UInt64.init))
            XCTAssertEqual(log.positions(uid: 424_242), [])
            XCTAssertEqual(log.positions(context: ContextID(high: 9, low: 9)), [])
        }
        try check(log)
        try log.waitDurable(80)
        try check(log)
        try log.close()
        let reopened = try EventLog.open(directory.path, options: .init(segmentSize: 600))
        try check(reopened)
        try reopened.close()
        let readOnly = try EventLog.open(directory.path, options: .init(readOnly: true))
        try check(readOnly)
    }

    func testReadOnlyOpenChangesNothing() throws {
        let directory = TemporaryDirectory()
        let positions = try makeLog(directory, count: 5)
        let path = segmentPath(directory, 1)
        let size = try readFile(path).count
        try truncateFile(path, to: size - 3)
        let log = try EventLog.open(directory.path, options: .init(readOnly: true))
        XCTAssertEqual(log.recovery.tornTail?.offset, positions[4].offset)
        XCTAssertEqual(try readFile(path).count, size - 3)
        XCTAssertThrowsError(try log.append(time: 0, keys: RecordKeys(type: 0), payload: []))
    }
}
