// When the core next has something to do on its own (issue 34 item 1,
// S-82): the shell arms one timer for `nextDeadline()` and calls
// `timerFired()` when it expires; with nothing due it sleeps in epoll until
// input comes. Each duty of the former 100 ms tick has its deadline here, or
// in the machine that owns it (LogHealth, ParkedRequests' lookups, the
// service's watchdog and STATUS=); what no machine
// holds is kept in `CoreDeadlines`, as lower bounds made exact when the timer
// passes over them, so that no turn pays more than a few comparisons.
// Deadlines are monotonic nanoseconds; the prompt timeout, judged on the
// daemon's clock (S-8, S-31), is converted at the turn it is computed.
import LocalAuthCore
import LocalAuthProtocol

/// The core's own deadlines (monotonic ns) that no machine holds.
struct CoreDeadlines {
    /// Successes are made durable in batches (S-40): at most this long after
    /// the first append that nobody waits for.
    static let syncBatch: UInt64 = 100_000_000
    /// A connection closing whose peer does not read is closed after this.
    static let closingGrace: UInt64 = 5_000_000_000
    /// Buckets of users with no connection are looked at no more often.
    static let allowancePruneEvery: UInt64 = 1_000_000_000
    /// After a wave of closes, memory is released once this long passed with no more.
    static let memoryWaveEnd: UInt64 = 100_000_000

    /// When the first append not yet asked to be durable was written, and
    /// the seq through which a batch was last asked for.
    var unsyncedSince: UInt64?
    var syncAskedThrough: UInt64 = 0
    /// No half line and no closing grace ends before this (nil: none runs).
    var connectionSweep: UInt64?
    /// When the earliest waiting prompt times out (nil: not computed yet).
    var promptExpiry: UInt64?
    /// When the buckets of users who left are looked at again.
    var allowancePrune: UInt64?
    /// When the watches of other uids are judged again (S-56; nil: none runs).
    var watchRejudge: UInt64?
    /// When the timer last passed (the memory release waits for a quiet one).
    var lastPass: UInt64 = 0
    /// Since when the daemon has had nothing to do (S-83, IdleExit.swift).
    var idleSince: UInt64?

    /// A half line started, or a connection began closing: its end is a deadline.
    mutating func connectionDeadline(_ at: UInt64) {
        if let sweep = connectionSweep, sweep <= at { return }
        connectionSweep = at
    }
}

extension ServerCore {
    /// The earliest monotonic time at which `timerFired` has something to
    /// do, or nil: nothing is due until input comes. Called once per turn.
    package func nextDeadline() -> UInt64? {
        var earliest = service.nextDeadline
        func consider(_ deadline: UInt64?) {
            if let deadline, earliest.map({ deadline < $0 }) ?? true { earliest = deadline }
        }
        if logHealth.isRecording {
            consider(deadlines.unsyncedSince.map { $0 + CoreDeadlines.syncBatch })
            consider(promptExpiry())
            // The login secret's start (S-76): at the first timer.
            if keyringStartIsDue { consider(0) }
        } else {
            consider(logHealth.nextDeadline)
        }
        consider(deadlines.connectionSweep)
        consider(parked.nextDeadline)
        consider(deadlines.allowancePrune)
        consider(watchRejudgeDeadline())
        if limits.contextsEnded >= ServerCore.contextsWorthARelease {
            consider(deadlines.lastPass + CoreDeadlines.memoryWaveEnd)
        }
        consider(service.statusDeadline(statusFacts, held: outputIsHeld))
        consider(idleExitDeadline)
        return earliest
    }

    /// The shell's timer expired: whatever is due now is done (the former
    /// tick's duties, each at its own deadline).
    package func timerFired() {
        let current = now
        if logHealth.isRecording, let since = deadlines.unsyncedSince, turn.monotonic >= since + CoreDeadlines.syncBatch {
            syncBatch()
        }
        // A failed log is tried again now and then (ServerFailure.swift); the
        // other duties then run against the reopened log, once it answered.
        if logHealth.reopenIsDue(at: turn.monotonic) { return actions.append(.reopenLog) }
        timerDuties(current)
    }

    /// The successes appended so far are asked to be durable (S-40's batch).
    func syncBatch() {
        let last = authenticator.recorder.lastSeq
        authenticator.recorder.flush(durableThrough: last)
        deadlines.syncAskedThrough = last
        deadlines.unsyncedSince = nil
    }

    /// End of a turn, once its events are on the log's file: the first
    /// append nobody waits for starts the batch's 100 ms.
    func noteUnsyncedAppends() {
        guard deadlines.unsyncedSince == nil, logHealth.isRecording else { return }
        let recorder = authenticator.recorder
        let last = recorder.lastSeq
        if last > deadlines.syncAskedThrough, last > recorder.durableSeq { deadlines.unsyncedSince = turn.monotonic }
    }

    /// The duties whose deadline passed, judged at the turn's time.
    func timerDuties(_ current: Int64) {
        let monotonic = turn.monotonic
        expireAdminLookups()
        expireAccountLookups()
        expireSessionLookups()
        if !sensor.isSimulated { expireEnrollmentQueries() }
        if let at = deadlines.allowancePrune, monotonic >= at { pruneIdleAllowances() }
        releaseMemoryAfterClosedContexts()
        if keyringStartIsDue { keyringCheck() }
        if let at = deadlines.watchRejudge, monotonic >= at {
            deadlines.watchRejudge = nil
            rejudgeWatches()
        }
        if let at = deadlines.promptExpiry, monotonic >= at {
            deadlines.promptExpiry = nil
            if let deadline = authenticator.state.nextPromptDeadline, deadline <= authenticator.state.effectiveNow(current) {
                run(.expirePrompts, connection: nil, tag: nil, now: current)
            }
        }
        if let at = deadlines.connectionSweep, monotonic >= at { sweepConnections(monotonic) }
        if service.watchdogIsDue(at: monotonic) { actions.append(.notify("WATCHDOG=1")) }
        if let status = service.status(at: monotonic, facts: statusFacts, held: outputIsHeld, { statusLine }) {
            actions.append(.notify("STATUS=\(status)"))
        }
        deadlines.lastPass = monotonic
    }

    /// The idle line timeouts and closing graces that ended; the next one
    /// becomes the sweep's deadline (one pass over the connections).
    func sweepConnections(_ monotonic: UInt64) {
        let idleLimit = idleLineLimit
        var next: UInt64?
        func keep(_ at: UInt64) { if next.map({ at < $0 }) ?? true { next = at } }
        for id in connections.keys {
            guard let connection = connections[id] else { continue }
            // A paused connection's half line waits for the daemon, not for
            // its peer (its resume starts the timeout again).
            if let since = connection.partialLineSince, connection.isReading {
                if monotonic > since, monotonic - since > idleLimit {
                    counters.idleLineTimeouts += 1
                    refuse(id, ProtocolError(.limitExceeded, "Line not finished within the idle line timeout."), bye: "limit")
                } else {
                    keep(since + idleLimit + 1)
                }
            }
            // A closing connection whose peer does not read gets a few seconds.
            if case .closing(let since) = connections[id]?.state {
                if monotonic > since, monotonic - since > CoreDeadlines.closingGrace {
                    close(id)
                } else {
                    keep(since + CoreDeadlines.closingGrace + 1)
                }
            }
        }
        deadlines.connectionSweep = next
    }

    /// When the earliest waiting prompt times out (S-31), on the monotonic
    /// clock; computed when the first prompt waits (a later prompt times
    /// out later), again once the timer passed it or the rules changed.
    func promptExpiry() -> UInt64? {
        let state = authenticator.state
        guard !state.prompting.isEmpty else {
            deadlines.promptExpiry = nil
            return nil
        }
        if let known = deadlines.promptExpiry { return known }
        guard let deadline = state.nextPromptDeadline else { return nil }
        let left = max(0, deadline - state.effectiveNow(now))
        let at = turn.monotonic + UInt64(left) * 1000
        deadlines.promptExpiry = at
        return at
    }

    /// IdleLineTimeoutSec= in nanoseconds.
    var idleLineLimit: UInt64 { UInt64(configuration.daemon.idleLineTimeout) * 1000 }

    /// What STATUS= shows, as numbers: it is made (a string) only when they changed.
    var statusFacts: StatusFacts {
        StatusFacts(connections: connections.count, contexts: authenticator.state.contexts.count,
                    lockedOut: trail.lockedOut.count, seq: authenticator.recorder.lastSeq,
                    failing: authenticator.recorder.failure != nil)
    }
}
