// Byte layout of records and segment headers (FORMAT.md), and the encoder.
// Kept apart from I/O: everything here works on memory.

import LocalAuthCore
import LocalAuthSystem

/// The keys stored outside the opaque payload, so that indexes can be rebuilt
/// without decoding payloads.
public struct RecordKeys: Hashable, Sendable {
    /// The event codec's type code.
    public var type: UInt16
    public var uid: UserID?
    public var context: ContextID?

    public init(type: UInt16, uid: UserID? = nil, context: ContextID? = nil) {
        self.type = type
        self.uid = uid
        self.context = context
    }
}


/// Where a record starts: its segment (named by the segment's first seq) and
/// the byte offset of its length field in that file.
public struct LogPosition: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var segment: UInt64
    public var offset: Int

    public init(segment: UInt64, offset: Int) {
        self.segment = segment
        self.offset = offset
    }

    public static func < (lhs: LogPosition, rhs: LogPosition) -> Bool {
        (lhs.segment, lhs.offset) < (rhs.segment, rhs.offset)
    }

    public var description: String { "\(SegmentName.fileName(segment)) offset \(offset)" }
}

/// The record layout (FORMAT.md "Records"); `package` for the log's fuzz target.
package enum RecordFormat {
    package static let prefixSize = 8          // length + CRC
    package static let fixedBodySize = 40      // seq, time, type, flags, uid, context
    package static let headerSize = prefixSize + fixedBodySize
    package static let maxPayload = 16 << 20
    package static let maxBodySize = fixedBodySize + maxPayload

    static let flagUID: UInt16 = 1
    static let flagContext: UInt16 = 2
    static let knownFlags: UInt16 = flagUID | flagContext

    static func recordSize(payload: Int) -> Int { headerSize + payload }

    /// Appends one encoded record to `out` (tests, tools; the writer
    /// encodes in place, `encode(seq:time:keys:payload:at:)`).
    package static func encode(
        seq: UInt64, time: Int64, keys: RecordKeys, payload: UnsafeRawBufferPointer, into out: inout [UInt8]
    ) {
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: recordSize(payload: payload.count)))
        out.withUnsafeMutableBytes { raw in
            encode(seq: seq, time: time, keys: keys, payload: payload, at: raw.baseAddress! + start)
        }
    }

    /// Writes one record, `recordSize(payload:)` bytes, at `raw` (any
    /// alignment): every byte is written (absent keys as zeros), the
    /// payload copied once, and the CRC computed over the bytes where they
    /// lie. No staging buffer, no second copy.
    static func encode(
        seq: UInt64, time: Int64, keys: RecordKeys, payload: UnsafeRawBufferPointer, at raw: UnsafeMutableRawPointer
    ) {
        raw.storeBytes(of: UInt32(fixedBodySize + payload.count).littleEndian, toByteOffset: 0, as: UInt32.self)
        raw.storeBytes(of: seq.littleEndian, toByteOffset: 8, as: UInt64.self)
        raw.storeBytes(of: time.littleEndian, toByteOffset: 16, as: Int64.self)
        raw.storeBytes(of: keys.type.littleEndian, toByteOffset: 24, as: UInt16.self)
        var flags: UInt16 = 0
        if let uid = keys.uid {
            flags |= flagUID
            raw.storeBytes(of: uid.littleEndian, toByteOffset: 28, as: UInt32.self)
        } else {
            raw.storeBytes(of: UInt32(0), toByteOffset: 28, as: UInt32.self)
        }
        if let context = keys.context {
            flags |= flagContext
            raw.storeBytes(of: context.high.bigEndian, toByteOffset: 32, as: UInt64.self)
            raw.storeBytes(of: context.low.bigEndian, toByteOffset: 40, as: UInt64.self)
        } else {
            raw.storeBytes(of: UInt64(0), toByteOffset: 32, as: UInt64.self)
            raw.storeBytes(of: UInt64(0), toByteOffset: 40, as: UInt64.self)
        }
        raw.storeBytes(of: flags.littleEndian, toByteOffset: 26, as: UInt16.self)
        if let source = payload.baseAddress {
            (raw + headerSize).copyMemory(from: source, byteCount: payload.count)
        }
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(start: raw + prefixSize, count: fixedBodySize + payload.count))
        raw.storeBytes(of: crc.littleEndian, toByteOffset: 4, as: UInt32.self)
    }

    static func u16(_ raw: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    package static func u32(_ raw: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    static func u64(_ raw: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// Keys of a record whose bytes start at `record` (flags already checked).
    static func keys(_ record: UnsafeRawBufferPointer) -> RecordKeys {
        let flags = u16(record, 26)
        let uid: UserID? = flags & flagUID != 0 ? u32(record, 28) : nil
        var context: ContextID?
        if flags & flagContext != 0 {
            context = ContextID(
                high: UInt64(bigEndian: record.loadUnaligned(fromByteOffset: 32, as: UInt64.self)),
                low: UInt64(bigEndian: record.loadUnaligned(fromByteOffset: 40, as: UInt64.self)))
        }
        return RecordKeys(type: u16(record, 24), uid: uid, context: context)
    }
}

/// The 64-byte header at the start of every segment.
package struct SegmentHeader: Equatable {
    package static let size = 64
    static let magic: [UInt8] = Array("LALOGSEG".utf8)
    /// 2: the chain is one SHA-256 stream per segment (FORMAT.md "Hash
    /// chain"); version 1 hashed each record with the head before it.
    static let version: UInt32 = 2

    var firstSeq: UInt64
    var chainBefore: ChainHead

    package init(firstSeq: UInt64, chainBefore: ChainHead) {
        self.firstSeq = firstSeq
        self.chainBefore = chainBefore
    }

    package func encoded() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Self.size)
        bytes.withUnsafeMutableBytes { raw in
            raw.copyBytes(from: Self.magic)
            raw.storeBytes(of: Self.version.littleEndian, toByteOffset: 8, as: UInt32.self)
            raw.storeBytes(of: UInt32(Self.size).littleEndian, toByteOffset: 12, as: UInt32.self)
            raw.storeBytes(of: firstSeq.littleEndian, toByteOffset: 16, as: UInt64.self)
            withUnsafeBytes(of: chainBefore) { UnsafeMutableRawBufferPointer(rebasing: raw[24..<56]).copyMemory(from: $0) }
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<60]))
            raw.storeBytes(of: crc.littleEndian, toByteOffset: 60, as: UInt32.self)
        }
        return bytes
    }

    /// nil when the header is short, has the wrong magic/version/size, or a bad CRC.
    static func decode(_ raw: UnsafeRawBufferPointer) -> SegmentHeader? {
        guard raw.count >= size, raw.prefix(8).elementsEqual(magic),
              RecordFormat.u32(raw, 8) == version, RecordFormat.u32(raw, 12) == UInt32(size),
              RecordFormat.u32(raw, 60) == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<60]))
        else { return nil }
        return SegmentHeader(firstSeq: RecordFormat.u64(raw, 16), chainBefore: ChainHead(UnsafeRawBufferPointer(rebasing: raw[24..<56])))
    }

    /// Why `decode` refused `raw`, for the corruption report.
    static func problem(_ raw: UnsafeRawBufferPointer) -> String {
        guard raw.count >= size else { return "header cut short (\(raw.count) of \(size) bytes)" }
        guard raw.prefix(8).elementsEqual(magic) else { return "bad magic" }
        let found = RecordFormat.u32(raw, 8)
        guard found == version else {
            return found == 1
                ? "format version 1 (a pre-release build's log, chained record by record); this build reads version \(version)"
                : "unknown format version \(found)"
        }
        guard RecordFormat.u32(raw, 12) == UInt32(size) else { return "bad header size" }
        return "bad header checksum"
    }
}

/// Segment and snapshot file names: 16 lower-case hex digits of a seq.
public enum SegmentName {
    public static let segmentSuffix = ".seg"

    package static func hex(_ seq: UInt64) -> String {
        let digits = String(seq, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    /// `<16 hex digits>.seg`, the segment that starts at `firstSeq`.
    public static func fileName(_ firstSeq: UInt64) -> String { hex(firstSeq) + segmentSuffix }

    /// The seq of a name "<16 hex>" + suffix, or nil for any other name.
    public static func parse(_ name: String, suffix: String = segmentSuffix) -> UInt64? {
        guard name.hasSuffix(suffix) else { return nil }
        let stem = name.dropLast(suffix.count)
        guard stem.count == 16, stem.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        return UInt64(stem, radix: 16)
    }
}
