// The writer's chunk memory (ChunkBytes) and records encoded in place into
// it: every byte of the layout in FORMAT.md at any alignment, the CRC over
// the body where it lies, and nothing lost when the chunk grows.

import LocalAuthCore
import LocalAuthSystem
import XCTest

@testable import LocalAuthLog

final class ChunkBytesTests: XCTestCase {
    /// Records of odd sizes land at odd offsets; each reads back field by
    /// field as FORMAT.md lays it out, with a CRC32C of bytes 8..<end.
    func testRecordsEncodedInPlaceAtAnyOffsetFollowTheLayout() {
        let chunk = ChunkBytes(capacity: 64)
        [UInt8(0xAB)].withUnsafeBytes { chunk.append($0) }
        let context = ContextID(high: 0x0102_0304_0506_0708, low: 0x1112_1314_1516_1718)
        var starts: [Int] = []
        for index in 0..<50 {
            let payload = [UInt8](repeating: UInt8(index), count: index * 7 % 23)
            let keys = RecordKeys(type: UInt16(index), uid: index % 2 == 0 ? UInt32(1000 + index) : nil,
                                  context: index % 3 == 0 ? context : nil)
            starts.append(chunk.count)
            payload.withUnsafeBytes { raw in
                chunk.append(uninitialized: RecordFormat.recordSize(payload: raw.count)) { target in
                    RecordFormat.encode(seq: UInt64(index + 1), time: Int64(-index), keys: keys, payload: raw, at: target)
                }
            }
        }
        XCTAssertGreaterThan(chunk.capacity, 64, "the chunk grew")
        XCTAssertTrue(starts.contains { $0 % 8 != 0 }, "some records start unaligned")
        let bytes = chunk.bytes
        XCTAssertEqual(bytes[0], 0xAB, "bytes before the records survive growth")
        for (index, start) in starts.enumerated() {
            let record = UnsafeRawBufferPointer(rebasing: bytes[start...])
            let payloadCount = index * 7 % 23
            XCTAssertEqual(Int(RecordFormat.u32(record, 0)), RecordFormat.fixedBodySize + payloadCount, "length")
            let body = UnsafeRawBufferPointer(rebasing: record[8..<RecordFormat.headerSize + payloadCount])
            XCTAssertEqual(RecordFormat.u32(record, 4), CRC32C.checksum(body), "CRC of record \(index)")
            XCTAssertEqual(RecordFormat.u64(record, 8), UInt64(index + 1), "seq")
            XCTAssertEqual(Int64(bitPattern: RecordFormat.u64(record, 16)), Int64(-index), "time")
            let keys = RecordFormat.keys(record)
            XCTAssertEqual(keys.type, UInt16(index))
            XCTAssertEqual(keys.uid, index % 2 == 0 ? UInt32(1000 + index) : nil)
            XCTAssertEqual(keys.context, index % 3 == 0 ? context : nil)
            if keys.uid == nil { XCTAssertEqual(RecordFormat.u32(record, 28), 0, "absent uid is zeros") }
            if keys.context == nil { XCTAssertEqual(RecordFormat.u64(record, 32) | RecordFormat.u64(record, 40), 0) }
            XCTAssertEqual(Array(record[RecordFormat.headerSize..<RecordFormat.headerSize + payloadCount]),
                           [UInt8](repeating: UInt8(index), count: payloadCount), "payload")
        }
    }

    /// The Array encoder (tests, tools) and the in-place one write the same bytes.
    func testArrayAndInPlaceEncodingsAgree() {
        let payload: [UInt8] = Array(0..<33)
        let keys = RecordKeys(type: 9, uid: 7, context: ContextID(high: 1, low: 2))
        var array: [UInt8] = [1, 2, 3]
        payload.withUnsafeBytes { RecordFormat.encode(seq: 5, time: 6, keys: keys, payload: $0, into: &array) }
        let chunk = ChunkBytes()
        [UInt8(1), 2, 3].withUnsafeBytes { chunk.append($0) }
        payload.withUnsafeBytes { raw in
            chunk.append(uninitialized: RecordFormat.recordSize(payload: raw.count)) {
                RecordFormat.encode(seq: 5, time: 6, keys: keys, payload: raw, at: $0)
            }
        }
        XCTAssertEqual(Array(chunk.bytes), array)
        XCTAssertEqual(chunk.copy(3..<chunk.count), Array(array[3...]))
        chunk.removeAll()
        XCTAssertEqual(chunk.count, 0)
    }
}
