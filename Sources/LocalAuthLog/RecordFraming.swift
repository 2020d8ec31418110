// One record's framing checked in memory: the decoder's step that LogReader
// runs at each offset of a segment (length, CRC, seq, key flags; FORMAT.md
// "Decoding"), and its torn-tail question (does an intact record follow the
// damage?). Public so that a log held in memory (the deterministic
// simulator's disk) is decoded, and its torn tail told from corruption, by
// the same code as a log on disk.
import LocalAuthCore
import LocalAuthSystem

public enum RecordFraming {
    /// What the bytes at an offset are.
    public enum Check: Equatable {
        /// A record: its seq, time, keys, payload and the offset after it.
        case record(seq: UInt64, time: Int64, keys: RecordKeys, payload: Range<Int>, end: Int)
        /// Zeros to the end: the clean end (of a last segment: preallocated space).
        case zeros
        /// Damaged framing (short prefix, bad length, past the end, bad CRC):
        /// a torn tail or corruption, which `intactRecordFollows` tells apart.
        case damaged(detail: String, reason: CorruptionReason)
        /// A record that decodes but cannot be trusted where it stands.
        case untrusted(detail: String, reason: CorruptionReason)
    }

    /// Encodes one record (the writer's layout) at the end of `out`.
    public static func encode(seq: UInt64, time: Int64, keys: RecordKeys, payload: [UInt8], into out: inout [UInt8]) {
        payload.withUnsafeBytes { RecordFormat.encode(seq: seq, time: time, keys: keys, payload: $0, into: &out) }
    }

    public static func recordSize(payload: Int) -> Int { RecordFormat.recordSize(payload: payload) }

    /// Checks the record at `offset` of `raw` (a segment's bytes after its
    /// header, or from 0 in memory), which must carry `expectedSeq`.
    /// `zerosEnd`: zeros from here to the end are the clean end.
    @inline(__always)
    public static func check(_ raw: UnsafeRawBufferPointer, at offset: Int, expectedSeq: UInt64, zerosEnd: Bool) -> Check {
        let size = raw.count
        let remaining = size - offset
        if zerosEnd, remaining < RecordFormat.prefixSize || RecordFormat.u32(raw, offset) == 0,
           UnsafeRawBufferPointer(rebasing: raw[offset..<size]).allSatisfy({ $0 == 0 }) {
            return .zeros
        }
        guard remaining >= RecordFormat.prefixSize else { return .damaged(detail: "short record prefix", reason: .badLength) }
        let length = Int(RecordFormat.u32(raw, offset))
        guard length >= RecordFormat.fixedBodySize, length <= RecordFormat.maxBodySize else {
            return .damaged(detail: "length \(length)", reason: .badLength)
        }
        guard RecordFormat.prefixSize + length <= remaining else {
            return .damaged(detail: "record of \(RecordFormat.prefixSize + length) bytes past end of file", reason: .badLength)
        }
        let body = UnsafeRawBufferPointer(rebasing: raw[offset + 8..<offset + 8 + length])
        guard CRC32C.checksum(body) == RecordFormat.u32(raw, offset + 4) else {
            return .damaged(detail: "crc mismatch", reason: .crcMismatch)
        }
        let record = UnsafeRawBufferPointer(rebasing: raw[offset..<offset + 8 + length])
        let seq = RecordFormat.u64(record, 8)
        guard seq == expectedSeq else { return .untrusted(detail: "found seq \(seq)", reason: .seqGap) }
        let flags = RecordFormat.u16(record, 26)
        guard flags & ~RecordFormat.knownFlags == 0 else { return .untrusted(detail: "flags \(flags)", reason: .badFlags) }
        return .record(seq: seq, time: Int64(bitPattern: RecordFormat.u64(record, 16)), keys: RecordFormat.keys(record),
                       payload: offset + RecordFormat.headerSize..<offset + 8 + length, end: offset + 8 + length)
    }

    /// Whether a CRC-valid record with a plausible later seq follows damage
    /// at `offset` that is not a lost page: then the damage is corruption,
    /// not a torn final write. `raw` holds the file from offset 0.
    public static func intactRecordFollows(_ raw: UnsafeRawBufferPointer, after offset: Int, expectedSeq: UInt64) -> Bool {
        guard let intact = firstIntactRecord(raw, after: offset, expectedSeq: expectedSeq) else { return false }
        return !pageLost(raw, from: offset, before: intact)
    }

    /// The offset of the first CRC-valid record with a plausible later seq after `offset`.
    static func firstIntactRecord(_ raw: UnsafeRawBufferPointer, after offset: Int, expectedSeq: UInt64) -> Int? {
        let size = raw.count
        var candidate = offset + 1
        while candidate + RecordFormat.headerSize <= size {
            defer { candidate += 1 }
            let length = Int(RecordFormat.u32(raw, candidate))
            guard length >= RecordFormat.fixedBodySize, length <= RecordFormat.maxBodySize,
                  candidate + 8 + length <= size else { continue }
            let seq = RecordFormat.u64(raw, candidate + 8)
            guard seq >= expectedSeq, seq - expectedSeq < 1 << 32 else { continue }
            let body = UnsafeRawBufferPointer(rebasing: raw[candidate + 8..<candidate + 8 + length])
            if CRC32C.checksum(body) == RecordFormat.u32(raw, candidate + 4) { return candidate }
        }
        return nil
    }

    /// The file's page size as writeback sees it.
    static let page = 4096

    /// F-47: whether the damage between `offset` and the intact record at
    /// `intact` holds a page of the file that never reached the disk: zeros
    /// from `offset`, or from a page boundary after it, to a page boundary
    /// at or before `intact`. Writeback does not keep write order, so a
    /// power cut may keep a later page of unsynced records and lose an
    /// earlier one; fdatasync writes back every dirty page, so a page that
    /// was lost was written after the last successful one, and so was
    /// everything after it: none of it was acknowledged as durable. A bit
    /// flipped by the disk never reads as a page of zeros.
    static func pageLost(_ raw: UnsafeRawBufferPointer, from offset: Int, before intact: Int) -> Bool {
        var start = offset
        while true {
            let end = (start / page + 1) * page
            guard end <= intact else { return false }
            if UnsafeRawBufferPointer(rebasing: raw[start..<end]).allSatisfy({ $0 == 0 }) { return true }
            start = end
        }
    }
}
