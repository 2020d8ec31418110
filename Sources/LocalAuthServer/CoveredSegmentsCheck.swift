// After READY (S-49 as amended by issue 34 item 3): the records of the
// sealed segments that the start's snapshot wholly covers are hashed on a
// thread of their own, at the lowest CPU and I/O priority, once; the thread
// ends with the check. The state the daemon serves from does not depend on
// them (the snapshot, its vouching event and every record after it were
// checked before READY); the audit trail does. So a broken one stops the
// daemon as a broken log at start does (S-41): journaled, the clean stop of
// SIGTERM (S-32: running evaluations answered `systemCancel`, `* BYE`,
// `daemon-stopped`, the log synced, the head anchored), then the exit with
// status 1 and the start's message naming `localauthctl verify` and
// `localauthctl repair`. The next start checks again; the exit on idle waits
// for the check (S-83), so no idle daemon leaves it undone.
import Glibc
import LocalAuthLog
import LocalAuthSystem
import Synchronization

final class CoveredSegmentsCheck: Sendable {
    private struct State {
        var finished = false
        /// Once finished: nil (the segments hold, or it was stopped) or the refusal.
        var failure: LogError?
        var stopping = false
    }

    private let state = Mutex(State())
    let segments: Int

    private init(segments: Int) { self.segments = segments }

    /// Starts the check of `segments` of `log`; `done` is called on its
    /// thread when it finished (wake the loop there). Nil when there is
    /// nothing to check, or no thread could be started (then it ran here).
    static func start(_ log: EventLog, _ segments: [DeferredSegment], done: @escaping @Sendable () -> Void)
        -> CoveredSegmentsCheck? {
        guard !segments.isEmpty else { return nil }
        let check = CoveredSegmentsCheck(segments: segments.count)
        let work: @Sendable () -> Void = {
            Processors.lowerThisThreadsPriority()
            let failure = log.checkDeferred(segments, stop: { check.state.withLock { $0.stopping } })
            check.state.withLock {
                $0.failure = failure
                $0.finished = true
            }
            done()
        }
        let box = Unmanaged.passRetained(Work(work)).toOpaque()
        var handle = pthread_t()
        let started = pthread_create(&handle, nil, { argument in
            let work = Unmanaged<Work>.fromOpaque(argument!).takeRetainedValue()
            work.run()
            return nil
        }, box)
        if started == 0 {
            // Never joined (see `stop`): its resources go when it ends.
            pthread_detach(handle)
        } else {
            // No thread: the check runs before serving, as a start without this change did.
            Unmanaged<Work>.fromOpaque(box).release()
            work()
        }
        return check
    }

    /// Whether the check ended, and what it found (nil: the segments hold).
    var outcome: (finished: Bool, failure: LogError?) { state.withLock { ($0.finished, $0.failure) } }

    /// Asks the thread to stop after its current segment, without waiting:
    /// at SCHED_IDLE on a busy machine it may not run for a while, and the
    /// stop is bounded (S-32). The process's exit ends it; it only reads.
    func stop() {
        state.withLock { $0.stopping = true }
    }

    private final class Work: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}

extension EventLoop {
    /// The durability wake also tells of the covered segments' check.
    func coveredCheckMayHaveFinished() {
        guard let check = coveredCheck else { return }
        let outcome = check.outcome
        guard outcome.finished else { return }
        coveredCheck = nil
        core.coveredSegmentsChecked(count: check.segments, failure: outcome.failure)
    }
}

extension ServerCore {
    /// The shell's answer to the check it started after READY: a failure
    /// stops the daemon as SIGTERM does, then the shell exits with it.
    package func coveredSegmentsChecked(count: Int, failure: LogError?) {
        coveredSegmentsPending = false
        guard let failure else {
            return journal(.info, "Checked the \(count) sealed segments that the start's snapshot covers: they hold.")
        }
        journal(.error, "The event log cannot be trusted: \(failure)", id: .corruptionFound)
        signal(.stop)
    }
}
