// The sync threads of a LogWriter (LogWriter.swift says what they are for):
// each waits to be asked, writes what is appended, fdatasyncs outside the
// appender's lock, and publishes what became durable. Two take turns, so a
// demand made while one is inside fdatasync starts the next sync at once.
import Glibc
import LocalAuthSystem

extension LogWriter {
    /// Waits to be asked (or closed): returns whether the log is closing,
    /// and how often the threads had been asked by then.
    func awaitWork() -> (closing: Bool, kicks: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        // A failed writer has nothing to sync: the thread wakes to leave.
        while !lock.state.kicked && !lock.state.closing && lock.state.failure == nil { lock.wait(Self.work) }
        lock.state.kicked = false
        return (lock.state.closing, lock.state.kicks)
    }

    func runSyncThread() {
        // Each thread syncs through its own descriptor of the segment, closed
        // only by that thread, so no fdatasync runs on a closed (or reused) fd.
        var syncing: (segment: UInt64, file: SegmentFile)?
        defer {
            syncing?.file.close()
            exited()
        }
        while true {
            let (closing, kicks) = awaitWork()
            let going = syncPass(closing: closing, syncing: &syncing)
            served(kicks)
            if !going || closing { return }
        }
    }

    /// A round that began after `kicks` asks has looked at them.
    private func served(_ kicks: UInt64) {
        // Two threads: the served count only grows.
        var served = kicksServed.load(ordering: .relaxed)
        while served < kicks {
            let (exchanged, now) = kicksServed.compareExchange(expected: served, desired: kicks, ordering: .acquiringAndReleasing)
            if exchanged { break }
            served = now
        }
    }

    /// One turn of a sync thread: write what is appended, fdatasync what
    /// somebody asked for, publish it. False when the writer has failed.
    func syncPass(closing: Bool, syncing: inout (segment: UInt64, file: SegmentFile)?) -> Bool {
        do throws(LogError) { try write() } catch { return false }
        // What is written, and whether anybody asked for it.
        let target: (seq: UInt64, chain: ChainHead, end: Int)?
        do throws(SystemError) {
            target = try appender.withLock { appender throws(SystemError) -> (seq: UInt64, chain: ChainHead, end: Int)? in
                let (demand, failure) = lock.withLock { (lock.state.demand, lock.state.failure) }
                // A failed write may have left the appender's chain ahead of what is on the file.
                if failure != nil { return nil }
                let written = appender.writtenSeq
                let wanted = closing ? written : min(written, demand)
                guard wanted > durable.load(ordering: .acquiring) else { return nil }
                let fresh = try appender.syncFile(syncing)
                if let old = syncing, old.segment != fresh.segment { old.file.close() }
                syncing = fresh
                return (written, appender.chain, appender.length)
            }
            // Outside the appender's lock: the loop keeps writing while the disk syncs.
            if target != nil, let syncing { try syncing.file.fdatasync() }
        } catch {
            _ = failed(error)
            return false
        }
        if let target {
            madeDurable(target.seq, chain: target.chain)
            // The log is written once and read back only at a start or by
            // an auditor: its synced pages leave the page cache rather
            // than pile up (~100 MB/s at full rate). Fresh page cache pages
            // are what a write costs most (first touch of memory); freed
            // ones are the next to be reused. Zeros ahead of the records
            // (preallocation) stay.
            if let syncing { dropSynced(syncing, below: target.end) }
        }
        return true
    }

    /// `SyncDriver.stepped`: the sync thread's next turn, run by the owner
    /// if it was asked for one (or the log closes). Returns whether it ran.
    @discardableResult
    func syncStep() -> Bool {
        let asked: (closing: Bool, kicks: UInt64)? = lock.withLock {
            guard lock.state.kicked || lock.state.closing, !lock.state.exited else { return nil }
            lock.state.kicked = false
            return (lock.state.closing, lock.state.kicks)
        }
        guard let (closing, kicks) = asked else { return false }
        var syncing = stepSyncing.withLock { kept in
            defer { kept = nil }
            return kept
        }
        let going = syncPass(closing: closing, syncing: &syncing)
        served(kicks)
        if !going || closing {
            syncing?.file.close()
            exited()
        } else {
            stepSyncing.withLock { $0 = syncing }
        }
        return true
    }

    /// Publishes `seq` as durable, unless the writer failed meanwhile (a
    /// write on the owner's thread can fail while this thread syncs): once
    /// failed, nothing after the reported `firstNotDurable - 1` is acknowledged.
    private func madeDurable(_ seq: UInt64, chain: ChainHead) {
        let published: Bool = lock.withLock {
            guard lock.state.failure == nil, seq > durable.load(ordering: .acquiring) else { return false }
            durable.store(seq, ordering: .releasing)
            lock.state.durableChain = chain
            lock.broadcast(Self.durableChanged)
            return true
        }
        // In increasing order: the other thread may publish a newer seq
        // between the lock above and this call; the older one is then not
        // reported (the newer covers it).
        if published, let onDurable {
            reported.withLock { last in
                guard seq > last else { return }
                last = seq
                onDurable(seq)
            }
        }
    }

    /// Puts the writer in the failed state (once), reports it, and returns
    /// the failure (the first one, if it had already failed).
    func failed(_ cause: SystemError) -> WriteFailure {
        let (failure, first): (WriteFailure, Bool) = lock.withLock {
            if let earlier = lock.state.failure { return (earlier, false) }
            let failure = WriteFailure(firstNotDurable: durable.load(ordering: .acquiring) + 1, cause: cause)
            lock.state.failure = failure
            lock.state.inflight = []
            lock.broadcast(Self.durableChanged)
            lock.broadcast(Self.work)
            return (failure, true)
        }
        if first { onFailure?(failure) }
        return failure
    }

    /// Drops the synced bytes of the open segment from the page cache, in
    /// steps of `dropStep`, not after every sync: the hint (~30 us) sits
    /// between this fdatasync and the next, and under many waiting failures
    /// a sync covers a few KB (strace: a call after 72% of the syncs, 32 us
    /// against 391 us per fdatasync; docs/perf-notes/2026-12-01-final-runs.md).
    /// The range is claimed under the lock, so the two threads never drop
    /// the same bytes twice.
    private func dropSynced(_ syncing: (segment: UInt64, file: SegmentFile), below end: Int) {
        let from: Int? = lock.withLock {
            if lock.state.dropped.segment != syncing.segment { lock.state.dropped = (syncing.segment, 0) }
            let from = lock.state.dropped.below
            guard end - from >= Self.dropStep else { return nil }
            lock.state.dropped.below = end & ~4095  // whole pages, as dropCachedPages drops
            return from
        }
        if let from { _ = syncing.file.dropCachedPages(from: from, below: end) }
    }

    /// The last sync thread to leave closes the segment file and tells
    /// waiters nothing more becomes durable.
    func exited() {
        let last: Bool = lock.withLock {
            lock.state.syncThreads -= 1
            return lock.state.syncThreads == 0
        }
        guard last else { return }
        appender.withLock { $0.close() }
        lock.withLock {
            lock.state.exited = true
            lock.broadcast(Self.durableChanged)
        }
    }
}
