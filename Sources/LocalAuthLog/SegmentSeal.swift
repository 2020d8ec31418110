// Seals of finished segments (FORMAT.md "Seals"): a 96-byte sidecar
// `<segment>.seg.seal` with the segment's seq range, byte length, whole-file
// CRC32C and the chain head after it, so that the daemon's open checks a
// sealed segment with one SHA-256 pass over its records, against that head,
// instead of decoding it record by record.

import Glibc
import LocalAuthSystem

struct SegmentSeal: Equatable, Sendable {
    static let size = 96
    static let magic: [UInt8] = Array("LALOGSEL".utf8)
    /// 2: the head is that of the per-segment chain (format version 2).
    static let version: UInt32 = 2
    static let suffix = ".seg.seal"

    var firstSeq: UInt64
    var lastSeq: UInt64
    var length: Int
    var chainHead: ChainHead
    var fileCRC: UInt32

    var count: UInt64 { lastSeq - firstSeq + 1 }

    static func fileName(_ segment: UInt64) -> String { SegmentName.hex(segment) + suffix }

    static func path(_ logDirectory: String, _ segment: UInt64) -> String { logDirectory + "/" + fileName(segment) }

    /// A temporary name left by a crash while writing a seal (AtomicFile: ".<name>.tmp-<hex>").
    static func isLeftover(_ name: String) -> Bool { name.hasPrefix(".") && name.contains(suffix + ".tmp-") }

    func encoded() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Self.size)
        bytes.withUnsafeMutableBytes { raw in
            raw.copyBytes(from: Self.magic)
            raw.storeBytes(of: Self.version.littleEndian, toByteOffset: 8, as: UInt32.self)
            raw.storeBytes(of: UInt32(Self.size).littleEndian, toByteOffset: 12, as: UInt32.self)
            raw.storeBytes(of: firstSeq.littleEndian, toByteOffset: 16, as: UInt64.self)
            raw.storeBytes(of: lastSeq.littleEndian, toByteOffset: 24, as: UInt64.self)
            raw.storeBytes(of: (lastSeq &- firstSeq &+ 1).littleEndian, toByteOffset: 32, as: UInt64.self)
            raw.storeBytes(of: UInt64(length).littleEndian, toByteOffset: 40, as: UInt64.self)
            withUnsafeBytes(of: chainHead) { UnsafeMutableRawBufferPointer(rebasing: raw[48..<80]).copyMemory(from: $0) }
            raw.storeBytes(of: fileCRC.littleEndian, toByteOffset: 80, as: UInt32.self)
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<92]))
            raw.storeBytes(of: crc.littleEndian, toByteOffset: 92, as: UInt32.self)
        }
        return bytes
    }

    /// nil unless magic, version, size, CRC and the count/range hold.
    static func decode(_ raw: UnsafeRawBufferPointer) -> SegmentSeal? {
        guard raw.count == size, raw.prefix(8).elementsEqual(magic),
              RecordFormat.u32(raw, 8) == version, RecordFormat.u32(raw, 12) == UInt32(size),
              RecordFormat.u32(raw, 92) == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<92]))
        else { return nil }
        let first = RecordFormat.u64(raw, 16), last = RecordFormat.u64(raw, 24), count = RecordFormat.u64(raw, 32)
        let length = RecordFormat.u64(raw, 40)
        guard first >= 1, last >= first, count == last - first + 1, length >= UInt64(SegmentHeader.size),
              length < 1 << 40 else { return nil }
        return SegmentSeal(
            firstSeq: first, lastSeq: last, length: Int(length),
            chainHead: ChainHead(UnsafeRawBufferPointer(rebasing: raw[48..<80])), fileCRC: RecordFormat.u32(raw, 80))
    }

    /// The usable seal of `segment`, or nil (no file, unreadable, garbled, or for another segment).
    static func load(_ storage: any Storage, _ logDirectory: String, _ segment: UInt64) -> SegmentSeal? {
        let path = path(logDirectory, segment)
        guard let file = try? SegmentFile.open(storage, path, .readOnly) else { return nil }
        defer { file.close() }
        var bytes = [UInt8](repeating: 0, count: size + 1)
        let n = bytes.withUnsafeMutableBytes { raw in (try? file.preadFully(into: raw, at: 0)) ?? -1 }
        guard n == size else { return nil }
        guard let seal = bytes.withUnsafeBytes({ decode(UnsafeRawBufferPointer(rebasing: $0[0..<size])) }),
              seal.firstSeq == segment else { return nil }
        return seal
    }

    /// Temp name, fsync, rename, fsync directory.
    func write(_ storage: any Storage, _ logDirectory: String) throws(SystemError) {
        try storage.writeAtomically(Self.path(logDirectory, firstSeq), bytes: encoded(), mode: 0o640)
    }

    /// Length of a finished segment and the chain head after its records:
    /// one SHA-256 stream over `before` and the bytes after the header (the
    /// chain's definition, FORMAT.md "Hash chain"), read in 4 MiB steps.
    static func chainHead(_ file: SegmentFile, before: ChainHead) throws(SystemError) -> (length: Int, head: ChainHead) {
        let chunk = 4 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 64)
        defer { buffer.deallocate() }
        var stream = ChainStream(before: before)
        var offset = SegmentHeader.size
        while true {
            let n = try file.preadFully(into: buffer, at: offset)
            stream.append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            offset += n
            if n < chunk { break }
        }
        return (offset, stream.head)
    }

    /// Length and CRC32C of the first `limit` bytes of a file (all of it when nil), read in 4 MiB steps.
    static func checksum(_ file: SegmentFile, limit: Int? = nil) throws(SystemError) -> (length: Int, crc: UInt32) {
        let chunk = 4 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 64)
        defer { buffer.deallocate() }
        var crc: UInt32 = 0
        var offset = 0
        while true {
            let want = limit.map { min(chunk, $0 - offset) } ?? chunk
            if want <= 0 { break }
            let n = try file.preadFully(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: offset)
            crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), seed: crc)
            offset += n
            if n < want { break }
        }
        return (offset, crc)
    }
}
