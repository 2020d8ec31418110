// Group commit, in two steps.
//
// `append` encodes a record into an in-memory chunk and returns its seq at
// once (cheap, never blocks on the disk: the daemon's epoll loop calls it).
// `write` chains and pwrites everything appended so far: from then on the
// records survive the process being killed. The daemon calls it once per
// loop turn, before it sends that turn's replies (like Redis's AOF write in
// beforeSleep); otherwise the sync thread does it.
//
// A sync thread fdatasyncs when a seq is *demanded* durable: by
// `commit(through:)`, `waitDurable`, `close`, and with `SyncPolicy.eachAppend`
// by every append. It publishes `durableSeq` (atomic) and calls `onDurable`
// (the daemon writes its eventfd there to wake its loop). Any number of
// records share one fdatasync; with `.onDemand` the records nobody waits for
// share the next one somebody asks for.
//
// Two sync threads take turns: a demand that arrives while one is inside
// fdatasync is written and synced by the other at once, instead of waiting
// for the first sync to end and then for a second one (a failure arriving
// mid-sync waited ~2 sync periods with one thread; docs/perf-notes,
// 2026-12-02-targets.md d). Linux allows concurrent fdatasyncs of one
// file; each makes durable what was written before it was called, so each
// thread publishes the seq it had written when it called (never lower than
// what is published: `madeDurable` only moves forward).
//
// Failure is final (fail closed): the first failed write or fdatasync puts the
// writer in the failed state; `onFailure` says which seqs are not durable,
// appends throw, no later seq is ever acknowledged. To continue, the owner
// closes the log and opens it again (open runs recovery). See FORMAT.md.

import Glibc
import LocalAuthSystem
import Synchronization

/// Who runs a writer's sync work (EventLog.Options.sync).
public enum SyncDriver: Sendable {
    /// `LogWriter.syncThreadCount` threads of the writer's own.
    case threads
    /// The owner, one turn at a time (`EventLog.syncStep()`); a wait for
    /// durability runs the turns itself. The deterministic simulator
    /// steps the real writer so.
    case stepped
}

/// When the sync thread fdatasyncs (EventLog.Options.syncPolicy).
public enum SyncPolicy: Sendable {
    /// Every append asks for durability at once; the sync thread writes and
    /// syncs (tools, tests, the library's default).
    case eachAppend
    /// Only `commit(through:)`, `waitDurable` and `close` ask; the owner
    /// calls `write()` itself (the daemon: failures and admin actions are
    /// demanded, everything else rides along or waits for the batch, at most 100 ms).
    case onDemand
}

extension LogWriter.State {
    /// Encodes one record at the end of the current chunk, starting a new
    /// segment when it would not fit; returns its seq.
    mutating func append(
        time: Int64, keys: RecordKeys, payload: UnsafeRawBufferPointer, size: Int, segmentSize: Int
    ) throws(LogError) -> UInt64 {
        if let failure { throw .writeFailed(failure) }
        if closing { throw .closed }
        let seq = nextSeq
        if segmentEnd + size > segmentSize && segmentEnd > SegmentHeader.size {
            if let current { sealed.append(current) }
            current = PendingChunk(segment: seq, createsSegment: true, offset: SegmentHeader.size, bytes: takeSpare(), lastSeq: seq)
            segment = seq
            segmentEnd = SegmentHeader.size
            index.addSegment(seq)
            space.newSegment(headerSize: SegmentHeader.size)
        } else if current == nil {
            current = PendingChunk(segment: segment, createsSegment: false, offset: segmentEnd, bytes: takeSpare(), lastSeq: seq)
        }
        // Encoded where it will be written from (ChunkBytes).
        current!.bytes.append(uninitialized: size) { raw in
            RecordFormat.encode(seq: seq, time: time, keys: keys, payload: payload, at: raw)
        }
        current!.lastSeq = seq
        if indexing { index.add(keys, offset: segmentEnd) }
        segmentEnd += size
        space.extend(to: segmentEnd)
        nextSeq = seq + 1
        return seq
    }
}

extension LogWriter.State {
    /// The buffer of the last written chunk, emptied, for the next one: a
    /// busy turn appends ~100 KB, which would otherwise be allocated and
    /// regrown (copied) anew every turn.
    mutating func takeSpare() -> ChunkBytes {
        guard let bytes = spare else { return ChunkBytes(capacity: 4096) }
        spare = nil
        return bytes
    }
}

/// Bytes appended but not yet written, bound for one segment.
struct PendingChunk {
    var segment: UInt64
    /// The segment file does not exist yet: the writing side creates it first.
    var createsSegment: Bool
    var offset: Int
    let bytes: ChunkBytes
    var lastSeq: UInt64

    func contains(_ position: LogPosition) -> Bool {
        position.segment == segment && position.offset >= offset && position.offset < offset + bytes.count
    }
}

final class LogWriter: Sendable {
    struct State {
        var sealed: [PendingChunk] = []
        var current: PendingChunk?
        /// Taken by a `write`; readable here until written.
        var inflight: [PendingChunk] = []
        /// An empty buffer with capacity, for the next chunk (`takeSpare`).
        var spare: ChunkBytes?
        var nextSeq: UInt64
        var segment: UInt64
        var segmentEnd: Int
        var index: LogIndex
        /// Appends join `index` (EventLog.Options.indexesAppends).
        let indexing: Bool
        var failure: WriteFailure?
        var closing = false
        var exited = false
        /// The chain head after the last durable record.
        var durableChain: ChainHead
        /// Every seq up to this one is wanted durable.
        var demand: UInt64
        /// A sync thread has been asked to look since one last did.
        var kicked = false
        /// How often the sync threads were asked (`kicked` set): a test
        /// observes that nothing asked them, rather than waiting to see.
        var kicks: UInt64 = 0
        /// File system space the appended records will take (SpaceClaim.swift).
        var space = SpaceClaim(allocated: 0, step: 0)
        /// Sync threads not yet exited (the last one closes the file).
        var syncThreads = 0
        /// The open segment's bytes already dropped from the page cache.
        var dropped = (segment: UInt64(0), below: 0)
    }

    /// Sync threads per writer: one may wait in fdatasync while the other
    /// starts the next (more would queue behind the same journal commit).
    static let syncThreadCount = 2

    static let work = 0
    static let durableChanged = 1
    /// Synced bytes left in the page cache before the sync thread drops
    /// them (a rotation drops the rest of the finished segment).
    static let dropStep = 256 << 10

    let lock: ConditionLock<State>
    let durable: Atomic<UInt64>
    let appended: Atomic<UInt64>
    /// The last seq on the file (pwrite done).
    let written: Atomic<UInt64>
    /// `State.space.total`, for the owner to read without the lock.
    let claimed: Atomic<Int64>
    /// `claimed` as of the records on the file (pwrite done).
    let claimedWritten: Atomic<Int64>
    let segmentSize: Int
    let policy: SyncPolicy
    let indexing: Bool
    /// The file side; taken before `lock` when both are needed.
    let appender: Mutex<SegmentAppender>
    let onDurable: (@Sendable (UInt64) -> Void)?
    /// The last seq given to `onDurable` (LogSyncThreads.swift keeps them increasing).
    let reported = Mutex<UInt64>(0)
    let onFailure: (@Sendable (WriteFailure) -> Void)?
    /// The `kicks` a sync thread had seen when it last finished a round
    /// (woken, looked, done): a test waits for the round after its demand
    /// instead of sleeping.
    let kicksServed = Atomic<UInt64>(0)
    private let threads = Mutex<[pthread_t]>([])
    let driver: SyncDriver
    /// `.stepped`: the one sync turn's own descriptor between steps.
    let stepSyncing = Mutex<(segment: UInt64, file: SegmentFile)?>(nil)

    /// Starts appending after `lastSeq` at `end` of the existing segment `segment`.
    init(
        storage: any Storage = DiskStorage.shared, logDirectory: String, segment: UInt64, end: Int, lastSeq: UInt64,
        chain: ChainStream, index: LogIndex, segmentSize: Int, policy: SyncPolicy, preallocation: Int, indexing: Bool = true,
        chainMarkEvery: UInt64 = 0, marks: [ChainMark] = [], onDurable: (@Sendable (UInt64) -> Void)?,
        onFailure: (@Sendable (WriteFailure) -> Void)?, sync: SyncDriver = .threads
    ) throws(SystemError) {
        let file = try SegmentFile.open(storage, logDirectory + "/" + SegmentName.fileName(segment), .writeOnly)
        lock = ConditionLock(
            State(nextSeq: lastSeq + 1, segment: segment, segmentEnd: end, index: index, indexing: indexing,
                  durableChain: chain.head, demand: lastSeq),
            conditions: 2)
        durable = Atomic(lastSeq)
        appended = Atomic(lastSeq)
        written = Atomic(lastSeq)
        claimed = Atomic(0)
        claimedWritten = Atomic(0)
        self.segmentSize = max(segmentSize, SegmentHeader.size + RecordFormat.headerSize)
        self.policy = policy
        self.indexing = indexing
        let files: SegmentAppender
        do throws(SystemError) {
            files = try SegmentAppender(
                storage: storage, directory: logDirectory, file: file, chain: chain, segment: segment, end: end, lastSeq: lastSeq,
                preallocation: preallocation, markEvery: chainMarkEvery, marks: marks)
        } catch {
            file.close()
            throw error
        }
        // Claims start from the open segment's size on the file (zeros a
        // previous writer preallocated included).
        let space = SpaceClaim(allocated: files.allocated, step: files.preallocation)
        appender = Mutex(files)
        self.onDurable = onDurable
        self.onFailure = onFailure
        driver = sync
        lock.withLock { lock.state.space = space }
        lock.withLock { lock.state.syncThreads = sync == .threads ? Self.syncThreadCount : 1 }
        guard sync == .threads else { return }
        for _ in 0..<Self.syncThreadCount {
            var handle = pthread_t()
            let started = pthread_create(&handle, nil, { argument in
                let writer = Unmanaged<LogWriter>.fromOpaque(argument!).takeRetainedValue()
                writer.runSyncThread()
                return nil
            }, Unmanaged.passRetained(self).toOpaque())
            guard started == 0 else { fatalError("Failed to start the event log sync thread: errno \(started)") }
            threads.withLock { $0.append(handle) }
        }
    }

    func append(time: Int64, keys: RecordKeys, payload: UnsafeRawBufferPointer) throws(LogError) -> UInt64 {
        guard payload.count <= RecordFormat.maxPayload else { throw .payloadTooLarge(payload.count) }
        let size = RecordFormat.recordSize(payload: payload.count)
        lock.lock()
        defer { lock.unlock() }
        // One access to the guarded state for the whole append.
        let seq = try lock.state.append(time: time, keys: keys, payload: payload, size: size, segmentSize: segmentSize)
        appended.store(seq, ordering: .releasing)
        // Read on the owner's thread only (the one appending): relaxed.
        claimed.store(lock.state.space.total, ordering: .relaxed)
        if policy == .eachAppend { demandLocked(seq) }
        return seq
    }

    /// chain[seq] if the appender kept it (`chainMarkEvery`) and it is
    /// still among the last few kept.
    func markedChain(_ seq: UInt64) -> ChainHead? {
        appender.withLock { appender in appender.marks.last { $0.seq == seq }?.head }
    }

    /// Chains and writes (pwrite, no fdatasync) everything appended so far.
    /// Throws when the writer has failed (now or before).
    func write() throws(LogError) {
        try appender.withLock { appender throws(LogError) in
            var claims: Int64 = 0
            var batch: [PendingChunk] = try lock.withLock { () throws(LogError) -> [PendingChunk] in
                if let failure = lock.state.failure { throw .writeFailed(failure) }
                var batch = lock.state.sealed
                if let current = lock.state.current { batch.append(current) }
                lock.state.sealed = []
                lock.state.current = nil
                lock.state.inflight = batch
                // The batch is everything appended: these are its claims.
                claims = lock.state.space.total
                return batch
            }
            if batch.isEmpty { return }
            do throws(SystemError) { try appender.write(batch) } catch { throw .writeFailed(failed(error)) }
            claimedWritten.store(claims, ordering: .releasing)
            let spare = batch.removeLast().bytes
            batch = []
            lock.withLock {
                lock.state.inflight = []
                // Listed nowhere now (inflight is empty): emptied in place,
                // its capacity kept (up to 1 MiB).
                if lock.state.spare == nil, spare.capacity <= 1 << 20 {
                    spare.removeAll()
                    lock.state.spare = spare
                }
            }
            written.store(appender.writtenSeq, ordering: .releasing)
        }
    }

    /// Asks for every seq up to `seq` to become durable (the sync thread
    /// writes what is not written yet and fdatasyncs once).
    func commit(through seq: UInt64) {
        if durable.load(ordering: .acquiring) >= seq { return }
        lock.withLock { demandLocked(seq) }
    }

    /// The lock is held.
    private func demandLocked(_ seq: UInt64) {
        if seq > lock.state.demand { lock.state.demand = seq }
        if !lock.state.kicked {
            lock.state.kicked = true
            lock.state.kicks += 1
            lock.signal(Self.work)
        }
    }

    func waitDurable(_ seq: UInt64) throws(LogError) {
        if durable.load(ordering: .acquiring) >= seq { return }
        lock.lock()
        defer { lock.unlock() }
        if seq < lock.state.nextSeq { demandLocked(seq) }
        while durable.load(ordering: .acquiring) < seq {
            if let failure = lock.state.failure { throw .writeFailed(failure) }
            if lock.state.exited || seq >= lock.state.nextSeq { throw .closed }
            if driver == .stepped {
                // No thread will sync: this caller takes the sync turn.
                lock.unlock()
                let ran = syncStep()
                lock.lock()
                if !ran, durable.load(ordering: .acquiring) < seq, lock.state.failure == nil { throw .closed }
                continue
            }
            lock.wait(Self.durableChanged)
        }
    }

    /// Writes and syncs what was appended, then stops the sync threads.
    func close() {
        lock.withLock {
            lock.state.closing = true
            lock.broadcast(Self.work)
        }
        if driver == .stepped { syncStep() }
        let handles = threads.withLock { handles -> [pthread_t] in
            defer { handles = [] }
            return handles
        }
        for handle in handles { pthread_join(handle, nil) }
    }

    /// A copy of the bytes of a record that is not written to its file yet.
    func unwrittenRecord(at position: LogPosition) -> [UInt8]? {
        lock.withLock {
            let chunks = lock.state.inflight + lock.state.sealed + (lock.state.current.map { [$0] } ?? [])
            guard let chunk = chunks.first(where: { $0.contains(position) }) else { return nil }
            let start = position.offset - chunk.offset
            let length = Int(RecordFormat.u32(chunk.bytes.bytes, start))
            return chunk.bytes.copy(start..<start + 8 + length)
        }
    }
}
