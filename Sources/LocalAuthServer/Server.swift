// The single-threaded epoll loop. Everything that touches state runs here:
// accepting, reading and parsing lines, running commands through the
// Authenticator, timers, signals. Slow work (yescrypt) and fsync run on other
// threads and come back through eventfds.
import Glibc
import LocalAuthConfig
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

final class Server {
    enum Token: UInt64 {
        case listener = 1, signals, ticker, passcodes, durability
        /// Backend=fprintd: the D-Bus socket, and passwd answers (S-43).
        case sensorBus, sensorNames
        /// Snapshots written off the loop, to record (S-49).
        case snapshots
        /// AdminGroup lookups answered off the loop (S-51).
        case adminLookups
        static let firstConnection: UInt64 = 16
    }

    var configuration: DaemonConfiguration
    /// Replaced only when the log is reopened after a write failure.
    var authenticator: Authenticator
    /// Why the log cannot record events (the daemon refuses to act), or nil.
    var logFailure: String?
    var lastReopenAttempt: UInt64 = 0
    /// Reopens the log after a write failure; nil = cannot.
    var reopenLog: (() throws -> Authenticator)?
    let epoll: Epoll
    let listener: FileDescriptor
    let signals: SignalFD
    let ticker: TimerFD
    let workers: PasscodeWorkers
    let durabilityWake: EventFD
    let passcodes: PasscodeBackend
    let daemonUID: UserID
    let version: String

    var connections: [Connection.ID: Connection] = [:]
    var connectionsPerUser: [UserID: Int] = [:]
    var contextOwners: [ContextID: Connection] = [:]
    var nextConnectionID: Connection.ID = Token.firstConnection
    /// S-40: every byte and journal entry held behind an undurable failure.
    var replyGate = ReplyGate<() -> Void>()
    /// Connections that queued output or began closing since the last `flushAll`.
    var needFlush = FlushList()
    /// Connections whose fd epoll watches for writability (output that did
    /// not fit in the socket).
    var watchingWritable: Set<Connection.ID> = []
    var counters = Counters()
    /// Passcode jobs waiting for a worker (S-46, S-47), and those running.
    var passcodeQueue: PasscodeQueue<PasscodeJob>
    var running: [UInt64: PendingCheck] = [:]
    /// Running jobs whose results are to be ignored (the log failed meanwhile).
    var abandonedChecks: Set<UInt64> = []
    /// S-48: per-uid budgets and the space reserve (LogBudget.swift, SpaceReserve.swift).
    var limits = LogLimits()
    var nextCheckToken: UInt64 = 1
    /// S-7: fingerprint of each user's last wrong passcode, in memory only.
    var wrongPasscodes = WrongPasscodeMemory()
    var stopping = false
    /// Set once in init (FprintdSensor needs the server).
    private(set) var sensorBackend: SensorBackend = SimulatedSensor()
    /// `sensorBackend.isSimulated`, kept as a stored flag: the hot
    /// can-evaluate path reads it without a call through the protocol.
    private(set) var sensorIsSimulated = true
    /// Users whose biometric prompt the sensor backend is scanning for.
    var scanning: Set<UserID> = []
    var reloadRequested = false
    var lastWatchdog: UInt64 = 0
    let watchdogInterval: UInt64?
    /// Users locked out (biometry or admin lock), for STATUS= and the
    /// lockout-lifted journal entry.
    var lockedOut: Set<UserID> = []
    /// The PAM service, tty and remote host of open on-behalf contexts (S-42),
    /// for the journal entry at each evaluation's end (Replies.swift).
    var onBehalfOrigins: [ContextID: ContextOrigin] = [:]
    /// The STATUS= last sent, and when (monotonic ns).
    var lastStatus = ""
    var lastStatusAt: UInt64 = 0
    /// Whether the log's write failure (fail closed) was journaled.
    var reportedLogFailure = false
    /// Test hook: with LOCALAUTHD_TEST_HANG=N in the environment, SIGUSR2
    /// makes the event loop sleep N seconds (so WATCHDOG=1 pings stop).
    let testHangSeconds = DaemonLog.testHangSeconds()
    var readBuffer = [UInt8](repeating: 0, count: 65536)
    /// The line being handled, copied out of its connection's splitter
    /// (room for the longest line the protocol allows). One for the server:
    /// lines are handled one at a time, and handling one never reads input
    /// (only `read`, from the loop, calls `processLines`).
    let lineBuffer = UnsafeMutableRawBufferPointer.allocate(
        byteCount: LineSplitter.defaultMaximumLineLength, alignment: 8)
    var writer = LineWriter(capacity: 4096)
    /// Set by a handler whose line carried a secret: `read` wipes the
    /// buffers that held it once the batch of lines is handled (S-50).
    var secretSeen = false
    /// Administrator rights, judged per request (S-51).
    var adminRights = AdminRights<ParkedRequest>()
    let adminLookups: LookupThread<GroupQuery, Bool>
    /// Checks each request line in place (its span buffer is reused).
    var requestScanner = RequestScanner()
    /// The last successful can-evaluate reply, rendered.
    let checkedReplies = CheckedReplies()
    /// Reloads the configuration files (SIGHUP); nil = nothing to reload.
    var reload: (() throws -> DaemonConfiguration)?
    /// `watch`es (WatchVerbs.swift); empty unless someone watches.
    var watches = WatchTable()
    /// Snapshots written off the loop, to record (ServerSnapshots.swift).
    var snapshotInbox: SnapshotInbox?
    /// LARight's rights and the key of their secrets (RightVerbs.swift);
    /// the daemon sets both before it serves.
    var rights = RightStore(path: "/dev/null")
    var secretKey: [UInt8] = []
    /// Rights granted on a context (identifier -> the right's generation),
    /// and right-authorizes whose evaluation runs.
    var rightGrants: [ContextID: [String: UInt64]] = [:]
    var pendingRights: [ContextID: PendingRightAuthorization] = [:]
    /// S-43 under a real sensor: checks waiting for their user's fingers
    /// (EnrollmentParking.swift), those let go (answered at the end of the
    /// loop's turn), and the read stamps freshness is judged by.
    var enrollmentRefresh = EnrollmentRefresh<ParkedRequest>()
    var resumable: [ParkedRequest] = []
    var readStamp: UInt64 = 0
    var lineStamp: UInt64 = 0

    init(configuration: DaemonConfiguration, authenticator: Authenticator, listener: FileDescriptor,
         signals: SignalFD, durabilityWake: EventFD, passcodes: PasscodeBackend, version: String) throws {
        self.configuration = configuration
        self.authenticator = authenticator
        self.listener = listener
        self.signals = signals
        self.durabilityWake = durabilityWake
        self.passcodes = passcodes
        self.version = version
        daemonUID = Accounts.currentUID()
        epoll = try Epoll(capacity: 512)
        ticker = try TimerFD()
        workers = try PasscodeWorkers(count: 2)
        adminLookups = try Server.makeAdminLookups()
        passcodeQueue = PasscodeQueue(workers: workers.count, perUserLimit: Server.passcodeJobsPerUser)
        watchdogInterval = Systemd.watchdogInterval()
        lockedOut = Set(authenticator.state.users.compactMap { $0.value.biometryLockedOut || $0.value.adminLocked ? $0.key : nil })
        try epoll.add(listener, events: .readable, data: Token.listener.rawValue)
        try epoll.add(signals.fileDescriptor, events: .readable, data: Token.signals.rawValue)
        try epoll.add(ticker.fileDescriptor, events: .readable, data: Token.ticker.rawValue)
        try epoll.add(workers.wake.fileDescriptor, events: .readable, data: Token.passcodes.rawValue)
        try epoll.add(durabilityWake.fileDescriptor, events: .readable, data: Token.durability.rawValue)
        try epoll.add(adminLookups.wake.fileDescriptor, events: .readable, data: Token.adminLookups.rawValue)
        // A coarse tick drives prompt timeouts, half-line timeouts and the watchdog.
        try ticker.arm(afterNanoseconds: 100_000_000, intervalNanoseconds: 100_000_000)
        if configuration.biometry.backend == .fprintd {
            let fprintd = try FprintdSensor(address: configuration.biometry.fprintdBus, server: self)
            sensorBackend = fprintd
            sensorIsSimulated = false
            try epoll.add(fprintd.names.wake.fileDescriptor, events: .readable, data: Token.sensorNames.rawValue)
            authenticator.setSensorProblem(fprintd.problem)
            fprintd.connectIfNeeded()
        }
    }

    deinit { lineBuffer.deallocate() }

    /// S-47: passcode jobs one user may have waiting (besides the one running).
    static let passcodeJobsPerUser = 4

    /// The wall clock, read at most once per loop turn: the events of one
    /// turn share a time (a turn is bounded by the read budget, far below
    /// the seconds that S-5..S-11 and the prompt timeout measure).
    var now: Int64 {
        if let cached = turnClock { return cached }
        let current = clock.read(wall: WallClock.nowMicros(), boot: BootClock.nowMicros())
        turnClock = current
        return current
    }
    /// `now` of this loop turn, once read.
    var turnClock: Int64?
    /// Never backwards; after the wall clock is set back it advances with
    /// CLOCK_BOOTTIME (DaemonClock).
    lazy var clock = DaemonClock(floor: authenticator.state.clockHighWater)

    /// Runs until SIGTERM/SIGINT, then shuts down cleanly (S-32).
    func run() throws {
        while !stopping {
            let ready = try epoll.wait(timeoutMilliseconds: 1000)
            turnClock = nil
            // The bus first: a verdict fprintd sent before a cancel that
            // arrives in the same turn is counted (FprintdVerify.swift).
            for event in ready where event.data == Token.sensorBus.rawValue { sensorBackend.busReady() }
            for event in ready {
                switch event.data {
                case Token.sensorBus.rawValue: break
                case Token.sensorNames.rawValue: (sensorBackend as? FprintdSensor)?.names.deliver()
                case Token.listener.rawValue: acceptAll()
                case Token.signals.rawValue: handleSignals()
                case Token.ticker.rawValue: tick()
                case Token.passcodes.rawValue: completePasscodeChecks()
                case Token.durability.rawValue: _ = try? durabilityWake.drain()
                case Token.snapshots.rawValue: recordWrittenSnapshots()
                case Token.adminLookups.rawValue: collectAdminLookups()
                default: connectionEvent(event.data, event.events)
                }
            }
            if !resumable.isEmpty { resumeParkedRequests() }
            adminRights.servedWaiters()
            notifyWatchers()
            writeLog()
            judgeSpaceReserveIfMuchWasAppended()
            if logFailure == nil, let failure = authenticator.recorder.failure { failClosed(failure) }
            releaseDurableOutput()
            flushAll()
            sensorBackend.endOfTurn()
            if reloadRequested { reloadConfiguration() }
        }
        shutdown()
    }

    // MARK: - Signals and timers

    func handleSignals() {
        while let signal = try? signals.nextSignal() {
            switch signal {
            case SIGTERM, SIGINT:
                stopping = true
            case SIGHUP:
                reloadRequested = true
            case SIGUSR2:
                if let seconds = testHangSeconds { DaemonLog.hangForTest(seconds) }
            default:
                break
            }
        }
    }

    func tick() {
        _ = try? ticker.readExpirations()
        let current = now
        // Events nobody waits for are made durable at least every tick (S-40 allows batches).
        if logFailure == nil { authenticator.recorder.flush(durableThrough: authenticator.recorder.lastSeq) }
        if logFailure != nil { retryLog() }
        sensorBackend.tick()
        expireAdminLookups()
        if !sensorIsSimulated { expireEnrollmentQueries() }
        judgeSpaceReserve()
        pruneIdleAllowances()
        releaseMemoryAfterClosedContexts()
        if let deadline = authenticator.state.nextPromptDeadline, deadline <= authenticator.state.effectiveNow(current) {
            run(.expirePrompts, connection: nil, tag: nil, now: current)
        }
        noticeLoginPasswordChanges()
        let monotonic = MonotonicClock.nowNanos()
        let idleLimit = UInt64(configuration.daemon.idleLineTimeout) * 1000
        for connection in connections.values {
            // A paused connection's half line waits for the daemon, not for its peer.
            if let since = connection.partialLineSince, connection.isOpen, !connection.readingPaused,
               monotonic > since, monotonic - since > idleLimit {
                counters.idleLineTimeouts += 1
                refuse(connection, ProtocolError(.limitExceeded, "Line not finished within the idle line timeout."), bye: "limit")
            }
        }
        // A closing connection whose peer does not read gets a few seconds.
        for connection in connections.values {
            if case .closing(let since) = connection.state, monotonic > since, monotonic - since > 5_000_000_000 {
                close(connection)
            }
        }
        if let interval = watchdogInterval, monotonic - lastWatchdog > interval * 1000 / 2 {
            lastWatchdog = monotonic
            _ = try? Systemd.notify("WATCHDOG=1")
        }
        if !reportedLogFailure, let failure = authenticator.recorder.failure {
            reportedLogFailure = true
            DaemonLog.error("The event log cannot record events (\(failure)); refusing every request that needs it.")
        }
        // STATUS= at most once a second, and only when it changed; never
        // while a failure is not yet durable (its lockout count reveals it, S-40).
        if monotonic - lastStatusAt >= 1_000_000_000, !outputIsHeld {
            let status = statusLine
            if status != lastStatus {
                lastStatus = status
                lastStatusAt = monotonic
                _ = try? Systemd.notify("STATUS=\(status)")
            }
        }
    }

    func reloadConfiguration() {
        reloadRequested = false
        guard let reload else { return }
        _ = try? Systemd.notify("RELOADING=1\nMONOTONIC_USEC=\(MonotonicClock.nowNanos() / 1000)")
        do {
            let fresh = try reload()
            noteRestartOnlyPasscodeKeys(fresh)
            noteRestartOnlyLogReaders(fresh)
            configuration = fresh
            adminRights.forget()
            run(.applyRules(fresh.rules), connection: nil, tag: nil, now: now)
            DaemonLog.notice("Reloaded the configuration.")
            DaemonLog.warnAboutConfiguration(fresh)
        } catch {
            DaemonLog.error("Failed to reload the configuration, keeping the old one: \(error)")
        }
        _ = try? Systemd.notify("READY=1\nSTATUS=\(statusLine)")
    }

    var statusLine: String {
        if let failure = authenticator.recorder.failure { return "Failing closed: the event log cannot record events (\(failure))" }
        return "Serving \(connections.count) connections, \(authenticator.state.contexts.count) contexts, "
            + "\(lockedOut.count) users locked out, log seq \(authenticator.recorder.lastSeq)"
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
