// The daemon's protocol logic and state, without I/O (issue #18 item 1):
// the epoll shell (EventLoop.swift) feeds it inputs (a turn's time,
// connections opened, bytes read, writes done, the timer, signals, the workers'
// and lookups' answers) and performs the actions it appends to `actions`
// (ServerAction.swift). It owns no file descriptor, no thread and reads no
// clock; its ports are the EventRecorder (inside the Authenticator), the
// PasscodeBackend and the SensorBackend.
import LocalAuthConfig
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

package final class ServerCore {
    var configuration: DaemonConfiguration
    /// Replaced only when the log is reopened after a write failure.
    package var authenticator: Authenticator
    /// Whether the log records, and when to try a failed one again (LogHealth.swift).
    package var logHealth = LogHealth()
    let passcodes: PasscodeBackend
    let daemonUID: UserID
    let version: String
    /// What the shell is to do, in order (ServerAction.swift); drained with `takeActions(into:)`.
    package var actions: [ServerAction] = []
    /// The current turn's time (`beginTurn`): the core's only clock (TurnClock.swift).
    var turn = TurnClock()
    /// Where context ids and domain-state tokens come from (a port: the
    /// kernel's getrandom in the daemon, a seeded source in a simulation).
    package var randomBytes: (Int) -> [UInt8] = { SecureRandom.bytes($0) }
    func randomHex(bytes count: Int) -> String { Hex.encode(randomBytes(count)) }
    /// The free bytes of the file system holding a directory (a port:
    /// statvfs in the daemon; nil = unknown, nothing is refused for space).
    package var freeSpace: (String) -> Int64? = { FreeSpace.available(at: $0) }

    /// A `let`: a class-typed `var` is retained around each call on it.
    package let connections = ConnectionTable<Connection>()
    /// Ids, per-uid counts, D-Bus callers, contexts' owners, epoll's
    /// interest in writability (ConnectionRoster.swift).
    var roster = ConnectionRoster()
    /// /etc/subuid's delegations as the shell last read them (S-53; the
    /// rights cap counts a user's subordinate uids' rights).
    var subordinateRanges = SubordinateRanges()
    /// S-40: every byte and journal entry held behind an undurable failure.
    package var replyGate = ReplyGate<JournalEntry>()
    /// Connections that queued output or began closing since the last `flushAll`.
    var needFlush = FlushList()
    var counters = Counters()
    /// Passcode jobs waiting, running, being stored (PasscodeJobs.swift).
    package var passcodeJobs = PasscodeJobs()
    /// S-48: per-uid budgets and the space reserve (LogBudget.swift, SpaceReserve.swift).
    var limits = LogLimits()
    /// Serving, stopping or stopped; SIGHUP, the watchdog and STATUS= (ServiceState.swift).
    package var service = ServiceState()
    /// The timer's deadlines that no machine holds (Deadlines.swift).
    var deadlines = CoreDeadlines()
    /// Set by the shell when systemd passed the socket: ExitOnIdleSec= applies (S-83).
    package var exitsWhenIdle = false
    /// The covered segments' check after READY runs (S-49, CoveredSegmentsCheck.swift): no exit on idle yet.
    package var coveredSegmentsPending = false
    /// The sensor as the core sees it: scans asked for, PROMPT lines held
    /// for a real reader, the reader's state (SensorPrompts.swift).
    var sensor = SensorPrompts()
    /// The journal's authentication trail (AuthenticationTrail.swift).
    var trail: AuthenticationTrail
    /// Set by `received` when the bytes it was given held (or may hold) a
    /// secret: the shell wipes its read buffer (S-50).
    var lastInputHeldSecret = false
    /// The line being handled, copied out of its connection's splitter
    /// (room for the longest line the protocol allows). One for the core:
    /// lines are handled one at a time, and handling one never takes input
    /// (`processLines` runs from `received`, `wrote` and the resume of
    /// parked requests, never from inside a handler).
    let lineBuffer = UnsafeMutableRawBufferPointer.allocate(
        byteCount: LineSplitter.defaultMaximumLineLength, alignment: 8)
    var writer = LineWriter(capacity: 4096)
    /// Set by a handler whose line carried a secret: `read` wipes the
    /// buffers that held it once the batch of lines is handled (S-50).
    var secretSeen = false
    /// Requests waiting for an AdminGroup lookup (S-51) or fprintd's finger
    /// list (S-43), and the read stamps (ParkedRequests.swift).
    var parked = ParkedRequests()
    /// Checks each request line in place (its span buffer is reused).
    var requestScanner = RequestScanner()
    /// The last successful can-evaluate reply, rendered.
    let checkedReplies = CheckedReplies()
    /// `watch`es (WatchVerbs.swift); empty unless someone watches.
    var watches = WatchTable()
    /// Session agents and their open requests (S-65..S-68, AgentVerbs.swift).
    var agents = AgentTable()
    /// LARight's rights: the store and its key (the daemon sets both before
    /// it serves), grants, the store's writes, key operations (SavedRights.swift).
    var rights = SavedRights()
    /// S-61..S-63: where clients and the reader are (Whereabouts.swift), and
    /// logind itself (nil: none to ask).
    var whereabouts = Whereabouts()
    var logindPort: LogindPort?
    /// The login secret (S-74..S-77, Keyring.swift): its store, offers,
    /// jobs and releases waiting for their record to be durable.
    var keyring = Keyring()

    package init(configuration: DaemonConfiguration, authenticator: Authenticator, passcodes: PasscodeBackend,
         version: String, daemonUID: UserID) {
        self.configuration = configuration
        self.authenticator = authenticator
        self.passcodes = passcodes
        self.version = version
        self.daemonUID = daemonUID
        trail = AuthenticationTrail(authenticator.state)
        whereabouts.settings = Whereabouts.Settings(configuration.biometry)
    }

    deinit { lineBuffer.deallocate() }

    /// The wall clock of this loop turn (TurnClock).
    package var now: Int64 { turn.now(floor: authenticator.state.clockHighWater) }

    // MARK: - Inputs: a turn, its end, signals (the timer: Deadlines.swift)

    /// A loop turn starts: every input until the next is at `time`.
    package func beginTurn(_ time: TurnTime) {
        turn.begin(time)
    }

    /// Shutdown is asked for (SIGTERM/SIGINT): the shell ends the turn, then calls `shutdown`.
    var isStopping: Bool { service.isStopping }
    /// Shutdown finished (`finishShutdown`): the shell exits.
    package var isStopped: Bool { service.isStopped }

    /// What the loop did after each turn's events, in order.
    package func endOfTurn() {
        if !parked.resumable.isEmpty { resumeParkedRequests() }
        parked.adminRights.servedWaiters()
        notifyWatchers()
        writeLog()
        noteUnsyncedAppends()
        judgeSpaceReserveIfMuchWasAppended()
        if logHealth.isRecording, let failure = authenticator.recorder.failure { failClosed(failure) }
        releaseDurableOutput()
        if !keyring.releases.isEmpty { sendDurableReleases() }
        flushAll()
        noteIdleness()
        if service.reloadIsDue() {
            actions.append(.notify("RELOADING=1\nMONOTONIC_USEC=\(turn.monotonic / 1000)"))
            actions.append(.readConfiguration)
        }
    }

    package func signal(_ signal: ServerSignal) {
        if let seconds = service.signal(signal) { actions.append(.hang(seconds: seconds)) }
    }

    /// The shell read the configuration files (`.readConfiguration`):
    /// the fresh configuration, or why it could not.
    func configurationRead(_ result: Result<DaemonConfiguration, any Error>) {
        switch result {
        case .success(let fresh):
            noteRestartOnlyPasscodeKeys(fresh)
            noteRestartOnlyLogReaders(fresh)
            configuration = fresh
            whereabouts.settings = Whereabouts.Settings(fresh.biometry)
            parked.adminRights.forget()
            run(.applyRules(fresh.rules), connection: nil, tag: nil, now: now)
            // A shorter prompt or idle line timeout may end sooner than the deadlines known.
            deadlines.promptExpiry = nil
            deadlines.connectionSweep = turn.monotonic
            keyringCheck()  // S-76: with the release now off, nothing sealed stays on disk
            journal(.notice, "Reloaded the configuration.")
        case .failure(let error):
            journal(.error, "Failed to reload the configuration, keeping the old one: \(error)")
        }
        // READY=1 ends the reload; STATUS= only when no failure waits for
        // its fsync (its lockout count and log seq reveal it, S-40, as in
        // `timerFired`, which sends it once durable; the simulator's seed 3).
        actions.append(.notify(outputIsHeld ? "READY=1" : "READY=1\nSTATUS=\(statusLine)"))
    }

    var statusLine: String {
        if let failure = authenticator.recorder.failure { return "Failing closed: the event log cannot record events (\(failure))" }
        return "Serving \(connections.count) connections, \(authenticator.state.contexts.count) contexts, "
            + "\(trail.lockedOut.count) users locked out, log seq \(authenticator.recorder.lastSeq)"
    }

}

/// What the daemon counts for `stats` and STATUS=.
struct Counters {
    var accepted = 0
    var refusedConnections = 0
    var linesTooLong = 0
    var badLines = 0
    var idleLineTimeouts = 0
    var pendingOverflows = 0
    var permissionDenied = 0
    var requests = 0
    /// Passcode checks run on a worker, attempts refused unchecked (S-46),
    /// and jobs refused because their user's queue was full (S-47).
    var passcodeChecks = 0
    var passcodeRefused = 0
    var passcodeBusy = 0
}
