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
// Snapshots only make startup faster: one that is overtaken by a newer one
// before it starts is skipped, and a failed one is reported and forgotten.
import Dispatch
import LocalAuthLog
import LocalAuthSystem
import Synchronization

final class SnapshotWriter: Sendable {
    private let log: EventLog
    private let queue = DispatchQueue(label: "localauthd.snapshots")
    /// The newest seq handed over; an older job that has not started skips itself.
    private let newest = Atomic<UInt64>(0)

    init(log: EventLog) {
        self.log = log
    }

    /// Writes a snapshot whose payload (the encoded state) covers every
    /// event up to `seq`.
    func write(_ payload: [UInt8], seq: UInt64) {
        newest.store(seq, ordering: .releasing)
        queue.async { [self] in
            guard newest.load(ordering: .acquiring) == seq else { return }
            do {
                let head = try log.chainHead(at: seq)
                try log.snapshots.write(seq: seq, chainHead: head, time: WallClock.nowMicros(), payload: payload)
            } catch {
                DaemonLog.error("Failed to write snapshot \(seq): \(error)")
            }
        }
    }

    /// Waits for the snapshot being written, if any (before the log closes).
    func finish() {
        queue.sync {}
    }
}
