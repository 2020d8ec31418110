// Group commit. `append` encodes a record into an in-memory chunk and returns
// its seq at once (cheap, never blocks on the disk: the daemon's epoll loop
// calls it). One sync thread takes everything appended so far, writes it,
// fdatasyncs once, publishes `durableSeq` (atomic) and calls `onDurable`
// (the daemon writes its eventfd there to wake its loop). Any number of
// appends share one fdatasync. Tools and tests block in `waitDurable`.
//
// Failure is final (fail closed): the first failed write or fdatasync puts the
// writer in the failed state; `onFailure` says which seqs are not durable,
// appends throw, no later seq is ever acknowledged. To continue, the owner
// closes the log and opens it again (open runs recovery). See FORMAT.md.

import Glibc
import LocalAuthSystem
import Synchronization

/// Bytes appended but not yet written, bound for one segment.
struct PendingChunk {
    var segment: UInt64
    /// The segment file does not exist yet: the sync thread creates it first.
    var createsSegment: Bool
    var offset: Int
    var bytes: [UInt8]
    var lastSeq: UInt64

    func contains(_ position: LogPosition) -> Bool {
        position.segment == segment && position.offset >= offset && position.offset < offset + bytes.count
    }
}

final class LogWriter: Sendable {
    struct State {
        var sealed: [PendingChunk] = []
        var current: PendingChunk?
        /// Taken by the sync thread; readable here until written.
        var inflight: [PendingChunk] = []
        var nextSeq: UInt64
        var segment: UInt64
        var segmentEnd: Int
        var index: LogIndex
        var failure: WriteFailure?
        var closing = false
        var exited = false
        /// The chain head after the last durable record.
        var durableChain: ChainHead
    }

    static let work = 0
    static let durableChanged = 1

    let lock: ConditionLock<State>
    let durable: Atomic<UInt64>
    let appended: Atomic<UInt64>
    let segmentSize: Int
    private let onDurable: (@Sendable (UInt64) -> Void)?
    private let onFailure: (@Sendable (WriteFailure) -> Void)?
    private let thread = Mutex<pthread_t?>(nil)

    /// Starts appending after `lastSeq` at `end` of the existing segment `segment`.
    init(
        logDirectory: String, segment: UInt64, end: Int, lastSeq: UInt64, chain: ChainHead, index: LogIndex,
        segmentSize: Int, onDurable: (@Sendable (UInt64) -> Void)?, onFailure: (@Sendable (WriteFailure) -> Void)?
    ) throws(SystemError) {
        let file = try SegmentFile.open(logDirectory + "/" + SegmentName.fileName(segment), .writeOnly)
        lock = ConditionLock(
            State(nextSeq: lastSeq + 1, segment: segment, segmentEnd: end, index: index, durableChain: chain),
            conditions: 2)
        durable = Atomic(lastSeq)
        appended = Atomic(lastSeq)
        self.segmentSize = max(segmentSize, SegmentHeader.size + RecordFormat.headerSize)
        self.onDurable = onDurable
        self.onFailure = onFailure
        let sync = SyncThread(writer: self, directory: logDirectory, file: file, chain: chain, segment: segment, end: end)
        var handle = pthread_t()
        let started = pthread_create(&handle, nil, { argument in
            let sync = Unmanaged<SyncThread>.fromOpaque(argument!).takeRetainedValue()
            sync.run()
            return nil
        }, Unmanaged.passRetained(sync).toOpaque())
        guard started == 0 else { fatalError("Failed to start the event log sync thread: errno \(started)") }
        thread.withLock { $0 = handle }
    }

    func append(time: Int64, keys: RecordKeys, payload: UnsafeRawBufferPointer) throws(LogError) -> UInt64 {
        guard payload.count <= RecordFormat.maxPayload else { throw .payloadTooLarge(payload.count) }
        let size = RecordFormat.recordSize(payload: payload.count)
        lock.lock()
        defer { lock.unlock() }
        if let failure = lock.state.failure { throw .writeFailed(failure) }
        if lock.state.closing { throw .closed }
        let seq = lock.state.nextSeq
        let wake = lock.state.current == nil && lock.state.sealed.isEmpty
        if lock.state.segmentEnd + size > segmentSize && lock.state.segmentEnd > SegmentHeader.size {
            if let current = lock.state.current { lock.state.sealed.append(current) }
            lock.state.current = PendingChunk(
                segment: seq, createsSegment: true, offset: SegmentHeader.size, bytes: [], lastSeq: seq)
            lock.state.segment = seq
            lock.state.segmentEnd = SegmentHeader.size
            lock.state.index.addSegment(seq)
        } else if lock.state.current == nil {
            lock.state.current = PendingChunk(
                segment: lock.state.segment, createsSegment: false, offset: lock.state.segmentEnd, bytes: [],
                lastSeq: seq)
        }
        lock.state.current!.bytes.reserveCapacity(4096)
        RecordFormat.encode(seq: seq, time: time, keys: keys, payload: payload, into: &lock.state.current!.bytes)
        lock.state.current!.lastSeq = seq
        lock.state.index.add(keys, offset: lock.state.segmentEnd)
        lock.state.segmentEnd += size
        lock.state.nextSeq = seq + 1
        appended.store(seq, ordering: .releasing)
        if wake { lock.signal(Self.work) }
        return seq
    }

    func waitDurable(_ seq: UInt64) throws(LogError) {
        if durable.load(ordering: .acquiring) >= seq { return }
        lock.lock()
        defer { lock.unlock() }
        while durable.load(ordering: .acquiring) < seq {
            if let failure = lock.state.failure { throw .writeFailed(failure) }
            if lock.state.exited || seq >= lock.state.nextSeq { throw .closed }
            lock.wait(Self.durableChanged)
        }
    }

    /// Writes and syncs what was appended, then stops the sync thread.
    func close() {
        lock.withLock {
            lock.state.closing = true
            lock.signal(Self.work)
        }
        if let handle = thread.withLock({ handle -> pthread_t? in
            defer { handle = nil }
            return handle
        }) {
            pthread_join(handle, nil)
        }
    }

    /// A copy of the bytes of a record that is not written to its file yet.
    func unwrittenRecord(at position: LogPosition) -> [UInt8]? {
        lock.withLock {
            let chunks = lock.state.inflight + lock.state.sealed + (lock.state.current.map { [$0] } ?? [])
            guard let chunk = chunks.first(where: { $0.contains(position) }) else { return nil }
            let start = position.offset - chunk.offset
            let length = chunk.bytes.withUnsafeBytes { Int(RecordFormat.u32($0, start)) }
            return Array(chunk.bytes[start..<start + 8 + length])
        }
    }

    // MARK: Sync thread side

    func takeWork() -> [PendingChunk]? {
        lock.lock()
        defer { lock.unlock() }
        while lock.state.sealed.isEmpty && lock.state.current == nil && !lock.state.closing {
            lock.wait(Self.work)
        }
        var batch = lock.state.sealed
        if let current = lock.state.current { batch.append(current) }
        if batch.isEmpty { return nil }
        lock.state.sealed = []
        lock.state.current = nil
        lock.state.inflight = batch
        return batch
    }

    func written() { lock.withLock { lock.state.inflight = [] } }

    func madeDurable(_ seq: UInt64, chain: ChainHead) {
        lock.withLock {
            durable.store(seq, ordering: .releasing)
            lock.state.durableChain = chain
            lock.broadcast(Self.durableChanged)
        }
        onDurable?(seq)
    }

    func failed(_ cause: SystemError) {
        let failure = WriteFailure(firstNotDurable: durable.load(ordering: .acquiring) + 1, cause: cause)
        lock.withLock {
            lock.state.failure = failure
            lock.state.inflight = []
            lock.broadcast(Self.durableChanged)
        }
        onFailure?(failure)
    }

    func exited() {
        lock.withLock {
            lock.state.exited = true
            lock.broadcast(Self.durableChanged)
        }
    }
}

/// What only the sync thread touches: the open segment file and the chain.
private final class SyncThread {
    let writer: LogWriter
    let directory: String
    var file: SegmentFile
    var chain: ChainHead
    let hasher = ChainHasher()
    /// The open segment (its first seq), its length and the CRC32C of its
    /// bytes so far (nil: not known, the segment existed before this writer).
    var segment: UInt64
    var length: Int
    var fileCRC: UInt32?

    init(writer: LogWriter, directory: String, file: SegmentFile, chain: ChainHead, segment: UInt64, end: Int) {
        self.writer = writer
        self.directory = directory
        self.file = file
        self.chain = chain
        self.segment = segment
        length = end
    }

    /// Seals the open segment (FORMAT.md "Seals"): after its fdatasync, before
    /// the next segment is created, so a segment that has a successor is sealed.
    private func seal(lastSeq: UInt64) throws(SystemError) {
        let crc: UInt32
        if let fileCRC { crc = fileCRC } else {
            let reading = try SegmentFile.open(file.path, .readOnly)
            defer { reading.close() }
            crc = try SegmentSeal.checksum(reading, limit: length).crc
        }
        try SegmentSeal(firstSeq: segment, lastSeq: lastSeq, length: length, chainHead: chain, fileCRC: crc).write(directory)
    }

    func run() {
        defer {
            file.close()
            writer.exited()
        }
        while let batch = writer.takeWork() {
            do throws(SystemError) {
                for chunk in batch {
                    if chunk.createsSegment {
                        try file.fdatasync()
                        try seal(lastSeq: chunk.segment - 1)
                        file.close()
                        file = try SegmentCreation.create(directory: directory, firstSeq: chunk.segment, chainBefore: chain)
                        segment = chunk.segment
                        length = SegmentHeader.size
                        fileCRC = CRC32C.checksum(SegmentHeader(firstSeq: chunk.segment, chainBefore: chain).encoded())
                    }
                    chunk.bytes.withUnsafeBytes { raw in
                        var offset = 0
                        while offset < raw.count {
                            let length = 8 + Int(RecordFormat.u32(raw, offset))
                            chain = hasher.chain(chain, UnsafeRawBufferPointer(rebasing: raw[offset..<offset + length]))
                            offset += length
                        }
                    }
                    try file.pwriteAll(chunk.bytes, at: chunk.offset)
                    if let crc = fileCRC, chunk.offset == length {
                        fileCRC = CRC32C.checksum(chunk.bytes, seed: crc)
                    } else {
                        fileCRC = nil
                    }
                    length = chunk.offset + chunk.bytes.count
                }
                writer.written()
                try file.fdatasync()
                writer.madeDurable(batch.last!.lastSeq, chain: chain)
            } catch {
                writer.failed(error)
                return
            }
        }
    }
}

enum SegmentCreation {
    /// Temp name, header, fsync, rename, fsync directory; returns the file open for writing.
    static func create(directory: String, firstSeq: UInt64, chainBefore: ChainHead) throws(SystemError) -> SegmentFile {
        let path = directory + "/" + SegmentName.fileName(firstSeq)
        let temporary = path + ".tmp"
        // A seal under this name is from a segment cut away earlier (repair): never this one's.
        let staleSeal = SegmentSeal.path(directory, firstSeq)
        if File.exists(staleSeal) { try File.unlink(staleSeal) }
        let file = try SegmentFile.open(temporary, .writeOnly, options: [.create, .truncate])
        do throws(SystemError) {
            try file.pwriteAll(SegmentHeader(firstSeq: firstSeq, chainBefore: chainBefore).encoded(), at: 0)
            try file.fsync()
            try File.rename(temporary, to: path)
            try Directory.fsync(directory)
        } catch {
            file.close()
            throw error
        }
        return SegmentFile(fd: file.fd, path: path)
    }
}
