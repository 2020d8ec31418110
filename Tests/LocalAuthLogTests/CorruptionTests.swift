// The corruption table of FORMAT.md, with the damage as a parameter: cut the
// last record at every byte, flip a bit in every field of a middle record and
// of the last one, zero-filled tails (the clean end: preallocation), and
// segment files deleted, duplicated, swapped or tampered with.

import LocalAuthSystem
import XCTest

@testable import LocalAuthLog
import LocalAuthTestSupport

final class CorruptionTests: XCTestCase {
    /// Byte ranges of the record fields (FORMAT.md "Record").
    static let fields: [(name: String, range: Range<Int>)] = [
        ("length", 0..<4), ("crc", 4..<8), ("seq", 8..<16), ("time", 16..<24), ("type", 24..<26),
        ("flags", 26..<28), ("uid", 28..<32), ("context", 32..<48), ("payload", 48..<52),
    ]
    static let count = 12

    /// Record 11 has uid and context keys and a payload (Fixture.keys(11) is case 3).
    private func damagedLog(record seq: Int) throws -> (TemporaryDirectory, [LogPosition], Int) {
        let directory = TemporaryDirectory(inMemory: true)
        let positions = try makeLog(directory, count: Self.count)
        let end = seq == Self.count ? try readFile(segmentPath(directory, 1)).count : positions[seq].offset
        return (directory, positions, end - positions[seq - 1].offset)
    }

    func testCutLastRecordAtEveryByteIsTornTail() throws {
        let directory = TemporaryDirectory(inMemory: true)
        let positions = try makeLog(directory, count: Self.count)
        let path = segmentPath(directory, 1)
        let original = try readFile(path)
        let start = positions.last!.offset
        for cut in start..<original.count {
            try writeFile(path, Array(original[..<cut]))
            let log = try EventLog.open(directory.path)
            if cut == start {
                XCTAssertNil(log.recovery.tornTail, "cut at \(cut)")
            } else {
                XCTAssertEqual(log.recovery.tornTail?.offset, start, "cut at \(cut)")
                XCTAssertEqual(try readFile(log.recovery.brokenCopy!), Array(original[start..<cut]))
            }
            XCTAssertEqual(log.recovery.lastSeq, UInt64(Self.count - 1), "cut at \(cut)")
            try log.close()
            XCTAssertEqual(try readFile(path), Array(original[..<start]), "cut at \(cut)")
            XCTAssertEqual(try readAll(directory).seqs, Array(1...UInt64(Self.count - 1)))
            XCTAssertTrue(try EventLog.verify(directory.path).isOK)
            for name in try Directory.entries(directory.log) where name.contains(".broken") {
                try File.unlink(directory.log + "/" + name)
            }
        }
    }

    func testFlipInEveryFieldOfMiddleRecordIsCorruption() throws {
        let middle = 6
        for (name, range) in Self.fields {
            for offset in [range.lowerBound, range.upperBound - 1] {
                for bit in [0, 7] {
                    let (directory, positions, _) = try damagedLog(record: middle)
                    try flipBit(segmentPath(directory, 1), at: positions[middle - 1].offset + offset, bit: bit)
                    let what = "\(name) byte \(offset) bit \(bit)"
                    assertRefuses(directory, name == "length" ? [.badLength, .crcMismatch] : [.crcMismatch], seq: UInt64(middle))
                    let report = try EventLog.verify(directory.path)
                    XCTAssertEqual(report.corruption?.seq, UInt64(middle), what)
                    XCTAssertEqual(report.corruption?.offset, positions[middle - 1].offset, what)
                    XCTAssertEqual(report.corruption?.segment, 1, what)
                    XCTAssertFalse(report.isOK, what)
                }
            }
        }
    }

    func testFlipInEveryFieldOfLastRecordIsTornTail() throws {
        let last = Self.count
        for (name, range) in Self.fields {
            for offset in range {
                for bit in [0, 7] {
                    let (directory, positions, length) = try damagedLog(record: last)
                    guard offset < length else { continue }
                    try flipBit(segmentPath(directory, 1), at: positions[last - 1].offset + offset, bit: bit)
                    let what = "\(name) byte \(offset) bit \(bit)"
                    let log = try EventLog.open(directory.path)
                    XCTAssertEqual(log.recovery.tornTail?.offset, positions[last - 1].offset, what)
                    XCTAssertEqual(log.recovery.lastSeq, UInt64(last - 1), what)
                    try log.close()
                    XCTAssertEqual(try readAll(directory).seqs, Array(1...UInt64(last - 1)), what)
                }
            }
        }
    }

    /// FORMAT.md "Preallocation": zeros after the last record of the last
    /// segment are the clean end (the writer's reserved space), whether they
    /// follow whole records or stand where an unwritten record would be.
    func testZeroFilledTailIsTheCleanEnd() throws {
        for zeros in [1, 7, 8, 48, 4096] {
            let directory = TemporaryDirectory()
            let positions = try makeLog(directory, count: 5)
            let path = segmentPath(directory, 1)
            let original = try readFile(path)
            try writeFile(path, original + [UInt8](repeating: 0, count: zeros))
            let log = try EventLog.open(directory.path)
            XCTAssertNil(log.recovery.tornTail, "\(zeros) zeros")
            XCTAssertEqual(log.recovery.lastSeq, 5)
            // The next record goes right after the last one, over the zeros.
            let seq = try log.append(time: 6, keys: RecordKeys(type: 1), payload: [6])
            XCTAssertEqual(seq, 6)
            try log.close()
            XCTAssertEqual(Array(try readFile(path)[..<original.count]), original)
            XCTAssertEqual(try readAll(directory).seqs, Array(1...6))
            XCTAssertTrue(try EventLog.verify(directory.path).isOK)
            // The final record itself zeroed (size extended, data never written).
            var zeroed = original
            for index in positions[4].offset..<zeroed.count { zeroed[index] = 0 }
            try writeFile(path, zeroed)
            let again = try EventLog.open(directory.path)
            XCTAssertNil(again.recovery.tornTail)
            XCTAssertEqual(again.recovery.lastSeq, 4)
            try again.close()
        }
    }

    /// A torn record before preallocated zeros: the cut's `.broken` copy
    /// holds the record as far as its length field claims, not the zeros
    /// after it.
    func testTornRecordBeforeZerosIsCutWithoutTheZeros() throws {
        let directory = TemporaryDirectory()
        let positions = try makeLog(directory, count: 5)
        let path = segmentPath(directory, 1)
        let original = try readFile(path)
        let start = positions[4].offset
        // Only the prefix and part of the seq reached the disk.
        let torn = Array(original[..<(start + 12)])
        try writeFile(path, torn + [UInt8](repeating: 0, count: 8192))
        let log = try EventLog.open(directory.path)
        XCTAssertEqual(log.recovery.tornTail?.offset, start)
        let claimed = original.count - start
        let copy = try readFile(try XCTUnwrap(log.recovery.brokenCopy))
        XCTAssertEqual(copy.count, claimed)
        XCTAssertEqual(Array(copy[..<12]), Array(torn[start...]))
        XCTAssertTrue(copy[12...].allSatisfy { $0 == 0 })
        XCTAssertEqual(log.recovery.lastSeq, 4)
        try log.close()
        XCTAssertEqual(try readAll(directory).seqs, Array(1...4))
        XCTAssertEqual(try readFile(path).count, start)
    }

    func testDamageFollowedByZerosAndThenAnIntactRecordIsCorruption() throws {
        let directory = TemporaryDirectory()
        let positions = try makeLog(directory, count: 6)
        let path = segmentPath(directory, 1)
        var bytes = try readFile(path)
        for index in positions[3].offset..<positions[4].offset { bytes[index] = 0 }
        try writeFile(path, bytes)
        assertRefuses(directory, .badLength, seq: 4)
    }

    func testTornTailInNonLastSegmentIsCorruption() throws {
        let directory = TemporaryDirectory()
        try makeLog(directory, count: 40, segmentSize: 400)
        let path = segmentPath(directory, 1)
        let size = try readFile(path).count
        try truncateFile(path, to: size - 5)
        assertRefuses(directory, .badLength)
    }

    // MARK: Segments

    private func segmentedLog() throws -> (TemporaryDirectory, [UInt64]) {
        let directory = TemporaryDirectory()
        let positions = try makeLog(directory, count: 60, segmentSize: 400)
        let segments = Set(positions.map(\.segment)).sorted()
        XCTAssertGreaterThanOrEqual(segments.count, 5)
        return (directory, segments)
    }

    func testDeletedMiddleSegment() throws {
        let (directory, segments) = try segmentedLog()
        try File.unlink(segmentPath(directory, segments[2]))
        assertRefuses(directory, .missingSegment, seq: segments[2])
        XCTAssertEqual(try EventLog.verify(directory.path).corruption?.reason, .missingSegment)
    }

    func testDeletedFirstSegment() throws {
        let (directory, segments) = try segmentedLog()
        try File.unlink(segmentPath(directory, segments[0]))
        assertRefuses(directory, .missingSegment, seq: 1)
    }

    func testDuplicatedSegment() throws {
        let (directory, segments) = try segmentedLog()
        // A copy of segment 1 placed under segment 2's name.
        try writeFile(segmentPath(directory, segments[2]), try readFile(segmentPath(directory, segments[1])))
        assertRefuses(directory, .duplicateSegment, seq: segments[2])
    }

    func testSwappedSegments() throws {
        let (directory, segments) = try segmentedLog()
        let a = try readFile(segmentPath(directory, segments[1]))
        let b = try readFile(segmentPath(directory, segments[2]))
        try writeFile(segmentPath(directory, segments[1]), b)
        try writeFile(segmentPath(directory, segments[2]), a)
        assertRefuses(directory, .reorderedSegment, seq: segments[1])
    }

    func testSegmentRenamedOverlapping() throws {
        let (directory, segments) = try segmentedLog()
        // Segment 3's file renamed one seq earlier: header and name disagree.
        try File.rename(segmentPath(directory, segments[3]), to: segmentPath(directory, segments[3] - 1))
        assertRefuses(directory, .reorderedSegment)
    }

    func testBadSegmentHeader() throws {
        let (directory, segments) = try segmentedLog()
        try flipBit(segmentPath(directory, segments[1]), at: 20)
        assertRefuses(directory, .badSegmentHeader, seq: segments[1])
        // Even in the last segment: headers are written before the rename, never torn.
        let (other, otherSegments) = try segmentedLog()
        try flipBit(segmentPath(other, otherSegments.last!), at: 3)
        assertRefuses(other, .badSegmentHeader)
    }

    func testRewrittenRecordWithValidCRCBreaksTheChain() throws {
        let (directory, segments) = try segmentedLog()
        let path = segmentPath(directory, segments[0])
        var bytes = try readFile(path)
        // Change record 2's time and fix its CRC, as a forger would.
        let reader = try LogReader(logDirectory: directory.log)
        _ = reader.next()
        guard case .record(let second) = reader.next() else { return XCTFail("no record 2") }
        let start = second.position.offset
        let length = second.bytes.count
        bytes[start + 16] ^= 1
        let crc = bytes[(start + 8)..<(start + length)].withContiguousStorageIfAvailable { CRC32C.checksum(UnsafeRawBufferPointer($0)) }!
        withUnsafeBytes(of: crc.littleEndian) { for index in 0..<4 { bytes[start + 4 + index] = $0[index] } }
        try writeFile(path, bytes)
        XCTAssertEqual(try readAll(directory).seqs.count, segments[1] == 0 ? 0 : Int(segments[1] - 1))  // CRCs all hold
        assertRefuses(directory, .chainBreak, seq: segments[1])
        XCTAssertEqual(try EventLog.verify(directory.path).corruption?.reason, .chainBreak)
        // Open without chain checks accepts it (the fast path trusts CRCs only).
        let log = try EventLog.open(directory.path, options: .init(segmentSize: 400, chainCheck: .lastSegment))
        try log.close()
    }
}
