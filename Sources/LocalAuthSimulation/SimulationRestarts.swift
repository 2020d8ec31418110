// The daemon's lives in a run: a boot (recover the disk, record the start,
// reconcile the passcode store, make it durable, then a fresh ServerCore),
// a crash (the process and its page cache gone but for a random prefix of
// what was not synced; a durable byte may rot meanwhile), a clean stop
// (SIGTERM through the core) and the core's own reopen of a failed log
// (the core's `.reopenLog`, which the performer does here onto the simulated disk).
// Each recovery is checked: the log decodes, nothing durable or revealed was
// lost (no lockout bypass), a rotted byte is refused (S-41). After every
// step, S-38: the live state against the fold of the log's bytes.
import LocalAuthConfig
import LocalAuthCore
import LocalAuthLog
import LocalAuthServer

extension Simulation {
    func crash() {
        let unsynced = disk.file.count - disk.syncedLength
        let survive = unsynced == 0 ? 0 : random.below(unsynced + 1)
        trace("crash (\(survive) of \(unsynced) unsynced bytes survive)")
        oracle.count(.crash)
        let durable = disk.syncedSeq
        disk.crash(survive: survive)
        if random.chance(15), let offset = rotOffset() {
            let bit = random.below(8)
            disk.rot(at: offset, bit: bit)
            rotted = (offset, bit)
            oracle.count(.bitRot)
            trace("byte \(offset) rots")
        }
        restart(durableBefore: durable)
    }

    /// A byte of a durable record that an intact record follows (damage to
    /// the last record is a torn write by construction, FORMAT.md).
    private func rotOffset() -> Int? {
        let ends = disk.ends.filter { $0.end <= disk.syncedLength }
        guard ends.count >= 2 else { return nil }
        return random.below(ends[ends.count - 2].end)
    }

    /// SIGTERM: the turn ends, then the shell's shutdown (the core answers
    /// what runs, records the stop, a bounded wait for the log, the release).
    func cleanStop() {
        trace("SIGTERM")
        oracle.countCleanStop()
        daemon.signal(.stop)
        daemon.endTurn()
        // The sync thread runs on its own: it may sync (or fail) between the
        // loop's last turn and its shutdown.
        if random.chance(30) {
            if random.chance(20) {
                trace("armed: \(DiskFault.ioErrorOnSync.rawValue)")
                oracle.count(.ioErrorOnSync)
                disk.armedSyncFault = true
            }
            trace("sync thread")
            daemon.recorder.syncIfAsked()
        }
        daemon.shutdown(sync: { random.chance(30) })
        if !daemon.core.isStopped { oracle.violation("S-32: the core is not stopped after its shutdown") }
        restart(durableBefore: disk.syncedSeq)
    }

    func restart(durableBefore durable: UInt64) {
        for client in clients + [sensor] where client.connection != nil { client.disconnected(byDaemon: false, oracle: oracle) }
        guard let recovery = recover(durableBefore: durable) else { return }
        boot(state: recovery.state, lastSeq: recovery.lastSeq, clock: daemon.clock)
    }

    /// The log as the daemon's open finds it, checked; nil after a violation.
    private func recover(durableBefore durable: UInt64) -> DiskRecovery? {
        var recovery = DiskRecovery(disk.file)
        if let rot = rotted {
            rotted = nil
            if recovery.corruption == nil {
                oracle.violation("S-41: a flipped bit at byte \(rot.offset) of a durable record was not refused "
                    + "(recovery kept \(recovery.lastSeq) records, cut \(recovery.tornBytes) bytes)")
                return nil
            }
            // The daemon refused to start; the administrator restores the byte.
            disk.rot(at: rot.offset, bit: rot.bit)
            recovery = DiskRecovery(disk.file)
        }
        if let corruption = recovery.corruption {
            oracle.violation("S-41: the log the simulator wrote does not recover: \(corruption)")
            return nil
        }
        if recovery.lastSeq < durable {
            oracle.violation("lockout bypass: recovery kept seq \(recovery.lastSeq) but \(durable) was durable")
            return nil
        }
        if recovery.lastSeq < oracle.newestRevealedFailure {
            oracle.violation("lockout bypass: the failure at seq \(oracle.newestRevealedFailure) was revealed but is not in the log")
            return nil
        }
        if recovery.tornBytes > 0 { oracle.countTornTail() }
        disk.recovered(length: recovery.length, records: recovery.records)
        return recovery
    }

    /// What Daemon.openAuthenticator does between "log open" and "ready":
    /// the start (S-15), the passcode store reconciled, all of it durable.
    /// Nil when the disk failed meanwhile (the start fails).
    private func start(_ state: AuthState, lastSeq: UInt64, now: Int64,
                       before: (Authenticator, Int64) -> Void = { _, _ in }) -> Authenticator? {
        boots += 1
        let recorder = SimulatedRecorder(disk: disk, lastSeq: lastSeq)
        let authenticator = Authenticator(state: state, recorder: recorder)
        _ = authenticator.execute(.start(version: "sim", bootID: "boot-\(boots)", pid: 1, rules: configuration.rules), now: now)
        before(authenticator, now)
        try? Daemon.reconcile(passcodes, authenticator, now: now)
        recorder.flush(durableThrough: recorder.lastSeq)
        recorder.syncIfAsked()
        return recorder.failure == nil ? authenticator : nil
    }

    func boot(state: AuthState, lastSeq: UInt64, clock: SimulatedClock,
              before: (Authenticator, Int64) -> Void = { _, _ in }) {
        guard let authenticator = start(state, lastSeq: lastSeq, now: clock.wall, before: before) else {
            // The start failed on the disk: the service manager starts it
            // again (after the administrator made room, if it was full).
            trace("the start failed on the disk")
            if disk.free < 64 << 10 { disk.capacity = disk.file.count + (256 << 10) }
            oracle.restarted()
            guard let recovery = recover(durableBefore: disk.syncedSeq) else { return }
            return boot(state: recovery.state, lastSeq: recovery.lastSeq, clock: clock)
        }
        oracle.restarted()
        shadow = state
        shadowOffset = 0
        let core = ServerCore(configuration: configuration, authenticator: authenticator, passcodes: passcodes,
                              version: "sim", daemonUID: 0)
        core.logHealth.canReopen = true
        // Context ids and domain-state tokens from the seed: one seed, one run.
        core.randomBytes = { [unowned self] count in (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
        core.service.canReload = true
        core.freeSpace = { [unowned self] _ in disk.free }
        daemon = SimulatedDaemon(core: core, disk: disk, passcodes: passcodes, clock: clock, oracle: oracle,
                                 below: { [unowned self] in random.below($0) })
        daemon.configuration = { [unowned self] in configuration }
        daemon.trace = { [unowned self] in trace($0) }
        daemon.watch(daemon.recorder)
        daemon.reopen = { [unowned self] in try reopen() }
    }

    struct ReopenFailed: Error {}

    /// The core's retry of a failed log: what is on the disk (the process
    /// lived: its page cache too) is recovered and a start recorded, as a
    /// restart would; the connections stay.
    private func reopen() throws -> Authenticator {
        trace("the core reopens the failed log")
        oracle.countReopen()
        guard let recovery = recover(durableBefore: disk.syncedSeq) else { throw ReopenFailed() }
        guard let authenticator = start(recovery.state, lastSeq: recovery.lastSeq, now: daemon.clock.wall) else {
            trace("the reopen failed on the disk")
            throw ReopenFailed()
        }
        oracle.restarted()
        shadow = recovery.state
        shadowOffset = 0
        let recorder = authenticator.recorder as! SimulatedRecorder
        daemon.watch(recorder)
        // The start it recorded, folded as the S-38 check will.
        catchUpShadow(recorder)
        return authenticator
    }

    // MARK: - Invariants after every step

    func check() {
        catchUpShadow()
        // Checks of an open run (kind 33) are folded live and reach the
        // bytes when the run is appended (at the latest by the turn's flush).
        if daemon.recorder.hasOpenRun { return }
        oracle.compare(live: daemon.authenticator.state, fold: shadow, "after the step")
        if daemon.recorder.failure == nil { oracle.judgeScans(scanning: daemon.core.scanning, fold: shadow) }
    }

    /// Folds the records appended since the last look, decoded from their
    /// bytes; S-46 is judged on each passcode verdict as it is folded.
    func catchUpShadow(_ recorder: SimulatedRecorder? = nil) {
        let recorder = recorder ?? daemon.recorder
        recorder.appended.withUnsafeBytes { raw in
            while shadowOffset < raw.count {
                guard case .record(let seq, let time, let keys, let payload, let end) = RecordFraming.check(
                    raw, at: shadowOffset, expectedSeq: shadow.eventCount + 1, zerosEnd: false) else {
                    return oracle.violation("S-38: the record after seq \(shadow.eventCount) does not decode")
                }
                guard let body = try? EventCodec.decode(kind: keys.type, payload: UnsafeRawBufferPointer(rebasing: raw[payload])) else {
                    return oracle.violation("S-38: the payload of seq \(shadow.eventCount + 1) does not decode")
                }
                oracle.recorded(Event(time: time, body), seq: seq, before: shadow)
                shadow.apply(Event(time: time, body))
                shadowOffset = end
            }
        }
    }
}
