// The daemon's life as its service manager sees it, a value with no I/O:
// serving, stopping (SIGTERM: the shell ends the turn and calls `shutdown`),
// stopped (S-32 done: the shell exits); a SIGHUP waiting for the turn's end;
// the WATCHDOG=1 pings (every half WATCHDOG_USEC) and the STATUS= line
// (at most once a second, only when it changed, never while output is held
// behind an undurable failure: its lockout count would reveal it, S-40).
// The core turns its answers into `.notify`, `.readConfiguration` and
// `.hang` actions.
package struct ServiceState {
    private(set) var isStopping = false
    private(set) var isStopped = false
    /// Whether the shell can read the configuration files again (SIGHUP).
    package var canReload = false
    /// WATCHDOG_USEC (µs), from the shell's environment; nil = no pings.
    var watchdogInterval: UInt64?
    /// Test hook: with LOCALAUTHD_TEST_HANG=N in the environment, SIGUSR2
    /// makes the event loop sleep N seconds (so WATCHDOG=1 pings stop).
    var testHangSeconds: UInt32?
    private var reloadRequested = false
    private var lastWatchdog: UInt64 = 0
    /// The STATUS= last sent, and when (monotonic ns).
    private var lastStatus = ""
    private var lastStatusAt: UInt64 = 0
    /// The facts of the last STATUS= judged (sent, or found unchanged).
    private var lastFacts: StatusFacts?

    /// A signal the shell handed on; for SIGUSR2, the hang to perform (the hook is on).
    mutating func signal(_ signal: ServerSignal) -> UInt32? {
        switch signal {
        case .stop: isStopping = true
        case .reload: reloadRequested = true
        case .testHang: return testHangSeconds
        }
        return nil
    }

    /// Idle for ExitOnIdleSec= (S-83): the stop of SIGTERM.
    mutating func stopForIdle() { isStopping = true }

    /// At the end of a turn: whether a SIGHUP asks for the files to be read now.
    mutating func reloadIsDue() -> Bool {
        guard reloadRequested else { return false }
        reloadRequested = false
        return canReload
    }

    /// At the timer: whether WATCHDOG=1 is due (it then counts as sent).
    mutating func watchdogIsDue(at monotonic: UInt64) -> Bool {
        guard let interval = watchdogInterval, monotonic - lastWatchdog > interval * 1000 / 2 else { return false }
        lastWatchdog = monotonic
        return true
    }

    /// The STATUS= to send now, if any (`held` is asked, and
    /// `line` made, only when one may be).
    mutating func status(at monotonic: UInt64, held: () -> Bool, _ line: () -> String) -> String? {
        guard monotonic - lastStatusAt >= 1_000_000_000, !held() else { return nil }
        let status = line()
        guard status != lastStatus else { return nil }
        lastStatus = status
        lastStatusAt = monotonic
        return status
    }

    /// At the timer: the STATUS= to send now, if its facts changed since
    /// the last one judged (the line is made only then).
    mutating func status(at monotonic: UInt64, facts: StatusFacts, held: @autoclosure () -> Bool, _ line: () -> String) -> String? {
        guard facts != lastFacts, monotonic - lastStatusAt >= 1_000_000_000, !held() else { return nil }
        lastFacts = facts
        return status(at: monotonic, held: { false }, line)
    }

    /// When STATUS= is next due: a second after the last one, once its
    /// facts changed; nil while they did not (or while output is held: its
    /// release ends a turn, which asks again).
    func statusDeadline(_ facts: StatusFacts, held: @autoclosure () -> Bool) -> UInt64? {
        guard facts != lastFacts, !held() else { return nil }
        return lastStatusAt + 1_000_000_000
    }

    /// S-32's second half ran: the shell exits.
    mutating func stopped() { isStopped = true }

    /// When this machine next has something to do: the next ping (STATUS=
    /// has its own, `statusDeadline`; a reload runs at the turn's end).
    var nextDeadline: UInt64? { watchdogInterval.map { lastWatchdog + $0 * 1000 / 2 + 1 } }
}

/// What STATUS= says, as numbers: the line is made only when they changed.
struct StatusFacts: Equatable {
    var connections: Int
    var contexts: Int
    var lockedOut: Int
    var seq: UInt64
    var failing: Bool
}
