// The simulator's disk: one log file in memory, split as a real one is into
// bytes the platter holds (synced), bytes the page cache holds (written, not
// yet fsync'd) and, in the daemon's process, records appended but not yet
// written (SimulatedRecorder). Faults are armed by the run and strike at the
// next write or fsync; a crash keeps the synced bytes and a random prefix of
// the rest (a torn final write). Records are framed by the log's own
// RecordFraming and their payloads are the core's EventCodec, so a restart
// decodes them (and cuts a torn tail) with the real code (DiskRecovery).
import LocalAuthCore
import LocalAuthLog
import LocalAuthServer

/// What the run can do to the disk, and how many times it did.
public enum DiskFault: String, CaseIterable, Sendable, Comparable {
    case tornWrite = "torn write (a prefix reaches the file, then EIO)"
    case noSpaceOnWrite = "ENOSPC on write"
    case ioErrorOnWrite = "EIO on write"
    case ioErrorOnSync = "EIO on fsync"
    case crash = "crash (unsynced bytes lost, some kept torn)"
    case bitRot = "a durable byte flipped before a restart"
    case passcodeStoreFull = "the passcode store's write fails (set-passcode)"

    public static func < (lhs: DiskFault, rhs: DiskFault) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Its name in `Figures.record`.
    public var key: String {
        switch self {
        case .tornWrite: "torn-write"
        case .noSpaceOnWrite: "enospc-write"
        case .ioErrorOnWrite: "eio-write"
        case .ioErrorOnSync: "eio-fsync"
        case .crash: "crash"
        case .bitRot: "bit-rot"
        case .passcodeStoreFull: "passcode-store-full"
        }
    }
}

public final class SimulatedDisk {
    /// The file's bytes as the page cache has them (the platter has the
    /// first `syncedLength`).
    public private(set) var file: [UInt8] = []
    public private(set) var syncedLength = 0
    /// Where each record written so far ends in `file`, in seq order.
    private(set) var ends: [(seq: UInt64, end: Int)] = []
    /// The newest seq whose record reached the file (page cache or platter).
    var writtenSeq: UInt64 { ends.last?.seq ?? syncedSeq }
    /// The newest seq whose record lies wholly in the synced bytes.
    public private(set) var syncedSeq: UInt64 = 0
    /// Bytes the log's file may grow to before a write meets ENOSPC (the
    /// file system's room, which other files take and give back).
    var capacity = Int.max
    /// Free space as statvfs would report it (the core's `freeSpace` port).
    var free: Int64 { capacity == .max ? Int64.max / 2 : Int64(capacity) - Int64(file.count) }
    /// The fault the next write or fsync meets.
    var armedWriteFault: DiskFault?
    var armedSyncFault = false

    public init() {}

    /// A write of `bytes` (whole records, `seqs` their seqs and ends
    /// relative to the chunk). Returns the error text if it failed; a torn
    /// write leaves `kept` bytes of it in the file.
    func write(_ bytes: [UInt8], records: [(seq: UInt64, end: Int)], kept: Int) -> String? {
        if capacity != .max, file.count + bytes.count > capacity {
            return "Failed to write the event log: No space left on device (the disk is full)"
        }
        if let fault = armedWriteFault {
            armedWriteFault = nil
            switch fault {
            case .tornWrite:
                append(Array(bytes.prefix(kept)), records: records.filter { $0.end <= kept })
                return "Failed to write the event log: Input/output error (after \(kept) of \(bytes.count) bytes)"
            case .noSpaceOnWrite:
                return "Failed to write the event log: No space left on device"
            default:
                return "Failed to write the event log: Input/output error"
            }
        }
        append(bytes, records: records)
        return nil
    }

    private func append(_ bytes: [UInt8], records: [(seq: UInt64, end: Int)]) {
        let base = file.count
        file.append(contentsOf: bytes)
        ends.append(contentsOf: records.map { ($0.seq, base + $0.end) })
    }

    /// fdatasync: everything written is on the platter, or the error text.
    func sync() -> String? {
        if armedSyncFault {
            armedSyncFault = false
            return "Failed to fsync the event log: Input/output error"
        }
        syncedLength = file.count
        syncedSeq = ends.last?.seq ?? syncedSeq
        return nil
    }

    /// A crash (or power cut): the page cache is lost except a prefix of
    /// `survive` bytes of what was not synced, which may cut a record.
    func crash(survive: Int) {
        let keep = syncedLength + min(survive, file.count - syncedLength)
        file.removeSubrange(keep...)
        ends.removeAll { $0.end > keep }
    }

    /// Flips one bit of a synced byte (the platter rotted): a restart must
    /// refuse the log (S-41), never cut it as if it were a torn write.
    func rot(at offset: Int, bit: Int) { file[offset] ^= UInt8(1 << bit) }

    /// After recovery cut a torn tail at `length` and decoded `records`.
    func recovered(length: Int, records: [(seq: UInt64, end: Int)]) {
        file.removeSubrange(length...)
        ends = records
        syncedLength = length
        syncedSeq = records.last?.seq ?? 0
    }
}
