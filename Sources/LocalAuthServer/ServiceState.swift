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

    /// A signal the shell handed on; for SIGUSR2, the hang to perform (the hook is on).
    mutating func signal(_ signal: ServerSignal) -> UInt32? {
        switch signal {
        case .stop: isStopping = true
        case .reload: reloadRequested = true
        case .testHang: return testHangSeconds
        }
        return nil
    }

    /// At the end of a turn: whether a SIGHUP asks for the files to be read now.
    mutating func reloadIsDue() -> Bool {
        guard reloadRequested else { return false }
        reloadRequested = false
        return canReload
    }

    /// At a tick: whether WATCHDOG=1 is due (it then counts as sent).
    mutating func watchdogIsDue(at monotonic: UInt64) -> Bool {
        guard let interval = watchdogInterval, monotonic - lastWatchdog > interval * 1000 / 2 else { return false }
        lastWatchdog = monotonic
        return true
    }

    /// At a tick: the STATUS= to send now, if any (`held` is asked, and
    /// `line` made, only when one may be).
    mutating func status(at monotonic: UInt64, held: () -> Bool, _ line: () -> String) -> String? {
        guard monotonic - lastStatusAt >= 1_000_000_000, !held() else { return nil }
        let status = line()
        guard status != lastStatus else { return nil }
        lastStatus = status
        lastStatusAt = monotonic
        return status
    }

    /// S-32's second half ran: the shell exits.
    mutating func stopped() { isStopped = true }

    /// When this machine next has something to do: the next ping (a STATUS=
    /// change rides on the tick that follows it; a reload on the turn's end).
    var nextDeadline: UInt64? { watchdogInterval.map { lastWatchdog + $0 * 1000 / 2 + 1 } }
}
