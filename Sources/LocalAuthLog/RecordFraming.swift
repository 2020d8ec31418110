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
    /// at `offset`: then the damage is corruption, not a torn final write.
    public static func intactRecordFollows(_ raw: UnsafeRawBufferPointer, after offset: Int, expectedSeq: UInt64) -> Bool {
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
            if CRC32C.checksum(body) == RecordFormat.u32(raw, candidate + 4) { return true }
        }
        return false
    }
}
