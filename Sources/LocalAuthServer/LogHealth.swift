// Whether the log records, as the core sees it (S-41): a value with no I/O.
// The recorder reports a write or sync failure (`EventRecorder.failure`); the
// core then fails closed once (ServerFailure.swift) and this machine says
// when to try the log again: every `retryInterval`, one reopen at a time,
// asked of the shell as `.reopenLog` and answered by `logReopened`. It also
// keeps whether the failure reached the journal (once per failure).
package struct LogHealth {
    /// A failed log is reopened this often (monotonic ns).
    static let retryInterval: UInt64 = 5_000_000_000

    /// Why the log cannot record events (the daemon refuses to act), or nil.
    private(set) var failure: String?
    /// Whether the shell can reopen the log (the daemon and the simulator can; a test harness cannot).
    package var canReopen = false
    /// A `.reopenLog` is with the shell.
    private(set) var reopening = false
    private var lastReopenAttempt: UInt64 = 0
    /// Whether the recorder's failure was journaled.
    private var reportedFailure = false

    var isRecording: Bool { failure == nil }

    /// The log failed at `monotonic` (fail closed): the first reopen is a retry interval away.
    mutating func failed(_ why: String, at monotonic: UInt64) {
        failure = why
        lastReopenAttempt = monotonic
    }

    /// Whether to ask for a reopen now (the timer passed its deadline); if so it counts as asked.
    mutating func reopenIsDue(at monotonic: UInt64) -> Bool {
        guard failure != nil, canReopen, !reopening, monotonic - lastReopenAttempt >= Self.retryInterval else { return false }
        lastReopenAttempt = monotonic
        reopening = true
        return true
    }

    /// The shell's answer to `.reopenLog`.
    mutating func reopened(_ succeeded: Bool) {
        reopening = false
        if succeeded { failure = nil }
    }

    /// The recorder's failure, the first time it is seen (to journal it once).
    mutating func unreported(_ recorderFailure: String?) -> String? {
        guard !reportedFailure, let recorderFailure else { return nil }
        reportedFailure = true
        return recorderFailure
    }

    /// When this machine next has something to do: the next reopen.
    var nextDeadline: UInt64? {
        guard failure != nil, canReopen, !reopening else { return nil }
        return lastReopenAttempt + Self.retryInterval
    }
}
