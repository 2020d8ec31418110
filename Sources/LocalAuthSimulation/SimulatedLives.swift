// The daemon's lives in a run, over the real log on the simulated storage.
// A boot is the daemon's own (Daemon.openAuthenticator) with the
// simulator's ports: its file system, a sync thread and a snapshot queue it
// steps, its clock and journal. A crash takes the machine down
// (SimulatedStorage.crash keeps what was durable and some of what was not),
// and a durable bit may rot meanwhile: in a record of the open segment, in
// a sealed segment or its seal, in a snapshot. A clean stop is SIGTERM
// through the core, then what Daemon.run does after its loop
// (Daemon.finishStop). The core's reopen of a failed log is the boot again.
// A start the log refuses is answered as an administrator would: the byte
// restored from a backup, or `localauthctl repair` (EventLog.repair with
// localauthctl's records), which must leave a log that verifies.
// Each boot is judged: a rotted byte of a record or a sealed segment is
// refused (S-41), rot in a snapshot or a seal is only passed over (S-49);
// nothing durable or revealed is lost (no lockout bypass) or, after a
// repair, every user is locked out of biometry (S-41); the state it starts
// from is the fold of the records it kept (S-38, S-49: a snapshot is only a
// shortcut). After every step, S-38: the live state against the fold.
import LocalAuthConfig
import LocalAuthCore
import LocalAuthLog
import LocalAuthServer
import LocalAuthSystem

/// A durable bit flipped before a restart, and what a start must do about it.
struct Rot {
    enum Place: String { case record = "a record", sealed = "a sealed segment", seal = "a seal", snapshot = "a snapshot" }
    var place: Place
    var path: String
    var offset: Int
    var bit = 0
    /// A start must refuse the log (S-41) rather than use or cut it.
    var refuses: Bool { place == .record || place == .sealed }
}

extension Simulation {
    static let stateDirectory = "/sim/state"
    static let logDirectory = stateDirectory + "/log"

    func crash() {
        let kind: SimulatedStorage.CrashKind = random.chance(50) ? .inOrder : .pages
        trace("crash (what was not synced is lost \(kind.rawValue))")
        oracle.count(kind == .inOrder ? .crash : .crashPages)
        shadow.catchUp()
        let durable = shadow.durableThrough()
        // Where a bit may rot: chosen among the bytes the crash keeps.
        let places = rotPlaces()
        retire()
        storage.crash(kind) { random.below($0) }
        if random.chance(15), !places.isEmpty { rot(random.pick(places)) }
        restart(durableBefore: durable)
    }

    /// The process is gone: its log object lingers but every call it makes
    /// on the storage fails (SimulatedStorage's generations), and nothing
    /// it reports is heard.
    private func retire() {
        life += 1
        for client in clients + [sensor] where client.connection != nil { client.disconnected(byDaemon: false, oracle: oracle) }
    }

    /// Durable bytes a bit may rot in: of a record that an intact durable
    /// record follows in the open segment, of a sealed segment or its seal,
    /// of a snapshot (each file durable as a whole).
    private func rotPlaces() -> [Rot] {
        var places: [Rot] = []
        let records = shadow.rottableRecords
        if !records.ranges.isEmpty {
            let range = random.pick(records.ranges)
            places.append(Rot(place: .record, path: records.path, offset: range.lowerBound + random.below(range.count)))
        }
        func whole(_ path: String, _ place: Rot.Place) {
            guard let size = storage.contents(path)?.count, size > 0, storage.isDurable(path, through: size) else { return }
            places.append(Rot(place: place, path: path, offset: random.below(size)))
        }
        let segments = ((try? storage.entries(Self.logDirectory)) ?? []).compactMap { SegmentName.parse($0, suffix: ".seg") }
        for segment in segments.dropLast() {
            whole(shadow.path(segment), .sealed)
            whole(Self.logDirectory + "/" + SegmentName.hex(segment) + ".seg.seal", .seal)
        }
        let snapshots = Self.stateDirectory + "/snapshots"
        for name in ((try? storage.entries(snapshots)) ?? []) where name.hasSuffix(".snap") {
            whole(snapshots + "/" + name, .snapshot)
        }
        return places
    }

    /// Flips a durable bit that the next start must deal with.
    private func rot(_ place: Rot) {
        var rot = place
        rot.bit = random.below(8)
        storage.rot(rot.path, at: rot.offset, bit: rot.bit)
        rotted = rot
        oracle.count(rot.place == .record ? .bitRot : rot.place == .snapshot ? .bitRotSnapshot : .bitRotSealed)
        trace("byte \(rot.offset) of \(rot.path) (\(rot.place.rawValue)) rots")
    }

    /// SIGTERM: the turn ends, then the shell's shutdown (the core answers
    /// what runs, records the stop, a bounded wait for the log, the
    /// release), then Daemon.finishStop: the snapshots queued are written
    /// and recorded, the log closed.
    func cleanStop() {
        trace("SIGTERM")
        oracle.countCleanStop()
        daemon.signal(.stop)
        daemon.endTurn()
        // The sync thread runs on its own: it may sync (or fail) between the
        // loop's last turn and its shutdown.
        if random.chance(30) {
            if random.chance(20) { armSyncFault() }
            trace("sync thread")
            syncThread()
        }
        daemon.shutdown(sync: { if random.chance(30) { syncThread() } })
        if !daemon.core.isStopped { oracle.violation("S-32: the core is not stopped after its shutdown") }
        Daemon.finishStop(daemon.authenticator, log: opened.log, snapshots: opened.snapshots, inbox: inbox, anchors: nil,
                          now: daemon.clock.wall)
        shadow.catchUp()
        let durable = shadow.durableThrough()
        retire()
        // Now and then the administrator has the stopped daemon's log repaired (nothing to cut).
        if random.chance(10) { repair(because: "a routine check") }
        restart(durableBefore: durable)
    }

    /// Starts the daemon until it serves: after a refusal the administrator
    /// restores the byte or repairs, after a failure on the disk the
    /// service manager starts it again.
    func restart(durableBefore durable: UInt64) {
        for attempt in 0..<4 {
            switch open(durableBefore: durable) {
            case .opened(let opened, let queue):
                return serve(opened, queue: queue)
            case .judged:
                return
            case .failedOnDisk(let why):
                trace("the start failed on the disk (\(why.prefix(100)))")
                if storage.free < 64 << 10 { storage.capacity = storage.used + (256 << 10) }
            case .refused(let why):
                guard let rot = rotted, rot.refuses else {
                    for name in (try? storage.entries(Self.logDirectory)) ?? [] {
                        trace("  log/\(name): \(storage.describe(Self.logDirectory + "/" + name))")
                    }
                    return oracle.violation("S-41: the log the simulator wrote does not open: \(why)")
                }
                oracle.countRefusedStart()
                rotted = nil
                if attempt == 0, random.chance(60) {
                    trace("the start refuses (\(why.prefix(100))); the administrator restores the byte from a backup")
                    storage.rot(rot.path, at: rot.offset, bit: rot.bit)
                } else {
                    trace("the start refuses (\(why.prefix(100))); the administrator runs localauthctl repair")
                    repair(because: why)
                }
            }
        }
        oracle.violation("the daemon did not start in four attempts")
    }

    enum Opening {
        case opened(OpenedLog, SteppedSnapshotQueue)
        case failedOnDisk(String)
        case refused(String)
        /// Opened, and a violation was found.
        case judged
    }

    /// The daemon's boot with the simulator's ports, judged.
    func open(durableBefore durable: UInt64) -> Opening {
        boots += 1
        let boot = life
        let queue = SteppedSnapshotQueue()
        var ports = BootPorts()
        ports.storage = storage
        ports.sync = .stepped
        ports.snapshotQueue = queue
        nonisolated(unsafe) let run = self
        ports.logFailed = { _ in if run.life == boot, let daemon = run.daemon { daemon.logFailed() } }
        ports.journal = { entry in if run.life == boot { run.bootJournal.append(entry.message) } }
        ports.now = { run.daemon?.clock.wall ?? Self.startClock.wall }
        ports.bootID = { [boots] in "boot-\(boots)" }
        ports.pid = 1
        ports.daemonUID = 0
        let opened: OpenedLog
        do {
            opened = try Daemon.openAuthenticator(configuration, passcodes: passcodes, ports: ports, inbox: inbox, anchors: nil,
                                                  startChecks: (.failure(AnchorUnavailable("simulated")), false))
        } catch let error as LogError {
            if case .untrustworthy = error { return .refused("\(error)") }
            return .failedOnDisk("\(error)")
        } catch let error as Replay.Failure {
            return .refused("\(error)")
        } catch {
            return .failedOnDisk("\(error)")
        }
        if let rot = rotted, rot.refuses {
            oracle.violation("S-41: a flipped bit at byte \(rot.offset) of \(rot.path) (\(rot.place.rawValue)) was not refused")
            return .judged
        }
        rotted = nil
        return judge(opened, durableBefore: durable) ? .opened(opened, queue) : .judged
    }

    /// What a start kept, against the simulator's own reading of the files.
    private func judge(_ opened: OpenedLog, durableBefore durable: UInt64) -> Bool {
        let kept = opened.loaded.state.eventCount
        shadow.rewind(to: kept)
        if shadow.lastSeq != kept {
            oracle.violation("S-41: the start kept \(kept) records, the files hold \(shadow.lastSeq) readable ones "
                + "(\(shadow.problem ?? "no problem found"))")
            return false
        }
        if let repaired = repairedThrough {
            repairedThrough = nil
            // S-41: a repair lost records; what they did is assumed at its worst.
            for (uid, user) in opened.loaded.state.users.sorted(by: { $0.key < $1.key }) where !user.biometryLockedOut {
                oracle.violation("S-41: uid \(uid) is not locked out of biometry after the repair that cut after seq \(repaired)")
            }
        } else {
            if kept < durable {
                oracle.violation("lockout bypass: the start kept seq \(kept) but \(durable) was durable")
                return false
            }
            if kept < oracle.newestRevealedFailure {
                oracle.violation("lockout bypass: the failure at seq \(oracle.newestRevealedFailure) was revealed but is not in the log")
                return false
            }
        }
        if opened.log.recovery.tornTail != nil { oracle.countTornTail() }
        if opened.loaded.fromSnapshot != nil { oracle.countStartFromSnapshot() }
        // S-38, S-49: the state a start replayed is the fold of the records it kept.
        oracle.compare(live: opened.loaded.state, fold: shadow.state,
                       "the state the start replayed (snapshot \(opened.loaded.fromSnapshot.map(String.init) ?? "none"))")
        oracle.restarted()
        return oracle.violations.isEmpty
    }

    /// A started daemon: a fresh core over what the boot opened.
    private func serve(_ opened: OpenedLog, queue: SteppedSnapshotQueue) {
        self.opened = opened
        snapshotQueue = queue
        let clock = daemon?.clock ?? Self.startClock
        let core = ServerCore(configuration: configuration, authenticator: opened.authenticator, passcodes: passcodes,
                              version: "sim", daemonUID: 0)
        core.logHealth.canReopen = true
        // Context ids and domain-state tokens from the seed: one seed, one run.
        core.randomBytes = { [unowned self] count in (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
        core.service.canReload = true
        core.freeSpace = { [unowned self] _ in storage.free }
        daemon = SimulatedDaemon(core: core, passcodes: passcodes, clock: clock, oracle: oracle,
                                 below: { [unowned self] in random.below($0) })
        daemon.durableSeq = { [unowned self] in
            shadow.catchUp()
            return shadow.durableThrough()
        }
        daemon.writtenSeq = { [unowned self] in
            shadow.catchUp()
            return shadow.lastSeq
        }
        daemon.configuration = { [unowned self] in configuration }
        daemon.trace = { [unowned self] in trace($0) }
        daemon.reopen = { [unowned self] in try reopen() }
        daemon.watch(opened.authenticator)
        shadow.catchUp()
    }

    /// The core's `.reopenLog` after a failure: the process lived (its page
    /// cache too), so the old log is closed as Daemon.run's reopen does and
    /// the boot runs again on what the storage holds.
    private func reopen() throws -> Authenticator {
        trace("the core reopens the failed log")
        oracle.countReopen()
        opened.snapshots.finish()
        try? opened.log.close()
        life += 1
        shadow.catchUp()
        guard case .opened(let fresh, let queue) = open(durableBefore: shadow.durableThrough()) else {
            trace("the reopen failed")
            throw CannotReopen()
        }
        opened = fresh
        snapshotQueue = queue
        daemon.watch(fresh.authenticator)
        shadow.catchUp()
        return fresh.authenticator
    }

    /// `localauthctl repair` with the daemon stopped: EventLog.repair with
    /// localauthctl's records; the log verifies afterwards.
    func repair(because why: String, retry: Bool = true) {
        oracle.countRepair()
        let report: RepairReport
        do {
            report = try EventLog.repair(Self.stateDirectory, time: daemon.clock.wall, storage: storage, sync: .stepped) { lost, kept in
                RepairRecords.make(firstLostSeq: lost, kept: kept, storedPasscodeUsers: passcodes.users, by: 0)
            }
        } catch {
            // A fault armed before the stop struck the repair, or the disk
            // is full: the administrator makes room and runs it again.
            trace("  localauthctl repair failed: \(error); run again")
            if storage.free < 256 << 10 { storage.capacity = storage.used + (256 << 10) }
            guard retry else { return oracle.violation("localauthctl repair failed twice (after \(why.prefix(100))): \(error)") }
            return repair(because: why, retry: false)
        }
        trace("  \(report.message)")
        if let first = report.firstLostSeq {
            repairedThrough = first - 1
            oracle.repaired(keeping: first - 1)
            // What the shadow read after the cut is gone (its checkpoints too).
            shadow.rewind(to: first - 1)
        }
        do {
            let verified = try EventLog.verify(Self.stateDirectory, storage: storage)
            if !verified.isOK { oracle.violation("the log does not verify after a repair: \(verified)") }
        } catch {
            oracle.violation("localauthctl verify failed after a repair: \(error)")
        }
    }

    /// The log's sync thread takes its turn.
    func syncThread() { opened.log.syncStep() }

    /// The snapshot thread writes the snapshot waiting; the loop records it.
    func snapshotThread() {
        guard snapshotQueue.runNext() else { return }
        trace("the snapshot thread writes a snapshot")
        oracle.countSnapshotWrite()
        daemon.snapshotsWritten(inbox.drain())
    }

    // MARK: - Invariants after every step

    func check() {
        shadow.catchUp()
        // S-38 once everything recorded is on the file: appended records
        // wait for the turn's write, a run of checks for its record.
        guard daemon.recorder.failure == nil, daemon.recorder.lastSeq == shadow.lastSeq else { return }
        if let problem = shadow.problem { return oracle.violation("S-38: the log's file does not read back: \(problem)") }
        oracle.compare(live: daemon.authenticator.state, fold: shadow.state, "after the step")
        oracle.judgeScans(scanning: daemon.core.scanning, fold: shadow.state)
    }
}
