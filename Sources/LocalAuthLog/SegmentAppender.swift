// The writing side of the log: the open segment file, its length and CRC, and
// the hash chain. It turns appended chunks into bytes on the file (page
// cache), rotating to a new segment (with a seal for the finished one) when a
// chunk asks for it. The LogWriter keeps it behind a lock of its own, so the
// owner's thread (the daemon's loop) and the sync thread can both write, one
// at a time and in seq order. It never fdatasyncs the open segment: that is
// the sync thread's job, on a duplicate of the descriptor (`syncFile`).
//
// With `preallocation` it writes zeros ahead of the records, a step at a
// time (FORMAT.md "Preallocation"): records then overwrite blocks the file
// already has, so their fdatasync flushes data only, with no journal commit
// for a new file size (measured: 505 -> ~300 us per fdatasync under load).

import LocalAuthSystem

struct SegmentAppender: ~Copyable {
    let storage: any Storage
    let directory: String
    var file: SegmentFile
    /// The open segment's chain, fed every record written.
    var stream: ChainStream
    /// The head after the last record written.
    var chain: ChainHead { stream.head }
    /// The last seq written to the file.
    var writtenSeq: UInt64
    /// The open segment (its first seq), its length and the CRC32C of its
    /// bytes so far (nil: not known, the segment existed before this writer).
    var segment: UInt64
    var length: Int
    var fileCRC: UInt32?
    /// Zeros are written this far ahead of the records (0: never; set to 0
    /// when the disk refuses them).
    var preallocation: Int
    /// The open segment's file size: records up to `length`, zeros after.
    var allocated: Int
    /// Zeros to write ahead (grown to the largest step once, then reused).
    private var zeros: [UInt8] = []
    /// The chain head is kept at every seq that is a multiple of this (0:
    /// none): the owner asks for chain[seq] after the writer has moved on
    /// (a snapshot written off the owner's thread, `EventLog.chainHead(at:)`).
    let markEvery: UInt64
    /// The next seq whose head is kept.
    var nextMark: UInt64
    /// The kept heads, oldest first, at most `ChainMark.kept`.
    var marks: [ChainMark] = []

    init(
        storage: any Storage, directory: String, file: SegmentFile, chain: ChainStream, segment: UInt64, end: Int, lastSeq: UInt64,
        preallocation: Int, markEvery: UInt64 = 0, marks: [ChainMark] = []
    ) throws(SystemError) {
        self.storage = storage
        self.directory = directory
        self.markEvery = markEvery
        // Heads the open's scan passed (EventLog.open), at or before lastSeq.
        self.marks = marks
        nextMark = markEvery == 0 ? .max : (lastSeq / markEvery + 1) * markEvery
        self.file = file
        stream = chain
        self.segment = segment
        self.writtenSeq = lastSeq
        self.preallocation = preallocation
        length = end
        allocated = max(end, try file.size())
    }

    /// Chains and writes `batch` (in seq order). A chunk that starts a segment
    /// first makes the open one durable and seals it.
    mutating func write(_ batch: [PendingChunk]) throws(SystemError) {
        for chunk in batch {
            if chunk.createsSegment { try rotate(to: chunk.segment) }
            // The whole chunk in one SHA-256 update, split only where a
            // kept head falls (nothing in between needs its head).
            var next = stream
            var kept: [ChainMark] = []
            let raw = chunk.bytes.bytes
            do {
                var hashed = 0
                if nextMark <= chunk.lastSeq {
                    var offset = 0
                    var seq = writtenSeq
                    while offset < raw.count {
                        offset += 8 + Int(RecordFormat.u32(raw, offset))
                        seq += 1
                        if seq == nextMark {
                            next.append(UnsafeRawBufferPointer(rebasing: raw[hashed..<offset]))
                            hashed = offset
                            kept.append(ChainMark(seq: seq, head: next.head))
                            nextMark += markEvery
                        }
                    }
                }
                next.append(UnsafeRawBufferPointer(rebasing: raw[hashed...]))
            }
            if preallocation > 0, chunk.offset + chunk.bytes.count > allocated {
                preallocate(through: chunk.offset + chunk.bytes.count)
            }
            try file.pwriteAll(raw, at: chunk.offset)
            // Only what reached the file moves the chain.
            stream = next
            if !kept.isEmpty {
                marks.append(contentsOf: kept)
                if marks.count > ChainMark.kept { marks.removeFirst(marks.count - ChainMark.kept) }
            }
            if let crc = fileCRC, chunk.offset == length {
                fileCRC = CRC32C.checksum(raw, seed: crc)
            } else {
                fileCRC = nil
            }
            length = chunk.offset + chunk.bytes.count
            writtenSeq = chunk.lastSeq
        }
    }

    /// The open segment for the sync thread's fdatasync: `current` when it
    /// is still this segment, else one on a descriptor of its own (the
    /// caller closes the old one). A rotation may close `file` while an
    /// fdatasync runs; the thread's descriptor stays valid. Its own open
    /// file description, not a duplicate of the appender's (F-22): a
    /// writeback error is reported once per description, so with two sync
    /// threads on one description the thread told "success" could publish
    /// as durable what the other was told failed. Without /proc, a duplicate.
    func syncFile(_ current: (segment: UInt64, file: SegmentFile)?) throws(SystemError) -> (segment: UInt64, file: SegmentFile) {
        if let current, current.segment == segment { return current }
        return (segment, try file.reopenedForSync())
    }

    func close() { file.close() }

    /// Writes zeros from the allocated end to past `end`, a whole step at a
    /// time. The next fdatasync makes the new size durable along with the
    /// records that need it. Best effort, and never what fills a disk: it
    /// is skipped while the filesystem has less than 16 steps free, and a
    /// failed attempt is cut back and ends preallocation for this writer;
    /// the records are then written as without it.
    private mutating func preallocate(through end: Int) {
        let target = (end / preallocation + 1) * preallocation
        guard let free = try? file.file.availableBytes(), free >= Int64(16 * preallocation) else { return }
        // Zeros go after the records only (F-46): while preallocation was
        // skipped for want of room, records were written past `allocated`,
        // and zeros from there would overwrite them, durable ones too.
        let from = max(allocated, length)
        guard target > from else { return }
        // One zero buffer for the writer's life: a fresh 256 KiB array per
        // step was a malloc (an mmap above glibc's threshold), 64 page
        // faults, a memset and a munmap each time.
        if zeros.count < target - from { zeros = [UInt8](repeating: 0, count: target - from) }
        do throws(SystemError) {
            let step = target - from
            var failure: SystemError?
            zeros.withUnsafeBytes { raw in
                do throws(SystemError) { try file.pwriteAll(UnsafeRawBufferPointer(rebasing: raw[..<step]), at: from) } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
            allocated = target
        } catch {
            preallocation = 0
            try? file.truncate(to: max(length, allocated))
        }
    }

    /// Cut the preallocated zeros off the finished segment, fdatasync it,
    /// seal it (FORMAT.md "Seals": a segment that has a successor is sealed,
    /// and holds nothing after its last record), then create the next.
    private mutating func rotate(to firstSeq: UInt64) throws(SystemError) {
        if allocated > length {
            try file.truncate(to: length)
            allocated = length
        }
        try file.fdatasync()
        // Durable now: its pages leave the page cache (see the sync thread).
        _ = file.dropCachedPages(from: 0, below: length)
        let head = chain
        try seal(lastSeq: firstSeq - 1, head: head)
        file.close()
        file = try SegmentCreation.create(storage, directory: directory, firstSeq: firstSeq, chainBefore: head)
        stream = ChainStream(before: head)
        segment = firstSeq
        length = SegmentHeader.size
        allocated = SegmentHeader.size
        fileCRC = CRC32C.checksum(SegmentHeader(firstSeq: firstSeq, chainBefore: head).encoded())
    }

    private func seal(lastSeq: UInt64, head: ChainHead) throws(SystemError) {
        let crc: UInt32
        if let fileCRC { crc = fileCRC } else {
            let reading = try SegmentFile.open(storage, file.path, .readOnly)
            defer { reading.close() }
            crc = try SegmentSeal.checksum(reading, limit: length).crc
        }
        try SegmentSeal(firstSeq: segment, lastSeq: lastSeq, length: length, chainHead: head, fileCRC: crc).write(storage, directory)
    }
}

/// chain[seq], kept by the writer (SegmentAppender.markEvery).
struct ChainMark {
    /// Heads kept: a snapshot waits for its seq to be durable, then asks;
    /// a few intervals of slack cover a slow disk.
    static let kept = 4
    var seq: UInt64
    var head: ChainHead
}

enum SegmentCreation {
    /// Temp name, header, fsync, rename, fsync directory; returns the file open for writing.
    static func create(
        _ storage: any Storage, directory: String, firstSeq: UInt64, chainBefore: ChainHead
    ) throws(SystemError) -> SegmentFile {
        let path = directory + "/" + SegmentName.fileName(firstSeq)
        let temporary = path + ".tmp"
        // A seal under this name is from a segment cut away earlier (repair): never this one's.
        let staleSeal = SegmentSeal.path(directory, firstSeq)
        if storage.exists(staleSeal) { try storage.unlink(staleSeal) }
        let file = try SegmentFile.open(storage, temporary, .writeOnly, options: [.create, .truncate])
        do throws(SystemError) {
            // 0640 whatever the umask (the daemon's is 077), as seals and
            // snapshots are: the group class is how AuditGroup= reads it.
            try file.chmod(0o640)
            try file.pwriteAll(SegmentHeader(firstSeq: firstSeq, chainBefore: chainBefore).encoded(), at: 0)
            try file.fsync()
            try storage.rename(temporary, to: path)
            try storage.syncDirectory(directory)
        } catch {
            file.close()
            throw error
        }
        return SegmentFile(file: file.file, path: path)
    }
}
