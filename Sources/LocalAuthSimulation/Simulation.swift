// One deterministic run: a seed, a number of steps. Each step is one thing
// that can happen to a daemon — a client connects, writes bytes (well
// formed, hostile, a line cut anywhere) or goes away; the daemon reads a
// socket (one byte, some or all of what waits); a socket that was full
// drains; the sensor reads (an administrator's `sensor` line); a passcode
// worker finishes a job; the loop ends its turn; the sync thread syncs; the
// snapshot thread writes; time passes (the ticker fires); the rules are
// reloaded (SIGHUP); the storage is armed with a fault; the daemon crashes
// or stops and restarts on what the storage kept — chosen by the seeded
// generator only. The daemon is the real ServerCore (SimulatedDaemon
// performs its actions) over the real log, booted by the daemon's own boot
// on the simulated storage (SimulatedLives, SimulatedStorage). After every step
// the Oracle's invariants are checked; the first violation ends the run
// with its seed and step, and the same seed replays it exactly (no clock,
// no unsorted Dictionary walk of ours, no randomness but the seed's).
import LocalAuthConfig
import LocalAuthCore
import LocalAuthLog
import LocalAuthProtocol
import LocalAuthSeeded
import LocalAuthServer

public final class Simulation {
    public let seed: UInt64
    public let oracle = Oracle()
    var random: SeededGenerator
    let storage = SimulatedStorage()
    let passcodes = SimulatedPasscodes()
    var daemon: SimulatedDaemon!
    var clients: [SimulatedClient] = []
    /// The administrator whose `sensor` lines are the fingerprint reader.
    let sensor = SimulatedClient(uid: 0, isAdmin: true)
    var boots = 0
    var nextPid: Int32 = 100
    /// The simulator's own reading of the log's files (S-38, durability).
    let shadow: LogShadow
    /// The bit the run rotted, until a start deals with it.
    var rotted: Rot?
    /// The daemon process's life: a crash or a reopen starts another, and
    /// what the old one's log reports after that is not heard.
    var life = 0
    /// What the current boot opened, its snapshot queue, the loop's inbox of written snapshots.
    var opened: OpenedLog!
    var snapshotQueue = SteppedSnapshotQueue()
    let inbox = try! SnapshotInbox()
    /// What the boots journaled (not the trail: the core's own entries go through the shell).
    var bootJournal: [String] = []
    /// A repair cut the log after this seq, until the next start is judged.
    var repairedThrough: UInt64?
    static let startClock = SimulatedClock(wall: 1_700_000_000 * Timestamp.second, boot: 5 * Timestamp.second,
                                           monotonic: 5_000_000_000)
    /// A readable line per step, for a failure's report.
    public private(set) var trace: [String] = []
    /// Lines of trace kept (the newest); `localauth-sim --dump` keeps all.
    public var traceLimit = 400
    var configuration: DaemonConfiguration
    /// AdminGroup's members as NSS answers now (an administrator may be removed).
    var groupMembers: Set<UserID> = [1001]
    static let users: [UserID] = [0, 1000, 1001, 1002, 1003]

    public init(seed: UInt64) {
        self.seed = seed
        random = SeededGenerator(seed: seed)
        var configuration = DaemonConfiguration()
        // Small numbers, so that lockouts, delays and the admin lock happen often.
        configuration.biometry.lockoutThreshold = 3
        configuration.passcode.delayAfterFailures = 2
        configuration.passcode.backoff = [5, 30].map { $0 * Timestamp.second }
        configuration.passcode.maxPasscodeFailures = random.chance(50) ? 6 : 0
        configuration.biometry.promptTimeout = 20 * Timestamp.second
        // Half the seeds keep a space reserve on a small disk (S-48): the
        // core's statvfs port reads the simulated disk's room.
        configuration.log.reserveSpace = random.chance(50) ? 32 << 10 : 0
        configuration.daemon.stateDirectory = Self.stateDirectory
        // Small segments and frequent snapshots: rotation, seals, snapshots
        // and their digests happen in every run (preallocation: 4 KiB steps).
        configuration.log.segmentSize = (8 + random.below(24)) << 10
        configuration.log.snapshotEvery = 24 + random.below(80)
        // Small enough for a flood to a client that stopped reading to pass it.
        configuration.daemon.maxPendingBytes = 64 << 10
        // Half the seeds name an AdminGroup: admin requests of others wait for its lookup (S-51).
        if random.chance(50) { configuration.daemon.adminGroup = "wheel" }
        self.configuration = configuration
        for index in 0..<(3 + random.below(5)) {
            let uid = Self.users[index % Self.users.count]
            // Only uid 1001 is ever in the AdminGroup (nssAnswers toggles it).
            let mayAdminister = uid == 0 || (configuration.daemon.adminGroup != nil && uid == 1001)
            clients.append(SimulatedClient(uid: uid, isAdmin: uid == 0, mayAdminister: mayAdminister))
        }
        // A desktop agent of uid 1000 or 1001 (each has a client above):
        // while it is its session's agent, that user's apps in the session
        // are prompted by it, and it may go away mid-prompt (S-65..S-68).
        let desktop: UserID = random.chance(50) ? 1000 : 1001
        clients.append(SimulatedClient(uid: desktop, isAdmin: false,
                                       mayAdminister: configuration.daemon.adminGroup != nil && desktop == 1001,
                                       isDesktopAgent: true))
        for uid in Self.users where uid != 0 { passcodes.set("pass-\(uid)", for: uid) }
        shadow = LogShadow(storage: storage, logDirectory: Self.logDirectory)
        shadow.folded = { [unowned self] event, seq, before in oracle.recorded(event, seq: seq, before: before) }
        restart(durableBefore: 0)
        // An earlier life: the administrator enrolled every user.
        let now = daemon.clock.wall
        for uid in Self.users where uid != 0 {
            _ = daemon.authenticator.execute(.enroll(uid: uid, template: "finger", by: 0, domainState: "d\(uid)"), now: now)
        }
        daemon.authenticator.flush()
        try? opened.log.waitDurable(daemon.recorder.lastSeq)
        shadow.catchUp()
    }

    /// Runs `steps` steps, or until the first violation.
    public func run(steps: Int) -> Bool {
        for step in 1...max(1, steps) {
            oracle.step = step
            oracle.count(step: ())
            perform()
            check()
            if !oracle.violations.isEmpty { return false }
        }
        return true
    }

    // MARK: - Steps

    private func perform() {
        for client in clients where client.stalled > 0 { client.stalled -= 1 }
        switch random.below(1000) {
        case 0..<300: clientActs()
        case 300..<470: daemonReads()
        case 470..<540: sensorReads()
        case 540..<600: trace("a worker finishes a job"); daemon.finishJob()
        case 600..<630: socketDrains()
        case 630..<760:
            // logind answers within a turn or two, mostly (S-65).
            if !daemon.sessionLookups.isEmpty, random.chance(50) {
                trace("logind answers a session lookup")
                daemon.answerSessionLookup(unavailable: random.chance(3))
            }
            trace("end of turn"); daemon.endTurn()
        case 760..<850: trace("sync thread"); syncThread()
        case 850..<900: passTime()
        case 900..<908: reloadRules()
        case 908..<915: armFault()
        case 915..<930: disconnect()
        case 930..<935: crash()
        case 935..<937: cleanStop()
        case 937..<950: nssAnswers()
        case 950..<960:
            trace("logind answers a session lookup")
            daemon.answerSessionLookup(unavailable: random.chance(5))
        case 965..<972: diskSpaceChanges()
        case 972..<980 where !snapshotQueue.isEmpty: snapshotThread()
        case 960..<965:
            // A client stops reading for a while (its replies pile up: MaxPendingBytes, the closing timeout).
            let client = random.pick(clients)
            client.stalled = 20 + random.below(200)
            trace("uid \(client.uid) stops reading for \(client.stalled) steps")
        default: clientActs()
        }
    }

    func trace(_ text: String) {
        trace.append("\(oracle.step): \(text)")
        if trace.count > traceLimit { trace.removeFirst(traceLimit / 4) }
    }

    private func connect(_ client: SimulatedClient) {
        nextPid += 1
        // logind (S-65): most processes are in one of their user's two
        // sessions, some in another user's (su), some in none; a desktop
        // agent is in its user's first session, mostly.
        switch client.isDesktopAgent && random.chance(90) ? 0 : random.below(10) {
        case 0..<4: daemon.sessionOfPid[nextPid] = ("s\(client.uid)", client.uid)
        case 4..<7: daemon.sessionOfPid[nextPid] = ("t\(client.uid)", client.uid)
        case 7: daemon.sessionOfPid[nextPid] = ("s1000", 1000)
        default: break
        }
        daemon.connect(client, pid: nextPid)
        trace("uid \(client.uid) connects (\(client.connection.map(String.init) ?? "refused"))")
    }

    private func clientActs() {
        // A person answers the prompt in front of them before the timeout,
        // mostly: an agent that was sent one acts more often (S-66..S-68).
        let prompted = clients.filter { $0.connection != nil && !$0.agentRequests.isEmpty }
        let client = !prompted.isEmpty && random.chance(25) ? random.pick(prompted) : random.pick(clients)
        guard client.connection != nil else { return connect(client) }
        if !client.partial.isEmpty {
            // The rest of a line it began sending.
            trace("uid \(client.uid) sends the rest of a line")
            daemon.write(client.partial, from: client)
            client.partial.removeAll()
            return
        }
        var bytes = line(for: client)
        if random.chance(6), bytes.count > 1 {
            // A line cut anywhere: the rest comes in a later step.
            let cut = 1 + random.below(bytes.count - 1)
            client.partial = Array(bytes[cut...])
            bytes = Array(bytes[..<cut])
        }
        trace("uid \(client.uid) sends \(String(decoding: bytes.prefix(120), as: UTF8.self).debugDescription)")
        daemon.write(bytes, from: client)
    }

    /// Epoll reports what is readable: most of those sockets are read now.
    private func daemonReads() {
        for id in daemon.readable where random.chance(70) {
            trace("the daemon reads connection \(id)")
            daemon.read(id)
        }
    }

    private func socketDrains() {
        let writable = daemon.writable
        guard !writable.isEmpty else { return }
        let id = random.pick(writable)
        trace("connection \(id) is writable")
        daemon.writable(id)
    }

    /// The reader: an administrator's `sensor` line for a user whose
    /// biometric prompt waits (sometimes for one whose does not).
    private func sensorReads() {
        if sensor.connection == nil { return connect(sensor) }
        let state = daemon.authenticator.state
        let waiting = state.prompting.sorted().compactMap { ctx -> UserID? in
            guard let context = state.contexts[ctx], let evaluation = context.evaluation,
                  evaluation.isScanning else { return nil }
            return context.uid
        }
        let uid = waiting.isEmpty || random.chance(10) ? random.pick(Self.users) : random.pick(waiting)
        let result = random.pick(["match", "nomatch", "nomatch", "retry"])
        trace("the sensor reads \(result) for uid \(uid)")
        daemon.write(sensor.request("sensor", [("uid", String(uid)), ("result", result)]), from: sensor)
    }

    private func passTime() {
        var micros = random.pick([100_000, 100_000, 1_000_000, 6_000_000, 25_000_000, 90_000_000]) as Int64
        if random.chance(15) {
            // The wall clock is set back (S-8): delays must not shorten.
            micros = -Int64(1 + random.below(300)) * Timestamp.second
            oracle.countClockSetBack()
        }
        trace("time passes \(micros / 1000) ms, the timer fires if due")
        daemon.pass(micros: micros)
        daemon.tick()
    }

    /// SIGHUP with other rules.
    private func reloadRules() {
        configuration.biometry.lockoutThreshold = 2 + random.below(4)
        configuration.passcode.delayAfterFailures = 1 + random.below(4)
        configuration.passcode.maxPasscodeFailures = random.pick([0, 4, 6])
        configuration.biometry.promptTimeout = Int64(5 + random.below(40)) * Timestamp.second
        configuration.biometry.passcodeRequiredAfter = random.chance(30) ? 30 * Timestamp.second : 0
        trace("SIGHUP: lockout \(configuration.biometry.lockoutThreshold), delay after \(configuration.passcode.delayAfterFailures)")
        oracle.countReload()
        daemon.signal(.reload)
    }

    private func armFault() {
        // A failed log writes nothing until it is reopened: a fault armed
        // now would strike the reopen (sometimes it does).
        if daemon.recorder.failure != nil, random.chance(80) { return }
        let fault = random.pick([DiskFault.tornWrite, .noSpaceOnWrite, .ioErrorOnWrite, .ioErrorOnSync, .noSpaceOnSync, .passcodeStoreFull])
        trace("armed: \(fault.rawValue)")
        oracle.count(fault)
        switch fault {
        case .ioErrorOnSync: storage.armedSync = .eio
        case .noSpaceOnSync: storage.armedSync = .enospc
        case .passcodeStoreFull: passcodes.failNextCommit = true
        case .noSpaceOnWrite: storage.armedWrite = .enospc
        case .ioErrorOnWrite: storage.armedWrite = .eio
        default: storage.armedWrite = .torn
        }
        let chunk = random.next()
        storage.tornKeep = { count in count <= 1 ? 0 : Int(chunk % UInt64(count)) }
    }

    func armSyncFault() {
        let fault = random.chance(50) ? DiskFault.ioErrorOnSync : .noSpaceOnSync
        trace("armed: \(fault.rawValue)")
        oracle.count(fault)
        storage.armedSync = fault == .ioErrorOnSync ? .eio : .enospc
    }

    /// The lookup thread's oldest AdminGroup query is answered (sometimes
    /// after the membership changed).
    private func nssAnswers() {
        guard !daemon.lookups.isEmpty else { return }
        if random.chance(10) {
            if groupMembers.contains(1001) { groupMembers.remove(1001) } else { groupMembers.insert(1001) }
            trace("uid 1001 is \(groupMembers.contains(1001) ? "added to" : "removed from") the AdminGroup")
        }
        trace("NSS answers the oldest group lookup")
        daemon.answerLookup { [groupMembers] in groupMembers.contains($0) }
    }

    /// Other files take or give back room on the log's file system (with a
    /// reserve configured): the reserve is crossed both ways, and a full
    /// disk is ENOSPC for real.
    private func diskSpaceChanges() {
        guard configuration.log.reserveSpace > 0 else { return }
        let room = random.pick([8, 24, 40, 64, 256]) << 10
        storage.capacity = storage.used + room
        trace("the disk has \(room >> 10) KiB free")
        oracle.countSpaceChange()
    }

    private func disconnect() {
        let connected = clients.filter { $0.connection != nil }
        guard !connected.isEmpty else { return }
        // S-68: now and then an agent that has a prompt open goes away.
        let prompting = connected.filter { !$0.agentRequests.isEmpty }
        let client = !prompting.isEmpty && random.chance(30) ? random.pick(prompting) : random.pick(connected)
        let reset = random.chance(50)
        trace("uid \(client.uid) \(reset ? "resets" : "closes") its connection")
        daemon.hangUp(client, reset: reset)
        oracle.countDisconnect()
    }
}
