// The snapshot writer's queue (SnapshotWriter.swift) as the simulator runs
// it: jobs wait until the run lets the snapshot thread take one, which then
// writes on the simulated storage (a fault armed may strike it) and hands
// the digest to the loop. A crash drops what waits, as it drops the thread.
import LocalAuthServer

final class SteppedSnapshotQueue: SnapshotQueue, @unchecked Sendable {
    private var jobs: [@Sendable () -> Void] = []

    func async(_ job: @escaping @Sendable () -> Void) { jobs.append(job) }

    /// Daemon.finishStop's wait: every job runs.
    func finish() {
        while runNext() {}
    }

    /// The snapshot thread takes the oldest job; false when none waits.
    @discardableResult
    func runNext() -> Bool {
        guard !jobs.isEmpty else { return false }
        jobs.removeFirst()()
        return true
    }

    var isEmpty: Bool { jobs.isEmpty }
}
