// The daemon as the simulator runs it: the real ServerCore (dispatch,
// replies, the reply gate, fail closed, connections, limits, the passcode
// queue) over the real Authenticator, fed its inputs by this action
// performer in the place of the epoll shell (EventLoop). It owns what the
// shell owns, simulated: the sockets (bytes a client wrote that the daemon
// has not read, the interest the core asked for, short writes), the passcode
// workers (a job runs at a step the run picks), the clock (TurnTime), the
// journal and sd_notify; the log is the real one (LogRecorder, EventLog) on
// the simulated storage, its sync thread stepped by the run (SimulatedLives).
// Every action is judged on its way out by the S-40 oracle (RevealMarks):
// output produced after a failure was recorded does not leave before the
// storage has the failure durable.
import LocalAuthCore
import LocalAuthConfig
import LocalAuthLog
import LocalAuthProtocol
import LocalAuthSystem
import LocalAuthServer

/// One connection's socket as the shell sees it.
struct SimulatedSocket {
    /// Bytes the client wrote that the daemon has not read (the kernel's buffer).
    var inbound: [UInt8] = []
    /// Bytes the daemon wrote to it so far (the stream's position).
    var delivered = 0
    /// Epoll interest, as the core last asked.
    var reading = true
    var writing = false
    /// The client went away: EOF once `inbound` is read (or at once, reset).
    var peerGone = false
    /// The client that holds it, until it goes away.
    var client: SimulatedClient?
    var marks = RevealMarks()
    /// The same marks for every record, against what reached the log's file:
    /// output leaves only after the records before it are written (a kill
    /// of the daemon then loses nothing it answered; ServerOutput.writeLog).
    var unwritten = RevealMarks()
    /// What the stream had produced at the last look (a drop shows as less).
    var produced = 0
}

/// The simulated clock: the wall clock may be set back (S-8), the boot and
/// monotonic clocks never are.
struct SimulatedClock {
    var wall: Int64
    var boot: Int64
    var monotonic: UInt64

    /// `micros` pass; a negative value sets the wall clock back by as much
    /// while a tick's worth of real time passes.
    mutating func pass(micros: Int64) {
        wall += micros
        let real = micros > 0 ? micros : 100_000
        boot += real
        monotonic += UInt64(real) * 1000
    }

    var turn: TurnTime { TurnTime(wall: wall, boot: boot, monotonic: monotonic) }
}

final class SimulatedDaemon {
    let core: ServerCore
    let passcodes: SimulatedPasscodes
    let oracle: Oracle
    var clock: SimulatedClock
    private var inTurn = false
    var sockets: [Connection.ID: SimulatedSocket] = [:]
    /// AdminGroup lookups asked (the lookup thread answers in order).
    private(set) var lookups: [GroupQuery] = []
    /// The simulated logind: which session each client pid is in (S-65),
    /// and the session lookups asked (`.lookUpSession`), answered later.
    var sessionOfPid: [Int32: (id: String, uid: UserID)] = [:]
    private(set) var sessionLookups: [(id: Connection.ID, pid: Int32)] = []
    /// Jobs the core started, not yet finished by a worker.
    private(set) var jobs: [(token: UInt64, job: PasscodeWorkers.Job)] = []
    var notifications: [String] = []
    /// The authentication trail (each evaluation's end, lockouts, backoff,
    /// account changes: what a failure's outcome shows in), as a stream.
    var trail = RevealMarks()
    var trailPerformed = 0
    /// sd_notify's STATUS= with the daemon's counts (users locked out),
    /// which anyone reads with `systemctl status`: a stream like the trail.
    var status = RevealMarks()
    var statusPerformed = 0
    var journalEntries = 0
    /// Performs the core's actions through this shell.
    let performer = ActionPerformer()
    /// What the write about to be performed will take (`socketIsOpen` rolls it).
    private var writeRoll = 0
    /// The run's choices: a number below the bound.
    let below: (Int) -> Int
    /// The run's trace.
    var trace: (String) -> Void = { _ in }
    /// Reopens the failed log on the simulated storage (`.reopenLog`).
    var reopen: () throws -> Authenticator = { throw CannotReopen() }
    /// What SIGHUP reads from the configuration files.
    var configuration: () -> DaemonConfiguration = { DaemonConfiguration() }
    private let fingerprintKey = Array("simulated fingerprint key".utf8)

    var authenticator: Authenticator { core.authenticator }
    var recorder: EventRecorder { core.authenticator.recorder }
    /// The simulator's own reading of the storage (LogShadow): the newest
    /// seq durable with all before it, and the newest on the log's file.
    var durableSeq: () -> UInt64 = { 0 }
    var writtenSeq: () -> UInt64 = { 0 }

    init(core: ServerCore, passcodes: SimulatedPasscodes, clock: SimulatedClock,
         oracle: Oracle, below: @escaping (Int) -> Int) {
        self.core = core
        self.passcodes = passcodes
        self.clock = clock
        self.oracle = oracle
        self.below = below
    }

    /// Wires an authenticator (at boot, and at each reopen of the log) to
    /// the S-40 oracle: every seq recorded (a check's too), and each failure.
    func watch(_ authenticator: Authenticator) {
        let snapshots = authenticator.observe
        authenticator.observe = { [unowned self] seq, state in
            snapshots(seq, state)
            recorded(nil, seq)
        }
        authenticator.observeEvent = { [unowned self] body, seq in recorded(body, seq) }
    }

    // MARK: - Turns and inputs

    /// Inputs come within a loop turn: the first one opens it (the clock is read once).
    private func turn() {
        guard !inTurn else { return }
        inTurn = true
        core.beginTurn(clock.turn)
    }

    func endTurn() {
        turn()
        core.endOfTurn()
        perform()
        inTurn = false
    }

    /// Time passes between turns only.
    func pass(micros: Int64) {
        if inTurn { endTurn() }
        clock.pass(micros: micros)
    }

    func connect(_ client: SimulatedClient, pid: Int32) {
        turn()
        switch core.connectionOpened(peer: PeerCredentials(pid: pid, uid: client.uid, gid: client.uid)) {
        case .accepted(let id):
            var socket = SimulatedSocket()
            socket.client = client
            sockets[id] = socket
            client.connection = id
        case .refused(let bytes):
            client.receive(bytes, oracle: oracle)
            client.disconnected(byDaemon: true, oracle: oracle)
        }
        perform()
    }

    /// The client writes: the bytes wait in the socket until the daemon reads.
    func write(_ bytes: [UInt8], from client: SimulatedClient) {
        guard let id = client.connection, sockets[id] != nil, !sockets[id]!.peerGone else { return }
        sockets[id]!.inbound += bytes
    }

    /// The client closes its end (`reset`: what it wrote and the daemon
    /// did not read is lost too).
    func hangUp(_ client: SimulatedClient, reset: Bool) {
        guard let id = client.connection else { return }
        sockets[id]?.peerGone = true
        sockets[id]?.client = nil
        if reset { sockets[id]?.inbound.removeAll() }
        client.disconnected(byDaemon: false, oracle: oracle)
    }

    /// Connections epoll reports: bytes to read (the core reads it and
    /// watches for reading), or a hang-up.
    var readable: [Connection.ID] {
        sockets.keys.sorted().filter { id in
            let socket = sockets[id]!
            return socket.peerGone || (socket.reading && core.isReading(id) && !socket.inbound.isEmpty)
        }
    }

    /// One read: a seeded prefix of what waits (one byte, some, or all);
    /// EOF when nothing waits and the peer is gone; as EventLoop, a hang-up
    /// of a connection the core does not read is `peerHungUp`.
    func read(_ id: Connection.ID) {
        guard let socket = sockets[id] else { return }
        turn()
        if !socket.reading || !core.isReading(id) {
            // EPOLLHUP while the core does not read it (closing, or parked).
            trace("  hang-up")
            core.peerHungUp(id)
        } else if socket.inbound.isEmpty {
            trace("  EOF")
            core.peerClosed(id)
        } else {
            let waiting = socket.inbound.count
            let roll = below(20)
            let count = roll < 3 ? 1 : (roll < 8 ? 1 + below(waiting) : waiting)
            let chunk = Array(socket.inbound[..<count])
            sockets[id]!.inbound.removeFirst(count)
            trace("  \(count) of \(waiting) bytes")
            if count < waiting { oracle.countSplitRead() }
            chunk.withUnsafeBytes { _ = core.received($0, on: id) }
        }
        perform()
    }

    /// Connections whose output did not all fit, now writable again.
    var writable: [Connection.ID] { sockets.keys.sorted().filter { sockets[$0]!.writing } }

    func writable(_ id: Connection.ID) {
        turn()
        core.writable(id)
        perform()
    }

    /// Time passed: the shell's timer fires if a deadline the core gave is
    /// due (S-82: the daemon wakes for nothing else on its own).
    func tick() {
        turn()
        guard let deadline = core.nextDeadline(), deadline <= clock.monotonic else { return }
        core.timerFired()
        perform()
    }

    func signal(_ signal: ServerSignal) {
        turn()
        core.signal(signal)
        perform()
    }

    /// S-32 as EventLoop.shutdown does it: the core's final answers, a
    /// bounded wait (1.5 s, in 10 ms waits while the sync thread may or
    /// may not sync) for durability, the release, every socket closed.
    func shutdown(sync: () -> Void) {
        if inTurn { endTurn() }
        turn()
        core.shutdown()
        perform()
        var waited = 0
        while core.awaitsDurability, waited < 150 {
            waited += 1
            sync()
            clock.pass(micros: 10_000)
        }
        core.finishShutdown()
        perform()
        inTurn = false
        exited()
    }

    /// The loop reads the snapshot inbox: the snapshots written are recorded.
    func snapshotsWritten(_ written: [(seq: UInt64, digest: ChainHead)]) {
        guard !written.isEmpty else { return }
        turn()
        core.snapshotsWritten(written)
        perform()
    }

    /// A worker finishes one of the running jobs (the run picks which).
    func finishJob() {
        guard !jobs.isEmpty else { return }
        let (token, job) = jobs.remove(at: below(jobs.count))
        turn()
        core.passcodeJobsFinished([SimulatedDaemon.run(job, token: token, fingerprintKey: fingerprintKey)])
        perform()
    }

    /// logind answers one session lookup (the run picks which), or cannot
    /// (`unavailable`). The pidfs inode is the pid's, offset.
    func answerSessionLookup(unavailable: Bool) {
        guard !sessionLookups.isEmpty else { return }
        let (id, pid) = sessionLookups.remove(at: below(sessionLookups.count))
        let session: PeerSession.Session = unavailable ? .unavailable("logind is not running (simulated).")
            : sessionOfPid[pid].map { .session(id: $0.id, uid: $0.uid, remote: false, remoteHost: "") } ?? .none
        turn()
        core.sessionLookedUp(id, PeerSession(session: session, process: UInt64(90_000 + Int(pid))))
        perform()
    }

    /// The lookup thread answers its oldest query (NSS: is `uid` in the group?).
    func answerLookup(member: (UserID) -> Bool) {
        guard !lookups.isEmpty else { return }
        let query = lookups.removeFirst()
        turn()
        core.adminLookupsAnswered([(query, member(query.uid))])
        perform()
    }

    // MARK: - Performing actions

    /// Performs the core's actions in order (the shared ActionPerformer,
    /// with this as its shell), until it has none.
    func perform() { performer.perform(core, through: self) }
}

/// The simulator as the core's shell: what each action does to the
/// simulated sockets, workers, lookups, journal and sd_notify, each byte and
/// entry judged by the S-40 oracle on its way out.
extension SimulatedDaemon: ServerShell {
    /// A write to the socket follows: what it will take is rolled now.
    func socketIsOpen(_ id: Connection.ID) -> Bool {
        guard sockets[id] != nil else { return false }
        writeRoll = below(10)
        return true
    }

    /// All, part or none of the unsent output (the client's buffer is
    /// full), each byte judged by S-40 first; nil is a failed write (EPIPE:
    /// nobody reads).
    func write(_ unsent: UnsafeRawBufferPointer, to id: Connection.ID) -> Int? {
        guard var socket = sockets[id], !socket.peerGone else { return nil }
        let roll = writeRoll
        // A client that stopped reading takes nothing once a little is buffered.
        let stalled = (socket.client?.stalled ?? 0) > 0
        let count = stalled ? min(unsent.count, below(2) * 512)
            : roll < 7 ? unsent.count : (roll < 9 ? below(unsent.count + 1) : 0)
        if count < unsent.count { oracle.countShortWrite() }
        let range = socket.delivered..<(socket.delivered + count)
        let durable = durableSeq(), written = writtenSeq()
        let judged = socket.marks.performed(range, durable: durable)
        if let seq = judged.violation {
            oracle.violation("S-40: connection \(id) was sent bytes \(range), those from \(socket.marks.violationFrom ?? -1) "
                + "produced after the failure at seq \(seq), durable through \(durable) (the log says \(recorder.durableSeq))")
        }
        if let seq = socket.unwritten.performed(range, durable: written).violation {
            oracle.violation("connection \(id) was sent bytes \(range), those from \(socket.unwritten.violationFrom ?? -1) produced "
                + "after seq \(seq) was recorded, before its record reached the log's file (written through "
                + "\(written)): a kill would lose what it answered")
        }
        oracle.revealed(judged.revealed, newest: judged.newest)
        socket.delivered += count
        sockets[id] = socket
        let bytes = Array(unsent.prefix(count))
        if !bytes.isEmpty {
            trace("  \(id) gets \(String(decoding: bytes.prefix(160), as: UTF8.self).debugDescription)\(bytes.count > 160 ? "..." : "")")
        }
        socket.client?.receive(bytes, oracle: oracle)
        return count
    }

    func watch(_ id: Connection.ID, reading: Bool, writing: Bool) {
        sockets[id]?.reading = reading
        sockets[id]?.writing = writing
    }

    func close(_ id: Connection.ID) {
        // Ids are never reused: a second close of one (a failed write
        // during finishShutdown's closes) is nothing, as in EventLoop.
        guard let socket = sockets.removeValue(forKey: id) else { return }
        trace("  the daemon closes \(id)")
        socket.client?.disconnected(byDaemon: true, oracle: oracle)
    }

    func notify(_ state: String) { notified(state) }

    func journal(_ entry: JournalEntry) { journaled(entry) }

    func runPasscodeJob(token: UInt64, _ job: PasscodeWorkers.Job) {
        admitted(token)
        oracle.countPasscodeJob()
        jobs.append((token, job))
    }

    /// The store outside the process (it survives a crash), which may refuse the write.
    func commitPasscode(_ record: String?, for uid: UserID) throws { try passcodes.commit(record, for: uid) }

    func lookUpGroup(_ query: GroupQuery) { lookups.append(query) }

    func reopenLog() throws -> Authenticator { try reopen() }

    func lookUpSession(_ id: Connection.ID, pid: ProcessID, uid: UserID) { sessionLookups.append((id, pid)) }

    func readConfiguration() -> Result<DaemonConfiguration, any Error>? { .success(configuration()) }
}

extension SimulatedDaemon {
    /// What a worker does with a job (PasscodeWorkers.submit's closure),
    /// on the simulator's step instead of a thread.
    static func run(_ job: PasscodeWorkers.Job, token: UInt64, fingerprintKey: [UInt8]) -> PasscodeWorkers.Completion {
        var completion = PasscodeWorkers.Completion(token: token, correct: false, hash: nil, fingerprint: [])
        switch job {
        case .verify(let secret, let check):
            let bytes = secret.copy()
            completion.correct = check(bytes)
            completion.fingerprint = SHA256.hash(fingerprintKey + bytes)
        case .verifySealing(let secret, let check):
            // Only the shadow backend seals (S-74); a simulation has none.
            let bytes = secret.copy()
            completion.correct = check(bytes).correct
            completion.fingerprint = SHA256.hash(fingerprintKey + bytes)
        case .record(let secret, let make):
            do {
                completion.hash = try make(secret.copy())
                completion.correct = true
            } catch {
                completion.error = "\(error)"
            }
        }
        return completion
    }

    /// The process exited (after a clean stop): every socket closes.
    func exited() {
        for id in sockets.keys.sorted() { sockets[id]!.client?.disconnected(byDaemon: true, oracle: oracle) }
        sockets.removeAll()
    }

    /// S-46: a check that starts now must not be in a delay or a lock (at
    /// the daemon's clock of the turn, DaemonClock: after the wall clock is
    /// set back it runs on with CLOCK_BOOTTIME, so delays do not lengthen).
    func admitted(_ token: UInt64) {
        // A new passcode's hash (its old one was proved before) checks nothing.
        guard let check = core.passcodeJobs.running[token] else { return }
        if case .newHash = check { return }
        let uid = check.uid
        if let refusal = authenticator.state.passcodeEntryRefusal(uid, now: core.now) {
            oracle.violation("S-46: a check of uid \(uid)'s passcode started during \(refusal.message)")
        }
    }
}
