// FORMAT.md "Hash chain" (format version 2), checked against the definition
// itself: chain[n] = SHA-256(chain[f-1] || records f...n as on disk), f the
// first seq of n's segment, recomputed here with one-shot SHA-256 over bytes
// read straight from the segment files, not with the log's own ChainStream.

import LocalAuthSystem
import XCTest

@testable import LocalAuthLog
import LocalAuthTestSupport

final class ChainDefinitionTests: XCTestCase {
    func testStreamFedInPiecesEqualsOneHash() {
        let before = ChainHead(bytes: (0..<32).map { UInt8($0 * 7 & 0xFF) })!
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }
        let whole = Self.definition(before, bytes)
        // Every split point, including empty pieces and the 64-byte block edges.
        for split in [0, 1, 31, 32, 55, 56, 63, 64, 65, 127, 128, 500, 999, 1000] {
            var stream = ChainStream(before: before)
            bytes.withUnsafeBytes { raw in
                stream.append(UnsafeRawBufferPointer(rebasing: raw[..<split]))
                stream.append(UnsafeRawBufferPointer(rebasing: raw[split...]))
            }
            XCTAssertEqual(stream.head, whole, "split at \(split)")
        }
    }

    func testHeadOfAStreamWithoutRecordsIsTheHeadBefore() {
        let before = ChainHead(bytes: [UInt8](repeating: 0xAB, count: 32))!
        var stream = ChainStream(before: before)
        XCTAssertEqual(stream.head, before)
        stream.append(UnsafeRawBufferPointer(start: nil, count: 0))
        XCTAssertEqual(stream.head, before, "an empty append is no record")
        XCTAssertEqual(ChainStream(before: .zero).head, .zero)
    }

    func testReadingAHeadDoesNotEndTheStream() {
        var stream = ChainStream(before: .zero)
        let first: [UInt8] = Array(repeating: 1, count: 70), second: [UInt8] = Array(repeating: 2, count: 90)
        first.withUnsafeBytes { stream.append($0) }
        let copy = stream
        XCTAssertEqual(stream.head, Self.definition(.zero, first))
        XCTAssertEqual(stream.head, copy.head, "reading twice gives the same head")
        second.withUnsafeBytes { stream.append($0) }
        XCTAssertEqual(stream.head, Self.definition(.zero, first + second))
        XCTAssertEqual(copy.head, Self.definition(.zero, first), "a copy is a fork")
    }

    /// Records of many sizes over many segments, written in chunks of every
    /// size: every head the log gives (reader, writer, seals, snapshots'
    /// `chainHead(at:)`, the next header) is the definition's.
    func testEveryHeadIsTheDefinitionsAcrossSegments() throws {
        let directory = TemporaryDirectory()
        let log = try EventLog.open(directory.path, options: .init(segmentSize: 700, syncPolicy: .onDemand, chainMarkEvery: 7))
        var seq = 0
        for size in 1...12 {
            for _ in 0..<size {
                seq += 1
                // Payloads from 0 to 150 bytes: records straddle block edges every way.
                let payload = (0..<(seq * 37 % 151)).map { UInt8(truncatingIfNeeded: $0 ^ seq) }
                try log.append(time: Fixture.time(seq), keys: Fixture.keys(seq), payload: payload)
            }
            try log.write()
        }
        try log.waitDurable(UInt64(seq))
        let expected = try headsByDefinition(directory.log)
        XCTAssertEqual(expected.count, seq)
        XCTAssertGreaterThan(try Directory.entries(directory.log).filter { $0.hasSuffix(".seg") }.count, 5, "spans rotations")

        let reader = try LogReader(logDirectory: directory.log, chain: .full)
        while case .record(let record) = reader.next() {
            XCTAssertEqual(reader.chainHead, expected[record.seq], "reader at \(record.seq)")
        }
        // Read without asking on the way: the head at the end is the same.
        let quiet = try LogReader(logDirectory: directory.log, chain: .full)
        while case .record = quiet.next() {}
        XCTAssertEqual(quiet.chainHead, expected[UInt64(seq)])
        for at in [1, 2, 7, 8, 40, seq - 1, seq] {
            XCTAssertEqual(try log.chainHead(at: UInt64(at)), expected[UInt64(at)], "chainHead(at: \(at))")
        }
        for mark in stride(from: 7, through: seq, by: 7) where log.writer?.markedChain(UInt64(mark)) != nil {
            XCTAssertEqual(log.writer?.markedChain(UInt64(mark)), expected[UInt64(mark)], "kept head at \(mark)")
        }
        // Seals and the next header carry the head after each finished segment.
        for name in try Directory.entries(directory.log) where name.hasSuffix(".seg") {
            guard let first = SegmentName.parse(name, suffix: ".seg"), let seal = SegmentSeal.load(DiskStorage.shared, directory.log, first)
            else { continue }
            XCTAssertEqual(seal.chainHead, expected[seal.lastSeq], "seal of \(name)")
            let next = try header(directory.log + "/" + SegmentName.fileName(seal.lastSeq + 1))
            XCTAssertEqual(next.chainBefore, expected[seal.lastSeq], "header after \(name)")
        }
        try log.close()
        let verified = try EventLog.verify(directory.path)
        XCTAssertNil(verified.corruption)
        XCTAssertEqual(verified.chainHead, expected[UInt64(seq)])
    }

    func testAVersionOneSegmentIsRefusedByName() throws {
        let directory = TemporaryDirectory()
        let log = try EventLog.open(directory.path, options: .init(syncPolicy: .onDemand))
        for seq in 1...3 { try log.append(time: Fixture.time(seq), keys: Fixture.keys(seq), payload: Fixture.payload(seq)) }
        try log.close()
        // Rewrite the header as version 1, with a valid header checksum.
        let path = directory.log + "/" + SegmentName.fileName(1)
        var bytes = try readFile(path)
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt32(1).littleEndian, toByteOffset: 8, as: UInt32.self)
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<60]))
            raw.storeBytes(of: crc.littleEndian, toByteOffset: 60, as: UInt32.self)
        }
        try writeFile(path, bytes)
        XCTAssertThrowsError(try EventLog.open(directory.path, options: .init(syncPolicy: .onDemand))) { error in
            guard case LogError.untrustworthy(let corruption) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(corruption.reason, .badSegmentHeader)
            XCTAssertTrue(corruption.detail.contains("format version 1"), corruption.detail)
        }
    }

    // MARK: The definition, from the files.

    static func definition(_ before: ChainHead, _ records: [UInt8]) -> ChainHead {
        ChainHead(digest: SHA256.hash(before.bytes + records))
    }

    func header(_ path: String) throws -> SegmentHeader {
        let bytes = try readFile(path)
        return try XCTUnwrap(bytes.withUnsafeBytes { SegmentHeader.decode($0) })
    }

    /// chain[n] for every record, by FORMAT.md: per segment, the header's
    /// head then the records' bytes so far, hashed in one piece each time.
    func headsByDefinition(_ logDirectory: String) throws -> [UInt64: ChainHead] {
        var heads: [UInt64: ChainHead] = [:]
        let names = try Directory.entries(logDirectory).compactMap { SegmentName.parse($0, suffix: ".seg") }.sorted()
        for name in names {
            let bytes = try readFile(logDirectory + "/" + SegmentName.fileName(name))
            let before = try header(logDirectory + "/" + SegmentName.fileName(name)).chainBefore
            var offset = SegmentHeader.size
            var seq = name
            while offset + 8 <= bytes.count {
                let length = bytes.withUnsafeBytes { Int(RecordFormat.u32($0, offset)) }
                if length == 0 { break }  // preallocated zeros
                offset += 8 + length
                heads[seq] = Self.definition(before, Array(bytes[SegmentHeader.size..<offset]))
                seq += 1
            }
        }
        return heads
    }
}
