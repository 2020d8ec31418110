// Snapshots (FORMAT.md "Snapshots") are written here, on a serial queue of
// their own, not on the event loop. Each one waits until its seq is durable,
// then writes its file with two fsyncs: 1-3 ms that the loop spent blocked,
// ten times a second under full load (-5..-10% of the pipelined request
// rate, p99 at 64 connections 3.3 -> 1.8 ms; docs/BENCHMARKS.md).
//
// The loop still encodes the state (right after the covered event) and
// hands over the bytes. Handing over the state itself would be cheaper on
// the loop but not in memory: the loop's next change would copy every table
// the queue still shares (measured: 837 -> 1,372 bytes per context at
// 100,000 contexts, the copy's pages kept by malloc).
//
// S-49: once a snapshot is on disk, the log's head at its seq goes to the
// anchor store (the journal), at most once a minute (S-58: clients drive
// snapshots with their events, and the anchors' journald pool must stay
// theirs: start, stop and these), and the file's SHA-256 goes back to the loop
// through `SnapshotInbox` (an eventfd the loop watches), which records it as
// a `snapshot-recorded` event: only the loop appends, and the hot path
// gains nothing (one more fd in epoll, readable once per snapshot).
//
// Snapshots only make startup faster: at most one waits behind the one
// being written (a newer one replaces it, so a slow disk holds at most two
// payloads in memory), and a failed one is reported and forgotten. Nor is
// one written when it would leave less than `[Log] ReserveSpace=` free: that
// space is kept for security events (S-48, SpaceReserve.swift).
import Dispatch
import LocalAuthLog
import LocalAuthSystem
import Synchronization

package final class SnapshotWriter: Sendable {
    private let log: EventLog
    private let inbox: SnapshotInbox
    private let anchors: AnchorStore?
    private let queue: SnapshotQueue
    private let now: @Sendable () -> Int64
    private let journal: @Sendable (JournalEntry) -> Void
    /// The snapshot waiting to be written: the newest handed over.
    private let pending = Mutex<(seq: UInt64, payload: [UInt8])?>(nil)
    /// When a snapshot's anchor was last journaled (monotonic ns).
    private let lastAnchor = Mutex<UInt64?>(nil)
    /// S-58: at most one snapshot anchor per minute, so that in any window
    /// of journald's rate limit (I s) the anchors' pool takes at most
    /// I/60 + 1 of them, besides one per start and one per stop.
    static let anchorInterval: UInt64 = 60_000_000_000

    /// `[Log] ReserveSpace=`, and the state directory whose file system it guards.
    private let reserve: Int64
    private let directory: String

    init(log: EventLog, reserve: Int, directory: String, inbox: SnapshotInbox, anchors: AnchorStore?,
         queue: SnapshotQueue, now: @escaping @Sendable () -> Int64, journal: @escaping @Sendable (JournalEntry) -> Void) {
        self.log = log
        self.reserve = Int64(reserve)
        self.directory = directory
        self.inbox = inbox
        self.anchors = anchors
        self.queue = queue
        self.now = now
        self.journal = journal
    }

    /// Writes a snapshot whose payload (the encoded state) covers every
    /// event up to `seq`, unless a newer one is handed over before it starts.
    func write(_ payload: [UInt8], seq: UInt64) {
        let queued = pending.withLock { slot in
            defer { slot = (seq, payload) }
            return slot != nil
        }
        // A job is already queued for the slot: it will take this one.
        if !queued { queue.async { [self] in writePending() } }
    }

    /// The seq of the snapshot waiting to be written, if any.
    package var pendingSeq: UInt64? { pending.withLock { $0?.seq } }

    private func writePending() {
        guard let job = pending.withLock({ slot in
            defer { slot = nil }
            return slot
        }) else { return }
        if reserve > 0, let free = log.storage.availableBytes(at: directory), free - Int64(job.payload.count) < reserve {
            journal(JournalEntry(.notice,
                "Skipped snapshot \(job.seq): it would leave less than ReserveSpace=\(reserve) bytes free (\(free) left)."))
            return
        }
        do {
            let head = try log.chainHead(at: job.seq)
            let digest = try log.snapshots.write(seq: job.seq, chainHead: head, time: now(), payload: job.payload)
            if let anchors, anchorIsDue() {
                anchors.record(LogAnchor(seq: job.seq, chainHead: head), stateDirectory: log.directory, event: "snapshot")
            }
            inbox.post(seq: job.seq, digest: digest)
        } catch {
            journal(JournalEntry(.error, "Failed to write snapshot \(job.seq): \(error)"))
        }
    }

    private func anchorIsDue() -> Bool {
        let now = MonotonicClock.nowNanos()
        return lastAnchor.withLock { last in
            if let last, now &- last < Self.anchorInterval { return false }
            last = now
            return true
        }
    }

    /// Waits for the snapshots handed over so far (before the log closes).
    package func finish() {
        queue.finish()
    }
}

/// Where snapshots are written: a serial queue of their own in the daemon;
/// the simulator runs each job at a step it chooses.
package protocol SnapshotQueue: Sendable {
    func async(_ job: @escaping @Sendable () -> Void)
    /// Returns when every job handed over so far has run.
    func finish()
}

/// The daemon's: one serial DispatchQueue.
package struct DispatchSnapshotQueue: SnapshotQueue {
    private let queue = DispatchQueue(label: "localauthd.snapshots")

    package init() {}

    package func async(_ job: @escaping @Sendable () -> Void) { queue.async(execute: job) }
    package func finish() { queue.sync {} }
}

/// Snapshots written and not yet recorded in the log: filled by the
/// snapshot queue, drained by the shell (`ServerCore.snapshotsWritten`).
package final class SnapshotInbox: Sendable {
    let wake: EventFD
    private let written = Mutex<[(seq: UInt64, digest: ChainHead)]>([])

    package init() throws {
        wake = try EventFD()
    }

    func post(seq: UInt64, digest: ChainHead) {
        written.withLock { $0.append((seq, digest)) }
        try? wake.post()
    }

    package func drain() -> [(seq: UInt64, digest: ChainHead)] {
        _ = try? wake.drain()
        return written.withLock { list in
            defer { list.removeAll() }
            return list
        }
    }
}
