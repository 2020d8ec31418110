// The epoll shell around ServerCore (issue #18 item 1): the only owner of the
// daemon's file descriptors and threads. It waits in epoll, reads the clocks
// once a turn, accepts, reads and writes sockets, drains the signalfd, the
// timer, the passcode workers, the AdminGroup lookup thread, the snapshot
// inbox and fprintd's bus, and hands all of it to the core as inputs; then it
// performs the core's actions (EventLoopActions.swift). It makes no protocol
// decision of its own. After each turn it arms its one timer for the
// earliest deadline the core and the buses report (S-82): with none, it
// sleeps in epoll until a client, a signal or a worker wakes it.
import Glibc
import LocalAuthConfig
import LocalAuthCore
import LocalAuthSystem

final class EventLoop {
    /// epoll data of the shell's own fds; connections are 64 and up (their
    /// Connection.ID, ServerCore.nextConnectionID): a token must stay below.
    enum Token: UInt64, CaseIterable {
        case listener = 1, signals, timer, passcodes, durability
        /// Backend=fprintd: the D-Bus socket, and passwd answers (S-43).
        case sensorBus, sensorNames
        /// Snapshots written off the loop, to record (S-49).
        case snapshots
        /// AdminGroup lookups answered off the loop (S-51).
        case adminLookups
        /// The rights' key operations (S-81).
        case keys
        /// logind's D-Bus socket (S-61..S-63, S-65).
        case logindBus
        /// The right store written off the loop (issue 27 item 7).
        case rightsWriter
        /// The D-Bus API's bus socket, and its Flatpak app id reads (S-70, S-73).
        case serviceBus, serviceApps
        /// Backend=shadow: the shadow file changed and was read (S-44).
        case shadowScans
        /// The login secret's store and shadow reads (S-74..S-77).
        case keyring
        /// Rights' accounts looked up off the loop (S-59).
        case accountLookups
    }

    let core: ServerCore
    /// The passcode backend's store, which the core reads and the shell writes (`.commitPasscode`).
    let passcodeStore: PasscodeStore
    let epoll: Epoll
    let listener: FileDescriptor
    let signals: SignalFD
    /// Armed for the earliest deadline (`armTimer`), on CLOCK_BOOTTIME:
    /// a deadline that passed during a suspend is met at the resume.
    let timer: TimerFD
    /// The deadline the timer is armed for (monotonic ns), or nil.
    var armedFor: UInt64?
    /// The timer expired in this turn.
    var timerExpired = false
    let workers: PasscodeWorkers
    let keyWorkers: KeyWorkers
    let durabilityWake: EventFD
    let snapshotInbox: SnapshotInbox
    let adminLookups: LookupThread<GroupQuery, Bool>
    /// What passwd names a uid now, for its rights (S-59).
    let accountLookups: LookupThread<AccountQuery, AccountAnswer>
    /// Writes the right store's bytes (AtomicFile: write, fsync, rename, fsync the directory).
    let rightsWriter: LookupThread<RightsWrite, SystemError?>
    /// The login secret's work, one job at a time (LoginSecretJobs.swift).
    let keyringThread: LookupThread<KeyringJob, KeyringAnswer>
    /// Backend=fprintd: the sensor, whose bus socket is one of our fds.
    private(set) var fprintd: FprintdSensor?
    /// logind, when a rule of S-61..S-63 or a session agent's lookup (S-65) asks it something.
    private(set) var logind: LogindWatch?
    /// [DBus] Serve=yes: the D-Bus API, whose bus socket is one of our fds.
    private(set) var busFront: BusFront?
    /// A bus connection's output was taken (`write`) and not yet delivered.
    var busOutputTaken = false
    /// Every client socket, by the core's connection id.
    let sockets = ConnectionTable<FileDescriptor>()
    /// The facts of each new connection's principal (S-53).
    let principals = CallerPrincipals()
    /// Reads the configuration files again (SIGHUP); nil = nothing to reload.
    var reload: (() throws -> DaemonConfiguration)? {
        didSet { core.service.canReload = reload != nil }
    }
    /// Reopens the log after a write failure (`.reopenLog`); nil = cannot.
    var reopen: (() throws -> Authenticator)? {
        didSet { core.logHealth.canReopen = reopen != nil }
    }
    var readBuffer = [UInt8](repeating: 0, count: 65536)
    /// Performs the core's actions through this shell (EventLoopActions.swift).
    let performer = ActionPerformer()
    /// Sockets closed so far: a read loop that performed actions checks
    /// its fd is still ours only when this moved.
    var closes: UInt64 = 0
    /// The covered segments' check after READY, until it reports (S-49).
    var coveredCheck: CoveredSegmentsCheck?

    init(core: ServerCore, passcodeStore: PasscodeStore, listener: FileDescriptor, signals: SignalFD,
         durabilityWake: EventFD, snapshotInbox: SnapshotInbox) throws {
        self.core = core
        self.passcodeStore = passcodeStore
        self.listener = listener
        self.signals = signals
        self.durabilityWake = durabilityWake
        self.snapshotInbox = snapshotInbox
        epoll = try Epoll(capacity: 512)
        timer = try TimerFD(countingSuspend: true)
        workers = try PasscodeWorkers(count: PasscodeJobs.workers)
        keyWorkers = try KeyWorkers(count: SavedRights.keyWorkers)
        adminLookups = try ServerCore.makeAdminLookups()
        accountLookups = try ServerCore.makeAccountLookups()
        rightsWriter = try LookupThread { write in
            do throws(SystemError) {
                try AtomicFile.write(write.path, bytes: write.bytes, mode: 0o600)
                return nil
            } catch {
                return error
            }
        }
        keyringThread = try LookupThread { job in job.run() }
        core.service.watchdogInterval = Systemd.watchdogInterval()
        core.service.testHangSeconds = DaemonLog.testHangSeconds()
        core.actions.reserveCapacity(64)
        try epoll.add(listener, events: .readable, data: Token.listener.rawValue)
        try epoll.add(signals.fileDescriptor, events: .readable, data: Token.signals.rawValue)
        try epoll.add(timer.fileDescriptor, events: .readable, data: Token.timer.rawValue)
        try epoll.add(workers.wake.fileDescriptor, events: .readable, data: Token.passcodes.rawValue)
        try epoll.add(keyWorkers.wake.fileDescriptor, events: .readable, data: Token.keys.rawValue)
        try epoll.add(durabilityWake.fileDescriptor, events: .readable, data: Token.durability.rawValue)
        try epoll.add(adminLookups.wake.fileDescriptor, events: .readable, data: Token.adminLookups.rawValue)
        try epoll.add(rightsWriter.wake.fileDescriptor, events: .readable, data: Token.rightsWriter.rawValue)
        try epoll.add(keyringThread.wake.fileDescriptor, events: .readable, data: Token.keyring.rawValue)
        try epoll.add(accountLookups.wake.fileDescriptor, events: .readable, data: Token.accountLookups.rawValue)
        try epoll.add(snapshotInbox.wake.fileDescriptor, events: .readable, data: Token.snapshots.rawValue)
        if let shadow = passcodeStore as? ShadowPasscodes {
            try epoll.add(shadow.scanned.fileDescriptor, events: .readable, data: Token.shadowScans.rawValue)
        }
        core.whereabouts.hostName = Self.hostName()
        let biometry = core.configuration.biometry
        // S-61..S-63 only with a sensor and one of their keys on; session
        // agents (S-65) whatever the sensor.
        let whereabouts = biometry.type != .none
            && (biometry.skipRemote || biometry.lidClosedInaccessible || biometry.cancelOnSuspend)
        logind = LogindWatch(address: biometry.logindBus, server: core, epoll: epoll, whereabouts: whereabouts)
        if core.configuration.biometry.backend == .fprintd {
            let sensor = try FprintdSensor(address: core.configuration.biometry.fprintdBus, epoll: epoll)
            fprintd = sensor
            core.useSensor(name: sensor.name, problem: sensor.problem)
            try epoll.add(sensor.names.wake.fileDescriptor, events: .readable, data: Token.sensorNames.rawValue)
            core.beginTurn(Self.readClocks())
            sensor.connectIfNeeded()
            deliverSensorReports()
            perform()
        }
        if core.configuration.dbus.serve {
            let front = try BusFront(address: core.configuration.dbus.bus, core: core, principals: principals, epoll: epoll,
                                     token: Token.serviceBus.rawValue)
            busFront = front
            try epoll.add(front.apps.wake.fileDescriptor, events: .readable, data: Token.serviceApps.rawValue)
            core.beginTurn(Self.readClocks())
            front.connectIfNeeded()
            perform()
        }
    }

    /// This machine's name (S-61: an rhost that names it is not remote).
    static func hostName() -> String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "" }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func readClocks() -> TurnTime {
        TurnTime(wall: WallClock.nowMicros(), boot: BootClock.nowMicros(), monotonic: MonotonicClock.nowNanos())
    }

    /// S-59: every uid with rights looked up once the store is open, so
    /// that rights of accounts removed while the daemon was down are dropped.
    func lookUpRightAccounts() {
        core.beginTurn(Self.readClocks())
        core.lookUpRightAccounts()
        perform()
    }

    /// Runs until SIGTERM/SIGINT, then shuts down cleanly (S-32).
    func run() throws {
        // The start is a turn: an idle daemon that nobody wakes still exits (S-83).
        core.beginTurn(Self.readClocks())
        core.noteIdleness()
        while !core.isStopping {
            armTimer()
            let ready = try epoll.wait(timeoutMilliseconds: -1)
            core.beginTurn(Self.readClocks())
            // The bus first: a verdict fprintd sent before a cancel that
            // arrives in the same turn is counted (FprintdVerify.swift).
            if let fprintd {
                for event in ready where event.data == Token.sensorBus.rawValue {
                    fprintd.busReady()
                    deliverSensorReports()
                    perform()
                }
            }
            for event in ready {
                switch event.data {
                case Token.sensorBus.rawValue: break
                case Token.logindBus.rawValue: logind?.busReady()
                case Token.sensorNames.rawValue:
                    fprintd?.names.deliver()
                    deliverSensorReports()
                case Token.listener.rawValue: acceptAll()
                case Token.signals.rawValue: handleSignals()
                case Token.timer.rawValue:
                    _ = try? timer.readExpirations()
                    timerExpired = true
                    // The reader's deadlines (its calls, a reconnect), then the core's.
                    fprintd?.timerFired()
                    deliverSensorReports()
                    logind?.timerFired()
                    core.timerFired()
                    busFront?.timerFired()
                    if core.idleExitIsDue, fprintd?.isIdle ?? true, busFront?.isIdle ?? true, !clientWaits() {
                        core.exitForIdle()
                    }
                case Token.passcodes.rawValue: core.passcodeJobsFinished(workers.drain())
                case Token.keys.rawValue: core.keyJobsFinished(keyWorkers.drain())
                case Token.durability.rawValue:
                    _ = try? durabilityWake.drain()
                    coveredCheckMayHaveFinished()
                case Token.snapshots.rawValue: core.snapshotsWritten(snapshotInbox.drain())
                case Token.adminLookups.rawValue: core.adminLookupsAnswered(adminLookups.collect())
                case Token.accountLookups.rawValue: core.accountsLookedUp(accountLookups.collect())
                case Token.rightsWriter.rawValue:
                    for (write, failure) in rightsWriter.collect() { core.rightsWritten(write.token, failure: failure) }
                case Token.keyring.rawValue: core.keyringAnswered(keyringThread.collect())
                case Token.serviceBus.rawValue: busFront?.busReady()
                case Token.serviceApps.rawValue: busFront?.appsAnswered()
                case Token.shadowScans.rawValue:
                    _ = try? (passcodeStore as? ShadowPasscodes)?.scanned.drain()
                    core.noticeLoginPasswordChanges()
                default: connectionEvent(event.data, event.events)
                }
                perform()
            }
            busFront?.fed = false
            core.endOfTurn()
            perform()
            // Requests the bus front fed while it delivered the turn's output
            // (a chained call) are this turn's input: answered now, not a turn later.
            while let busFront, busFront.fed {
                busFront.fed = false
                core.endOfTurn()
                perform()
            }
            // The bus's output the turn queued: epoll watches for writability.
            fprintd?.endOfTurn()
            busFront?.endOfTurn()
        }
        shutdown()
    }

    /// Whether a client waits in the listener's backlog (S-83: then the
    /// daemon serves it instead of exiting). One that connects after this
    /// look waits in the backlog of systemd's socket, which starts the
    /// daemon again.
    func clientWaits() -> Bool {
        var descriptor = pollfd(fd: listener.rawValue, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) != 0
    }

    /// Arms the timer for the earliest deadline of the core and the buses
    /// (only when it changed: a settime is a syscall), or disarms it.
    func armTimer() {
        var next = core.nextDeadline()
        for deadline in [fprintd?.nextDeadline, logind?.nextDeadline, busFront?.nextDeadline] {
            if let deadline, next.map({ deadline < $0 }) ?? true { next = deadline }
        }
        let fired = timerExpired
        timerExpired = false
        guard var deadline = next else {
            if armedFor != nil { try? timer.disarm() }
            armedFor = nil
            return
        }
        let now = MonotonicClock.nowNanos()
        // A deadline still due right after the timer passed over it is a
        // duty that could not run yet: no faster than the former tick.
        if fired, deadline <= now { deadline = now + 100_000_000 }
        guard deadline != armedFor || fired else { return }
        armedFor = deadline
        try? timer.arm(afterNanoseconds: deadline > now ? deadline - now : 1)
    }

    /// What the sensor backend reported, handed to the core in order.
    func deliverSensorReports() {
        guard let fprintd, !fprintd.reports.isEmpty else { return }
        for report in fprintd.takeReports() { core.sensorReported(report) }
    }

    func handleSignals() {
        while let signal = try? signals.nextSignal() {
            switch signal {
            case SIGTERM, SIGINT: core.signal(.stop)
            case SIGHUP: core.signal(.reload)
            case SIGUSR2: core.signal(.testHang)
            default: break
            }
            perform()
        }
    }

    /// S-32: the core's final answers, a bounded wait for the log to make
    /// them durable, their release, then every socket closes.
    func shutdown() {
        try? epoll.remove(listener)
        core.beginTurn(Self.readClocks())
        core.shutdown()
        perform()
        // The reader's claim is released, its answer waited for (FprintdSensor.shutdown).
        fprintd?.shutdown()
        let deadline = MonotonicClock.nowNanos() + 1_500_000_000
        while core.awaitsDurability, MonotonicClock.nowNanos() < deadline {
            _ = try? epoll.wait(timeoutMilliseconds: 10)
            _ = try? durabilityWake.drain()
        }
        core.finishShutdown()
        perform()
        busFront?.shutdown()
        for fd in sockets.values {
            try? epoll.remove(fd)
            try? fd.close()
        }
        sockets.removeAll()
    }
}
