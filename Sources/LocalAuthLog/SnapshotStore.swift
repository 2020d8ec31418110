// Snapshots: the daemon's folded state at a seq, as an opaque payload, so that
// open does not replay from seq 1. A snapshot is only a shortcut: one that
// fails any check (header, CRC, SHA-256, its seq and chain head against the
// log) is skipped with a reason, and an older one or a full replay is used;
// never a wrong state. Layout in FORMAT.md "Snapshots".

import Glibc
import LocalAuthSystem

public struct Snapshot: Sendable, Equatable {
    /// The state covers records 1...seq.
    public var seq: UInt64
    public var chainHead: ChainHead
    public var time: Int64
    public var payload: [UInt8]
    /// SHA-256 of the whole file as read (header and payload): what its
    /// `snapshot-recorded` event must name for the snapshot to be trusted (S-49).
    public var fileDigest = ChainHead.zero
}

public struct SkippedSnapshot: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var reason: String
    /// It covers seqs the log no longer holds: recorded events were removed (S-49).
    public var beyondLog = false
    public var description: String { "skipped snapshot \(file): \(reason)" }
}

public struct SnapshotStore: Sendable {
    static let suffix = ".snap"
    static let headerSize = 128
    static let magic: [UInt8] = Array("LASNAPSH".utf8)
    static let version: UInt32 = 1

    /// The state directory; snapshots live in `<directory>/snapshots`.
    public let directory: String
    /// How many snapshots `write` keeps (the newest ones).
    public var keep: Int
    public let storage: any Storage

    public init(directory: String, keep: Int = 3, storage: any Storage = DiskStorage.shared) {
        self.directory = directory
        self.keep = max(1, keep)
        self.storage = storage
    }

    public var snapshotDirectory: String { directory + "/snapshots" }

    public func path(_ seq: UInt64) -> String { snapshotDirectory + "/" + SegmentName.hex(seq) + Self.suffix }

    /// Writes atomically (temp, fsync, rename, fsync dir), then deletes all
    /// but the newest `keep`. Returns the file's SHA-256, for the log's
    /// `snapshot-recorded` event (S-49).
    @discardableResult
    public func write(seq: UInt64, chainHead: ChainHead, time: Int64, payload: [UInt8]) throws(LogError) -> ChainHead {
        let bytes = Self.encode(seq: seq, chainHead: chainHead, time: time, payload: payload)
        let digest = bytes.withUnsafeBytes { PayloadDigest.of($0) }
        do throws(SystemError) {
            try storage.createDirectory(snapshotDirectory, mode: 0o750)
            try storage.writeAtomically(path(seq), bytes: bytes, mode: 0o640)
            let seqs = try list()
            if seqs.count > keep {
                for old in seqs.dropLast(keep) { try storage.unlink(path(old)) }
                try storage.syncDirectory(snapshotDirectory)
            }
        } catch {
            throw .io(error)
        }
        return digest
    }

    /// Seqs of the snapshot files, ascending.
    public func list() throws(SystemError) -> [UInt64] {
        guard storage.exists(snapshotDirectory) else { return [] }
        return try storage.entries(snapshotDirectory).compactMap { SegmentName.parse($0, suffix: Self.suffix) }.sorted()
    }

    /// Reads and checks one snapshot on its own (header, CRCs, SHA-256, name).
    public func load(_ seq: UInt64) -> Result<Snapshot, SkippedSnapshot> {
        let file = SegmentName.hex(seq) + Self.suffix
        let bytes: [UInt8]
        do throws(SystemError) { bytes = try LogFiles.readAll(storage, path(seq)) } catch {
            return .failure(SkippedSnapshot(file: file, reason: error.description))
        }
        switch Self.decode(bytes) {
        case .success(var snapshot):
            guard snapshot.seq == seq else {
                return .failure(SkippedSnapshot(file: file, reason: "header covers seq \(snapshot.seq), not its name's"))
            }
            snapshot.fileDigest = bytes.withUnsafeBytes { PayloadDigest.of($0) }
            return .success(snapshot)
        case .failure(let reason):
            return .failure(SkippedSnapshot(file: file, reason: reason.message))
        }
    }

    /// The newest snapshot that passes its own checks and agrees with the log:
    /// `chainHeadAt(seq)` is the log's chain[seq], nil when the log does not
    /// reach seq.
    public func newestValid(
        chainHeadAt: (UInt64) -> ChainHead?
    ) -> (snapshot: Snapshot?, skipped: [SkippedSnapshot]) {
        var skipped: [SkippedSnapshot] = []
        let seqs: [UInt64]
        do throws(SystemError) { seqs = try list() } catch {
            return (nil, [SkippedSnapshot(file: snapshotDirectory, reason: error.description)])
        }
        for seq in seqs.reversed() {
            switch check(seq, chainHeadAt: chainHeadAt) {
            case .failure(let skip): skipped.append(skip)
            case .success(let snapshot): return (snapshot, skipped)
            }
        }
        return (nil, skipped)
    }

    /// One snapshot: its own checks, then its seq and chain head against the log's.
    public func check(_ seq: UInt64, chainHeadAt: (UInt64) -> ChainHead?) -> Result<Snapshot, SkippedSnapshot> {
        switch load(seq) {
        case .failure(let skip):
            return .failure(skip)
        case .success(let snapshot):
            guard let head = chainHeadAt(seq) else {
                return .failure(SkippedSnapshot(file: SegmentName.hex(seq) + Self.suffix, reason: "covers seq \(seq), beyond the log", beyondLog: true))
            }
            guard head == snapshot.chainHead else {
                return .failure(SkippedSnapshot(file: SegmentName.hex(seq) + Self.suffix, reason: "chain head differs from the log's at seq \(seq)"))
            }
            return .success(snapshot)
        }
    }

    package struct DecodeFailure: Error { var message: String }

    package static func encode(seq: UInt64, chainHead: ChainHead, time: Int64, payload: [UInt8]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: headerSize)
        let digest = payload.withUnsafeBytes { PayloadDigest.of($0) }
        bytes.withUnsafeMutableBytes { raw in
            raw.copyBytes(from: magic)
            raw.storeBytes(of: version.littleEndian, toByteOffset: 8, as: UInt32.self)
            raw.storeBytes(of: UInt32(headerSize).littleEndian, toByteOffset: 12, as: UInt32.self)
            raw.storeBytes(of: seq.littleEndian, toByteOffset: 16, as: UInt64.self)
            raw.storeBytes(of: time.littleEndian, toByteOffset: 24, as: Int64.self)
            withUnsafeBytes(of: chainHead) { UnsafeMutableRawBufferPointer(rebasing: raw[32..<64]).copyMemory(from: $0) }
            raw.storeBytes(of: UInt64(payload.count).littleEndian, toByteOffset: 64, as: UInt64.self)
            raw.storeBytes(of: CRC32C.checksum(payload).littleEndian, toByteOffset: 72, as: UInt32.self)
            withUnsafeBytes(of: digest) { UnsafeMutableRawBufferPointer(rebasing: raw[80..<112]).copyMemory(from: $0) }
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<124]))
            raw.storeBytes(of: crc.littleEndian, toByteOffset: 124, as: UInt32.self)
        }
        return bytes + payload
    }

    package static func decode(_ bytes: [UInt8]) -> Result<Snapshot, DecodeFailure> {
        bytes.withUnsafeBytes { raw -> Result<Snapshot, DecodeFailure> in
            guard raw.count >= headerSize else { return .failure(DecodeFailure(message: "short header")) }
            guard raw.prefix(8).elementsEqual(magic), RecordFormat.u32(raw, 8) == version,
                  RecordFormat.u32(raw, 12) == UInt32(headerSize)
            else { return .failure(DecodeFailure(message: "bad magic, version or header size")) }
            guard RecordFormat.u32(raw, 124) == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<124])) else {
                return .failure(DecodeFailure(message: "header crc mismatch"))
            }
            let length = RecordFormat.u64(raw, 64)
            guard length == UInt64(raw.count - headerSize) else {
                return .failure(DecodeFailure(message: "payload length \(length) but \(raw.count - headerSize) bytes present"))
            }
            let payload = UnsafeRawBufferPointer(rebasing: raw[headerSize...])
            guard CRC32C.checksum(payload) == RecordFormat.u32(raw, 72) else {
                return .failure(DecodeFailure(message: "payload crc mismatch"))
            }
            guard PayloadDigest.of(payload) == ChainHead(UnsafeRawBufferPointer(rebasing: raw[80..<112])) else {
                return .failure(DecodeFailure(message: "payload sha-256 mismatch"))
            }
            return .success(Snapshot(
                seq: RecordFormat.u64(raw, 16), chainHead: ChainHead(UnsafeRawBufferPointer(rebasing: raw[32..<64])),
                time: Int64(bitPattern: RecordFormat.u64(raw, 24)), payload: Array(payload)))
        }
    }
}
