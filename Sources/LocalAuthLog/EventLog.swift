// The event log of one state directory: open with recovery (FORMAT.md "Open
// and recovery"), group-committed appends, per-context and per-user history
// through the in-memory index, and the chain head at any seq (for snapshots).
// Offline tools open it read-only: nothing on disk changes then.

import Glibc
import LocalAuthCore
import LocalAuthSystem
import Synchronization

public final class EventLog: Sendable {
    public struct Options: Sendable {
        /// A new segment starts when the next record would pass this size.
        public var segmentSize: Int
        /// How much of the hash chain open recomputes and checks (`.records`).
        public var chainCheck: ChainCheck
        /// Record by record (default), or trusting seals (the daemon).
        public var verification: Verification
        /// With `.sealed`: the sealed segments that the newest snapshot file
        /// wholly covers are checked by header, length, seal and seams only;
        /// their records' hash is left to `checkDeferred` (S-49,
        /// CoveredSegments.swift). Default false: every seal is hashed.
        public var deferCoveredSegments: Bool
        /// Read-only: no recovery writes, no appends (offline tools on a live directory).
        public var readOnly: Bool
        /// When the sync thread fdatasyncs: at every append (default), or when asked.
        public var syncPolicy: SyncPolicy
        /// Zeros written ahead of the records, this many bytes at a time (0:
        /// none, the default). FORMAT.md "Preallocation".
        public var preallocation: Int
        /// Whether appended records join the per-context/per-user index that
        /// `history` reads (default). A daemon that never asks for history
        /// turns it off: the index costs two hash updates per record and
        /// grows with every record for as long as the log stays open.
        public var indexesAppends: Bool
        /// The writer keeps chain[seq] for every seq that is a multiple of
        /// this (0: none, the default), so that `chainHead(at:)` answers
        /// for such a seq without rereading the segment after later records
        /// became durable: the daemon's snapshots, written off its loop.
        public var chainMarkEvery: UInt64
        /// Called on a sync thread with each new durable seq, in increasing
        /// order (one overtaken by a newer may be skipped; wake the event loop here).
        public var onDurable: (@Sendable (UInt64) -> Void)?
        /// Called once, when the writer fails: on the thread that hit the
        /// failure (the sync thread, or the caller of `write()`), with the
        /// writer's locks held, so it must not call back into the log.
        public var onFailure: (@Sendable (WriteFailure) -> Void)?
        /// The file system (the kernel's; the simulator's in memory).
        public var storage: any Storage
        /// Who runs the writer's sync work: its own threads, or the owner,
        /// one step at a time (`EventLog.syncStep`, the simulator).
        public var sync: SyncDriver

        public init(
            segmentSize: Int = 64 << 20, chainCheck: ChainCheck = .full, verification: Verification = .records,
            readOnly: Bool = false, syncPolicy: SyncPolicy = .eachAppend, preallocation: Int = 0,
            indexesAppends: Bool = true, chainMarkEvery: UInt64 = 0, deferCoveredSegments: Bool = false,
            onDurable: (@Sendable (UInt64) -> Void)? = nil, onFailure: (@Sendable (WriteFailure) -> Void)? = nil,
            storage: any Storage = DiskStorage.shared, sync: SyncDriver = .threads
        ) {
            self.segmentSize = segmentSize
            self.chainCheck = chainCheck
            self.verification = verification
            self.readOnly = readOnly
            self.syncPolicy = syncPolicy
            self.preallocation = max(0, preallocation)
            self.indexesAppends = indexesAppends
            self.chainMarkEvery = chainMarkEvery
            self.deferCoveredSegments = deferCoveredSegments
            self.onDurable = onDurable
            self.onFailure = onFailure
            self.storage = storage
            self.sync = sync
        }
    }

    /// The state directory (holding `log/` and `snapshots/`).
    public let directory: String
    /// Where its files are.
    public let storage: any Storage
    public let recovery: Recovery
    let writer: LogWriter?
    let readOnlyIndex: LogIndex
    let readOnlyChain: ChainHead
    /// `.sealed`: the index of what was in the log at open, built on first use.
    let lazyIndex: LazyIndex?

    public var logDirectory: String { directory + "/log" }
    public var snapshots: SnapshotStore { SnapshotStore(directory: directory, storage: storage) }

    private init(
        directory: String, storage: any Storage, recovery: Recovery, writer: LogWriter?, index: LogIndex, chain: ChainHead,
        lazyIndex: LazyIndex? = nil
    ) {
        self.lazyIndex = lazyIndex
        self.directory = directory
        self.storage = storage
        self.recovery = recovery
        self.writer = writer
        readOnlyIndex = index
        readOnlyChain = chain
    }

    /// How often the sync threads were asked for work, and how many of
    /// those asks a finished round has served (tests observe these instead
    /// of sleeping).
    var syncKicks: UInt64 { writer.map { writer in writer.lock.withLock { writer.lock.state.kicks } } ?? 0 }
    var syncKicksServed: UInt64 { writer?.kicksServed.load(ordering: .acquiring) ?? 0 }

    deinit { writer?.close() }

    /// Opens the log of `directory`, cutting a torn tail (kept in `.broken`);
    /// refuses with `.untrustworthy` when anything else is wrong (S-41).
    public static func open(_ directory: String, options: Options = Options()) throws(LogError) -> EventLog {
        let logDirectory = directory + "/log"
        let storage = options.storage
        do {
            if options.readOnly {
                if !storage.exists(logDirectory) {
                    return EventLog(directory: directory, storage: storage, recovery: Recovery(), writer: nil, index: LogIndex(), chain: .zero)
                }
            } else {
                try storage.createDirectory(logDirectory, mode: 0o750)
                try storage.createDirectory(directory + "/snapshots", mode: 0o750)
                for name in try storage.entries(logDirectory) where name.hasSuffix(".seg.tmp") || SegmentSeal.isLeftover(name) {
                    try storage.unlink(logDirectory + "/" + name)
                }
            }
            let lazy = options.verification == .sealed
            // The newest snapshot file's seq, whether or not it proves trusted:
            // the daemon's boot checks at once what a skipped one left unhashed.
            let deferThrough = lazy && options.deferCoveredSegments
                ? ((try? SnapshotStore(directory: directory, storage: storage).list().last) ?? 0) : 0
            let reader = try LogReader(
                storage: storage, logDirectory: logDirectory, chain: options.chainCheck == .none ? .lastSegment : options.chainCheck,
                trustSeals: lazy, deferThrough: deferThrough)
            var index = LogIndex()
            var recovery = Recovery()
            if lazy { for segment in reader.segments { index.addSegment(segment) } }
            // The heads a writer keeps (`chainMarkEvery`), taken as the scan
            // passes them: the start's snapshot check asks for the head at
            // the newest snapshot's seq, which would otherwise rehash the
            // last segment up to it (~30 MB on the benchmark's log).
            var marks: [ChainMark] = []
            scan: while true {
                switch reader.next() {
                case .record(let record):
                    if !lazy {
                        index.addSegment(record.position.segment)
                        index.add(record.keys, offset: record.position.offset)
                    }
                    recovery.lastSeq = record.seq
                    if options.chainMarkEvery > 0, record.seq % options.chainMarkEvery == 0, let head = reader.chainHead {
                        marks.append(ChainMark(seq: record.seq, head: head))
                        if marks.count > ChainMark.kept { marks.removeFirst() }
                    }
                case .end:
                    break scan
                case .tornTail(let torn):
                    recovery.tornTail = torn
                    break scan
                case .corruption(let corruption):
                    throw LogError.untrustworthy(corruption)
                }
            }
            var end = reader.currentOffset
            var chain = reader.chainStream ?? ChainStream(before: .zero)
            if let last = reader.segments.last { index.addSegment(last) }
            recovery.segments = reader.segments.count
            recovery.lastSeq = max(recovery.lastSeq, reader.lastSeq)
            recovery.sealedSegmentsTrusted = reader.sealedSegmentsSkipped
            recovery.deferredSegments = reader.deferred
            let lazyIndex = lazy ? LazyIndex(storage: storage, logDirectory: logDirectory, lastSeq: recovery.lastSeq) : nil
            if options.readOnly {
                return EventLog(directory: directory, storage: storage, recovery: recovery, writer: nil, index: index, chain: chain.head,
                                lazyIndex: lazyIndex)
            }
            // The last segment is appended to: a seal left by a crash during rotation no longer holds.
            if let last = reader.segments.last, storage.exists(SegmentSeal.path(logDirectory, last)) {
                try storage.unlink(SegmentSeal.path(logDirectory, last))
                try storage.syncDirectory(logDirectory)
            }
            // Segments scanned record by record for want of a (right) seal: seal them now.
            for seal in reader.resealable {
                try seal.write(storage, logDirectory)
                recovery.sealsWritten += 1
            }
            if let torn = recovery.tornTail {
                let path = logDirectory + "/" + SegmentName.fileName(torn.segment)
                let broken = LogFiles.unusedName(storage, path + ".broken")
                try LogFiles.keepCopy(storage, of: path, from: torn.offset, length: torn.length, to: broken)
                let file = try SegmentFile.open(storage, path, .writeOnly)
                defer { file.close() }
                try file.truncate(to: torn.offset)
                try file.fsync()
                recovery.brokenCopy = broken
                end = torn.offset
            }
            if reader.segments.isEmpty {
                try SegmentCreation.create(storage, directory: logDirectory, firstSeq: 1, chainBefore: .zero).close()
                index.addSegment(1)
                recovery.segments = 1
                end = SegmentHeader.size
                chain = ChainStream(before: .zero)
            }
            let writer = try LogWriter(
                storage: storage, logDirectory: logDirectory, segment: index.segments.last!, end: end, lastSeq: recovery.lastSeq,
                chain: chain, index: index, segmentSize: options.segmentSize, policy: options.syncPolicy,
                preallocation: options.preallocation, indexing: options.indexesAppends,
                chainMarkEvery: options.chainMarkEvery, marks: marks, onDurable: options.onDurable,
                onFailure: options.onFailure, sync: options.sync)
            return EventLog(directory: directory, storage: storage, recovery: recovery, writer: writer, index: LogIndex(),
                            chain: chain.head, lazyIndex: lazyIndex)
        } catch let error as LogError {
            throw error
        } catch let error as SystemError {
            throw .io(error)
        } catch {
            throw .io(SystemError(call: "open", errno: EIO, path: logDirectory))
        }
    }

    // MARK: Appending

    /// Appends one record; returns its seq at once. Durable later: see
    /// `durableSeq`, `waitDurable`, `Options.onDurable`.
    @discardableResult
    public func append(time: Int64, keys: RecordKeys, payload: UnsafeRawBufferPointer) throws(LogError) -> UInt64 {
        guard let writer else { throw .closed }
        return try writer.append(time: time, keys: keys, payload: payload)
    }

    @discardableResult
    public func append(time: Int64, keys: RecordKeys, payload: [UInt8]) throws(LogError) -> UInt64 {
        guard let writer else { throw .closed }
        var result: Result<UInt64, LogError> = .failure(.closed)
        payload.withUnsafeBytes { raw in
            do throws(LogError) { result = .success(try writer.append(time: time, keys: keys, payload: raw)) } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }

    /// Writes (pwrite, no fdatasync) every record appended so far: they
    /// survive the process being killed. With `.onDemand` the owner calls this
    /// before it acknowledges what it appended. Throws when the writer failed.
    public func write() throws(LogError) {
        guard let writer else { throw .closed }
        try writer.write()
    }

    /// Records were appended that are not on the file yet (`write()`).
    public var hasUnwritten: Bool {
        guard let writer else { return false }
        return writer.appended.load(ordering: .acquiring) > writer.written.load(ordering: .acquiring)
    }

    /// Asks for every seq up to `seq` to become durable without waiting;
    /// `durableSeq` and `onDurable` tell when it is.
    public func commit(through seq: UInt64) {
        writer?.commit(through: seq)
    }

    /// `SyncDriver.stepped`: runs the sync thread's next turn (write what
    /// is appended, fdatasync what was asked for, publish it) if one was
    /// asked for; returns whether it ran.
    @discardableResult
    package func syncStep() -> Bool { writer?.syncStep() ?? false }

    /// The last seq whose record is on the file (pwrite done, maybe not synced).
    package var writtenSeq: UInt64 { writer?.written.load(ordering: .acquiring) ?? recovery.lastSeq }

    /// Every seq up to this one is on disk (fdatasync'd). Only grows.
    public var durableSeq: UInt64 { writer?.durable.load(ordering: .acquiring) ?? recovery.lastSeq }

    /// Bytes of file system space that the records appended since open will
    /// take once written, counted at append (SpaceClaim.swift): never less
    /// than what the log's files grow by, preallocation, new segments and
    /// their seals included. Free space seen by statvfs at some moment when
    /// everything appended was written, minus how much this grew since, is
    /// an estimate of the free space that errs low (the daemon's reserve).
    public var bytesClaimed: Int64 { writer?.claimed.load(ordering: .relaxed) ?? 0 }

    /// `bytesClaimed` as of the records already on the file: read it before
    /// statvfs, and `bytesClaimed - bytesClaimedWritten` then is what that
    /// free space does not show yet, whoever writes meanwhile (a write in
    /// between is counted twice, never missed).
    public var bytesClaimedWritten: Int64 { writer?.claimedWritten.load(ordering: .acquiring) ?? 0 }

    /// The last seq appended (durable or not).
    public var lastSeq: UInt64 { writer?.appended.load(ordering: .acquiring) ?? recovery.lastSeq }

    /// Blocks until `seq` is durable; throws when it never will be.
    public func waitDurable(_ seq: UInt64) throws(LogError) {
        guard let writer else {
            if seq <= recovery.lastSeq { return }
            throw .closed
        }
        try writer.waitDurable(seq)
    }

    /// Makes everything appended durable (when the writer has not failed) and
    /// stops the sync thread. Appends fail afterwards.
    public func close() throws(LogError) {
        guard let writer else { return }
        writer.close()
        if let failure = writer.lock.withLock({ writer.lock.state.failure }) { throw .writeFailed(failure) }
    }
}
