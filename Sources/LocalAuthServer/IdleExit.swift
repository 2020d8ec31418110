// Exit when idle (issue 34 item 2, S-83): a daemon that systemd started
// through its socket, with nothing to do for `[Daemon] ExitOnIdleSec=`,
// stops as on SIGTERM (S-32: STOPPING=1, `daemon-stopped`, the log synced,
// the head anchored in the journal) and exits with status 0; the socket's
// next client, or the bus's next call, starts it again. Nothing is lost:
// the state is the log's (S-38), a delay or a lockout is judged on the
// recorded times (S-8), and with no connection there is no context (S-15).
// "Nothing to do" is the core's half (below) and the shell's (the buses'
// calls, a client waiting in the listener's backlog, EventLoop.swift).
import LocalAuthCore

extension ServerCore {
    /// Whether nothing waits for the daemon: no connection (hence no
    /// context, watch, agent or parked request), no prompt, no job on a
    /// worker, no write of the right or login-secret store, nothing held behind a sync,
    /// the log healthy and durable through its last record, and the start's
    /// check of the covered segments done (S-49: else the next start redoes it).
    var hasNothingToDo: Bool {
        let recorder = authenticator.recorder
        return connections.count == 0 && roster.perUser.isEmpty
            && authenticator.state.contexts.isEmpty && authenticator.state.prompting.isEmpty
            && passcodeJobs.waitingCount == 0 && passcodeJobs.runningCount == 0 && !passcodeJobs.isCommitting
            && rights.isIdle && keyring.isIdle
            && parked.nextDeadline == nil && replyGate.isEmpty
            && logHealth.isRecording && recorder.failure == nil && recorder.durableSeq >= recorder.lastSeq
            && !coveredSegmentsPending
    }

    /// ExitOnIdleSec= in nanoseconds, or nil: this daemon does not exit
    /// when idle (not socket-activated, or the key is 0).
    var idleExitAfter: UInt64? {
        guard exitsWhenIdle, configuration.daemon.exitOnIdle > 0 else { return nil }
        return UInt64(configuration.daemon.exitOnIdle) * 1000
    }

    /// End of a turn (and the start): since when the daemon has had nothing to do.
    package func noteIdleness() {
        guard idleExitAfter != nil, hasNothingToDo else { return deadlines.idleSince = nil }
        if deadlines.idleSince == nil { deadlines.idleSince = turn.monotonic }
    }

    /// When the daemon exits if it stays idle (a deadline of the timer).
    var idleExitDeadline: UInt64? {
        guard let after = idleExitAfter, let since = deadlines.idleSince else { return nil }
        return since + after
    }

    /// At the timer: idle for ExitOnIdleSec= and still nothing to do (the
    /// shell then looks at its own half before `exitForIdle`).
    package var idleExitIsDue: Bool {
        guard let deadline = idleExitDeadline, turn.monotonic >= deadline else { return false }
        return hasNothingToDo
    }

    /// The daemon stops as on SIGTERM; the shell's loop ends with this turn.
    package func exitForIdle() {
        let seconds = configuration.daemon.exitOnIdle / 1_000_000
        journal(.notice, "Nothing to do for \(seconds) s (ExitOnIdleSec=): exiting; the socket starts the daemon again.")
        service.stopForIdle()
    }
}
