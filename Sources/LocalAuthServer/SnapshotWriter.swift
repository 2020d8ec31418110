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
// Snapshots only make startup faster: at most one waits behind the one
// being written (a newer one replaces it, so a slow disk holds at most two
// payloads in memory), and a failed one is reported and forgotten. Nor is
// one written when it would leave less than `[Log] ReserveSpace=` free: that
// space is kept for security events (S-48, SpaceReserve.swift).
import Dispatch
import LocalAuthLog
import LocalAuthSystem
import Synchronization

final class SnapshotWriter: Sendable {
    private let log: EventLog
    private let queue = DispatchQueue(label: "localauthd.snapshots")
    /// The snapshot waiting to be written: the newest handed over.
    private let pending = Mutex<(seq: UInt64, payload: [UInt8])?>(nil)

    /// `[Log] ReserveSpace=`, and the state directory whose file system it guards.
    private let reserve: Int64
    private let directory: String

    init(log: EventLog, reserve: Int, directory: String) {
        self.log = log
        self.reserve = Int64(reserve)
        self.directory = directory
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

    private func writePending() {
        guard let job = pending.withLock({ slot in
            defer { slot = nil }
            return slot
        }) else { return }
        if reserve > 0, let free = FreeSpace.available(at: directory), free - Int64(job.payload.count) < reserve {
            DaemonLog.notice("Skipped snapshot \(job.seq): it would leave less than ReserveSpace=\(reserve) bytes free (\(free) left).")
            return
        }
        do {
            let head = try log.chainHead(at: job.seq)
            try log.snapshots.write(seq: job.seq, chainHead: head, time: WallClock.nowMicros(), payload: job.payload)
        } catch {
            DaemonLog.error("Failed to write snapshot \(job.seq): \(error)")
        }
    }

    /// Waits for the snapshots handed over so far (before the log closes).
    func finish() {
        queue.sync {}
    }
}
