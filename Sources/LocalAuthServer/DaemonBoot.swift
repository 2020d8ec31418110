// The daemon's boot, between "state directory locked" and READY, as a
// function of its ports: open and recover the log, check it against its
// anchor (S-49), fold it from the newest trusted snapshot (S-38), record
// the start (S-15), reconcile the passcode store, make all of it durable.
// `Daemon.run` calls it with the kernel's ports, the core's reopen of a
// failed log calls it again, and the deterministic simulator calls it with
// its own: an in-memory file system with faults, a sync thread it steps, a
// snapshot queue it steps, its clock and its journal
// (docs/decisions/0018-log-storage-port.md).
import Glibc
import LocalAuthConfig
import LocalAuthCore
import LocalAuthLog
import LocalAuthSystem

/// What the boot needs from outside.
package struct BootPorts {
    /// The state directory's file system.
    package var storage: any Storage = DiskStorage.shared
    /// Who runs the log's sync work.
    package var sync: SyncDriver = .threads
    /// Where snapshots are written, off the loop.
    package var snapshotQueue: SnapshotQueue = DispatchSnapshotQueue()
    /// Wakes the loop: more became durable, or the log failed.
    package var wake: @Sendable () -> Void = {}
    /// Told when the log fails, with why (before the loop hears of it).
    package var logFailed: @Sendable (String) -> Void = { _ in }
    package var journal: @Sendable (JournalEntry) -> Void = { DaemonLog.write($0.priority, $0.message, id: $0.id, fields: $0.fields) }
    /// Wall-clock µs.
    package var now: @Sendable () -> Int64 = { WallClock.nowMicros() }
    package var bootID: () -> String = { (try? Systemd.bootID()) ?? "" }
    package var pid: Int32 = getpid()
    package var daemonUID: UInt32 = Accounts.currentUID()
    /// Whether a start leaves the records of the sealed segments that its
    /// snapshot wholly covers to `OpenedLog.covered`, checked after READY
    /// (S-49, CoveredSegmentsCheck.swift): the daemon. Otherwise (the
    /// simulator, a reopen) every segment is checked before the boot returns.
    package var checksCoveredSegmentsLater = false

    package init() {}
}

/// What the boot opened.
package struct OpenedLog {
    package var authenticator: Authenticator
    package var log: EventLog
    package var loaded: Replay.Outcome
    package var snapshots: SnapshotWriter
    /// Sealed segments the trusted snapshot wholly covers, whose records
    /// are not checked yet (`BootPorts.checksCoveredSegmentsLater`).
    package var covered: [DeferredSegment] = []
}

extension Daemon {
    /// Opens and replays the log, records the start (S-15) and reconciles the
    /// passcode store: everything between "state directory locked" and "ready".
    /// `startChecks`: at a start (not a reopen after a write failure), the
    /// anchor store and `--accept-log-rollback` for `StartAnchoring`.
    package static func openAuthenticator(
        _ configuration: DaemonConfiguration, passcodes: PasscodeBackend, ports: BootPorts, inbox: SnapshotInbox,
        anchors: AnchorStore?, startChecks: (anchors: Result<AnchorStore, AnchorUnavailable>, accept: Bool)?
    ) throws -> OpenedLog {
        let stateDirectory = configuration.daemon.stateDirectory
        let failure = FailureFlag()
        let journal = ports.journal
        let log: EventLog
        let wake = ports.wake, logFailed = ports.logFailed
        do {
            log = try EventLog.open(stateDirectory, options: EventLog.Options(
                segmentSize: configuration.log.segmentSize,
                // Sealed segments are checked by their seals (FORMAT.md "Seals"): fast start, same refusals (S-41).
                verification: .sealed,
                // The loop writes each turn's events before its replies and
                // asks for fdatasync where S-40 needs it (EventLoop.run, ServerCore.timerFired).
                syncPolicy: .onDemand,
                // Records overwrite zeros already in the file: an fdatasync
                // then needs no journal commit for a new size (FORMAT.md).
                // 256 KiB steps: bigger ones pause the loop visibly (p99).
                preallocation: max(4096, min(256 << 10, configuration.log.segmentSize / 8)),
                // Nothing in the daemon reads history; `localauthctl log` indexes on its own open.
                indexesAppends: false,
                // Snapshots are written off the loop, after later records: the writer keeps their chain heads.
                chainMarkEvery: UInt64(configuration.log.snapshotEvery),
                // S-49: what the snapshot covers is hashed after READY (CoveredSegmentsCheck).
                deferCoveredSegments: ports.checksCoveredSegmentsLater && startChecks != nil,
                onDurable: { _ in wake() },
                onFailure: { writeFailure in
                    failure.set("\(writeFailure)")
                    logFailed("\(writeFailure)")
                    wake()
                },
                storage: ports.storage, sync: ports.sync))
        } catch {
            journal(JournalEntry(.error, "The event log cannot be trusted: \(error)", id: .corruptionFound))
            throw error
        }
        if let torn = log.recovery.tornTail {
            journal(JournalEntry(.notice,
                "Cut a torn record at the end of the log (\(torn)); a copy is in \(log.recovery.brokenCopy ?? "-")."))
        }
        var acceptance: Command?
        if let startChecks {
            do {
                acceptance = try StartAnchoring.check(log, anchors: startChecks.anchors, passcodes: passcodes,
                                                      accept: startChecks.accept, journal: journal)
            } catch {
                journal(JournalEntry(.error, "\(error)", id: .corruptionFound))
                try? log.close()
                throw error
            }
        }
        let loaded: Replay.Outcome
        do {
            // Strict: a snapshot newer than the log, or one that differs from
            // its recorded digest, stops the start (S-49).
            loaded = try Replay.fold(log, strict: true)
        } catch {
            journal(JournalEntry(.error, "The event log cannot be trusted: \(error)", id: .corruptionFound))
            try? log.close()
            throw error
        }
        // The state rests on the snapshot the fold trusted and the records
        // after it: segments the open left unhashed that it does not wholly
        // cover (the newest snapshot file was skipped) are checked now.
        let covered = log.deferredSegments(coveredThrough: loaded.fromSnapshot ?? 0)
        if let error = log.checkDeferred(covered.uncovered) {
            journal(JournalEntry(.error, "The event log cannot be trusted: \(error)", id: .corruptionFound))
            try? log.close()
            throw error
        }
        for skipped in loaded.skippedSnapshots { journal(JournalEntry(.notice, "Skipped a snapshot: \(skipped)")) }
        if let torn = loaded.tornTail {
            // Open cuts torn tails; one seen now means the log changed under us.
            try? log.close()
            throw StoreError("the event log ends in an unfinished write after open (\(torn)); refusing to start")
        }
        let recorder = LogRecorder(log: log, failure: failure, snapshotEvery: UInt64(configuration.log.snapshotEvery))
        let authenticator = Authenticator(state: loaded.state, recorder: recorder)
        if let repaired = DaemonLog.repairReport(log, lastSeq: recorder.lastSeq) { journal(repaired) }
        let now = ports.now()
        _ = authenticator.execute(.start(version: version, bootID: ports.bootID(), pid: ports.pid, rules: configuration.rules),
                                  now: now)
        if let acceptance { _ = authenticator.execute(acceptance, now: now) }
        try reconcile(passcodes, authenticator, now: now, daemonUID: ports.daemonUID)
        // The start (S-15) and its rules are durable before READY=1.
        try? log.waitDurable(recorder.lastSeq)
        if let problem = recorder.failure {
            try? log.close()
            throw StoreError("the event log cannot record events: \(problem)")
        }
        if startChecks != nil { StartAnchoring.record(log, anchors: anchors, event: "start") }
        let snapshotEvery = UInt64(configuration.log.snapshotEvery)
        let snapshots = SnapshotWriter(log: log, reserve: configuration.log.reserveSpace, directory: stateDirectory,
                                       inbox: inbox, anchors: anchors, queue: ports.snapshotQueue, now: ports.now,
                                       journal: journal)
        authenticator.observe = { seq, state in
            if seq % snapshotEvery == 0 { snapshots.write(StateCodec.encode(state), seq: seq) }
        }
        return OpenedLog(authenticator: authenticator, log: log, loaded: loaded, snapshots: snapshots, covered: covered.covered)
    }

    /// The passcode store is written before its event; after a crash between
    /// the two, the store wins and the event is recorded now.
    package static func reconcile(_ passcodes: PasscodeBackend, _ authenticator: Authenticator, now: Int64,
                                  daemonUID: UInt32) throws {
        var uids = Set(passcodes.users)
        for (uid, user) in authenticator.state.users where user.passcodeSet { uids.insert(uid) }
        for uid in uids.sorted() {
            let stored = passcodes.isSet(uid)
            if stored != authenticator.state.user(uid).passcodeSet {
                _ = authenticator.execute(.changePasscode(uid: uid, set: stored, by: daemonUID), now: now)
            }
        }
    }
}
