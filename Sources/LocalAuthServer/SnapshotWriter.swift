// Snapshots (FORMAT.md "Snapshots") are written here, on a serial queue of
// their own, not on the event loop. Each one waits until its seq is durable,
// then encodes the state and writes its file with two fsyncs: 1-3 ms that
// the loop spent blocked, ten times a second under full load (-5..-10% of
// the pipelined request rate, p99 at 64 connections 1.4 -> 3.3 ms;
// docs/BENCHMARKS.md). The loop hands over a copy of the state as it was
// right after the covered event (a value: its storage is shared until the
// loop next changes it) and goes on.
//
// Snapshots only make startup faster: one that is overtaken by a newer one
// before it starts is skipped, and a failed one is reported and forgotten.
import Dispatch
import LocalAuthCore
import LocalAuthLog
import Synchronization

final class SnapshotWriter: Sendable {
    private let log: EventLog
    private let queue = DispatchQueue(label: "localauthd.snapshots")
    /// The newest seq handed over; an older job that has not started skips itself.
    private let newest = Atomic<UInt64>(0)

    init(log: EventLog) {
        self.log = log
    }

    /// Writes a snapshot of `state`, which covers every event up to `seq`.
    func write(_ state: AuthState, seq: UInt64) {
        newest.store(seq, ordering: .releasing)
        queue.async { [self] in
            guard newest.load(ordering: .acquiring) == seq else { return }
            Daemon.writeSnapshot(log, state, seq: seq)
        }
    }

    /// Waits for the snapshot being written, if any (before the log closes).
    func finish() {
        queue.sync {}
    }
}
