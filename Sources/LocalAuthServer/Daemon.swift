// localauthd's run(): a checklist, in order. Parse flags, load the
// configuration, open and replay the log, bind (or receive) the socket,
// notify READY, serve, notify STOPPING, flush.
import Glibc
import LocalAuthConfig
import LocalAuthCore
import LocalAuthLog
import LocalAuthSystem

public enum Daemon {
    public static let version = LocalAuthVersion.string

    public static func main(_ arguments: [String]) -> Int32 {
        let options: DaemonOptions
        do {
            options = try DaemonOptions.parse(arguments)
        } catch {
            fail("\(error)\nTry 'localauthd --help'.")
            return 2
        }
        if options.showHelp {
            print(DaemonOptions.usage)
            return 0
        }
        if options.showVersion {
            print("localauthd \(version)")
            return 0
        }
        if options.testConfig { return testConfiguration(options) }
        do {
            try run(options)
            return 0
        } catch {
            fail("\(error)")
            _ = try? Systemd.notify("STATUS=Failed: \(error)\nERRNO=5")
            return 1
        }
    }

    static func fail(_ message: String) {
        _ = try? FileDescriptor.standardError.writeAll(Array("localauthd: \(message)\n".utf8))
    }

    /// The files the daemon reads, in order, with their contents: `--config`
    /// alone, else the main file and the drop-ins (ConfigurationFiles). A
    /// missing file is fine; one that exists and cannot be read is an error.
    static func configurationFiles(_ options: DaemonOptions) throws -> [(fileName: String, contents: String)] {
        let paths: [String]
        if let path = options.configFile {
            guard File.exists(path) else { throw OptionError("configuration file \(path) does not exist") }
            paths = [path]
        } else {
            paths = ConfigurationFiles.paths { directory in
                File.exists(directory) ? ((try? Directory.entries(directory)) ?? []) : nil
            }
        }
        var files: [(fileName: String, contents: String)] = []
        for path in paths where File.exists(path) {
            files.append((path, String(decoding: try File.read(path, maxSize: 1 << 20), as: UTF8.self)))
        }
        return files
    }

    /// Reads the configuration files and applies the flags.
    static func loadConfiguration(_ options: DaemonOptions) throws -> DaemonConfiguration {
        var configuration = try ConfigurationParser.parse(try configurationFiles(options))
        try options.apply(to: &configuration)
        return configuration
    }

    /// `--test-config` (like `sshd -t`): the effective configuration on
    /// stdout, every problem with its file and line on stderr; 1 when there
    /// is any (the daemon would refuse to start), else 0. Starts nothing.
    static func testConfiguration(_ options: DaemonOptions) -> Int32 {
        let files: [(fileName: String, contents: String)]
        do { files = try configurationFiles(options) } catch {
            fail("\(error)")
            return 1
        }
        var check = ConfigurationParser.check(files)
        var problems = check.problems.map(\.description)
        do { try options.apply(to: &check.configuration) } catch { problems.append("\(error)") }
        print("# localauthd \(version): the effective configuration (files: "
              + (files.isEmpty ? "none, the defaults" : files.map(\.fileName).joined(separator: " ")) + ")")
        print(check.text(overrides: options.overriddenKeys), terminator: "")
        for problem in problems { fail(problem) }
        if !problems.isEmpty { fail("configuration has \(problems.count) error(s): the daemon would not start") }
        return problems.isEmpty ? 0 : 1
    }

    static func run(_ options: DaemonOptions) throws {
        var configuration = try loadConfiguration(options)
        // Signals go to a signalfd; block them before any thread starts.
        Signals.ignoreBrokenPipe()
        // A shell without job control starts background commands with SIGINT
        // ignored, and an ignored signal never reaches a signalfd: restore the
        // defaults (the signals are blocked next, so they cannot kill us).
        Signals.restoreDefaults([SIGTERM, SIGINT, SIGHUP])
        // SIGUSR2 is the test hook (DaemonLog.testHangSeconds); ignored otherwise.
        let signals = try SignalFD(signals: [SIGTERM, SIGINT, SIGHUP, SIGUSR2])
        ProcessSettings.setFileCreationMask(0o077)
        // S-50: no core file, no same-uid ptrace, ever holds a passcode.
        try SecretMemory.forbidCoreDumps()
        // Every connection is a file descriptor: MaxConnections must be reachable.
        ProcessSettings.raiseOpenFileLimit(to: configuration.daemon.maxConnections + 256)

        // The socket first: a second daemon started on a live socket stops
        // here, before it touches a state directory or records anything.
        // Clients that connect during the replay wait in the backlog.
        let socketPath = configuration.daemon.socket
        let (listener, socketFile) = try socket(configuration)
        defer { socketFile?.remove(socketPath) }

        let stateDirectory = configuration.daemon.stateDirectory
        try Directory.create(stateDirectory, mode: 0o700)
        let lock = try lockStateDirectory(stateDirectory)
        defer { try? lock.close() }
        // AuditGroup= and AdminGroup= may read the log: before it is opened,
        // so that the files it creates inherit the grant.
        LogReadAccess.applyAtStart(configuration.daemon, stateDirectory: stateDirectory)
        let durabilityWake = try EventFD()
        let snapshotInbox = try SnapshotInbox()
        let passcodes: PasscodeStore = configuration.passcode.backend == .shadow
            ? try ShadowPasscodes(path: configuration.passcode.shadowFile)
            : try BuiltinPasscodes(directory: stateDirectory)
        // S-49: the journal (or the test stand-in) holds the log's anchors.
        let anchors = Anchors.current(uid: Accounts.currentUID())
        let anchorStore = try? anchors.get()
        let opened = try openAuthenticator(configuration, passcodes: passcodes, wake: durabilityWake, inbox: snapshotInbox,
                                           anchors: anchorStore, startChecks: (anchors, options.acceptLogRollback))

        let server = ServerCore(configuration: configuration, authenticator: opened.authenticator, passcodes: passcodes,
                                version: version, daemonUID: Accounts.currentUID())
        let loop = try EventLoop(core: server, passcodeStore: passcodes, listener: listener, signals: signals, durabilityWake: durabilityWake,
                                 snapshotInbox: snapshotInbox)
        // LARight's store and key (RightStore.swift, SecretKey.swift): a
        // damaged store or an unusable key stops the start, naming the file.
        server.rights.store = try RightStore.open(directory: stateDirectory)
        // Socket-activated: the socket starts the daemon again after an exit on idle (S-83).
        server.exitsWhenIdle = socketFile == nil
        let secretKey = try SecretKey.load(configuration.secrets, stateDirectory: stateDirectory)
        server.rights.secretKey = secretKey.bytes
        // The login secret's store (S-74..S-77), under a key derived from the same.
        server.openLoginSecrets(stateDirectory: stateDirectory)
        DaemonLog.info("LARight's secrets are sealed with the key from \(secretKey.source).")
        loop.lookUpRightAccounts()
        var log = opened.log
        var snapshots = opened.snapshots
        loop.reload = {
            let fresh = try loadConfiguration(options)
            configuration = fresh
            return fresh
        }
        // After a write failure (disk full, EIO) the daemon refuses to act;
        // this reopens the log from disk (recovery cuts what was never
        // acknowledged) and starts over, as a restart would.
        loop.reopen = {
            snapshots.finish()
            try? log.close()
            let again = try openAuthenticator(configuration, passcodes: passcodes, wake: durabilityWake, inbox: snapshotInbox,
                                              anchors: anchorStore, startChecks: nil)
            log = again.log
            snapshots = again.snapshots
            return again.authenticator
        }
        let from = opened.loaded.fromSnapshot.map { "snapshot \($0) + " } ?? ""
        let listening = socketFile == nil ? (UnixSocket.boundPath(listener).map { "\($0) (from systemd)" } ?? "the socket systemd passed") : socketPath
        DaemonLog.notice("Started: \(from)\(opened.loaded.replayed) events replayed, listening on \(listening).",
                         id: .started, fields: [("LOCALAUTH_SEQ", String(opened.authenticator.recorder.lastSeq))])
        DaemonLog.warnAboutConfiguration(configuration)
        _ = try? Systemd.notify("READY=1\nSTATUS=\(server.statusLine)\nMAINPID=\(getpid())")
        let coveredCheck = CoveredSegmentsCheck.start(opened.log, opened.covered, done: { try? durabilityWake.post() })
        defer { coveredCheck?.stop() }
        server.coveredSegmentsPending = coveredCheck != nil
        loop.coveredCheck = coveredCheck
        try loop.run()
        coveredCheck?.stop()
        snapshots.finish()
        recordSnapshotsWrittenDuringStop(server, snapshotInbox, log)
        StartAnchoring.record(log, anchors: anchorStore, event: "stop")
        try? log.close()
        // The refusal of a start (S-41), after the clean stop: exit status 1, the commands to run.
        if let failure = coveredCheck?.outcome.failure { throw failure }
    }

    /// A snapshot the queue finished after the loop's last turn is recorded
    /// now, after `daemon-stopped`, so that the next start can use it (S-49:
    /// an unrecorded snapshot is passed over). Nothing folded now may ask for
    /// another snapshot: the queue is done.
    static func recordSnapshotsWrittenDuringStop(_ server: ServerCore, _ inbox: SnapshotInbox, _ log: EventLog) {
        let written = inbox.drain()
        guard !written.isEmpty, server.authenticator.recorder.failure == nil else { return }
        server.authenticator.observe = { _, _ in }
        let now = WallClock.nowMicros()
        for snapshot in written {
            _ = server.authenticator.execute(.recordSnapshot(seq: snapshot.seq, sha256: snapshot.digest.hex), now: now)
        }
        server.authenticator.flush()
        try? log.waitDurable(log.lastSeq)
    }

    /// Opens and replays the log, records the start (S-15) and reconciles the
    /// passcode store: everything between "state directory locked" and "ready".
    /// `startChecks`: at a start (not a reopen after a write failure), the
    /// anchor store and `--accept-log-rollback` for `StartAnchoring`.
    static func openAuthenticator(
        _ configuration: DaemonConfiguration, passcodes: PasscodeBackend, wake: EventFD, inbox: SnapshotInbox,
        anchors: AnchorStore?, startChecks: (anchors: Result<AnchorStore, AnchorUnavailable>, accept: Bool)?
    ) throws -> (authenticator: Authenticator, log: EventLog, loaded: Replay.Outcome, snapshots: SnapshotWriter,
                 covered: [DeferredSegment]) {
        let stateDirectory = configuration.daemon.stateDirectory
        let failure = FailureFlag()
        let log: EventLog
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
                // S-49: at a start (not a reopen), what the snapshot covers is
                // hashed after READY (CoveredSegmentsCheck).
                deferCoveredSegments: startChecks != nil,
                onDurable: { _ in try? wake.post() },
                onFailure: { writeFailure in
                    failure.set("\(writeFailure)")
                    try? wake.post()
                }))
        } catch {
            DaemonLog.error("The event log cannot be trusted: \(error)", id: .corruptionFound)
            throw error
        }
        if let torn = log.recovery.tornTail {
            DaemonLog.notice("Cut a torn record at the end of the log (\(torn)); a copy is in \(log.recovery.brokenCopy ?? "-").")
        }
        var acceptance: Command?
        if let startChecks {
            do {
                acceptance = try StartAnchoring.check(log, anchors: startChecks.anchors, passcodes: passcodes,
                                                      accept: startChecks.accept)
            } catch {
                DaemonLog.error("\(error)", id: .corruptionFound)
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
            DaemonLog.error("The event log cannot be trusted: \(error)", id: .corruptionFound)
            try? log.close()
            throw error
        }
        // The state rests on the snapshot the fold trusted and the records
        // after it: segments the open left unhashed that it does not wholly
        // cover (the newest snapshot file was skipped) are checked now.
        let covered = log.deferredSegments(coveredThrough: loaded.fromSnapshot ?? 0)
        if let error = log.checkDeferred(covered.uncovered) {
            DaemonLog.error("The event log cannot be trusted: \(error)", id: .corruptionFound)
            try? log.close()
            throw error
        }
        for skipped in loaded.skippedSnapshots { DaemonLog.notice("Skipped a snapshot: \(skipped)") }
        if let torn = loaded.tornTail {
            // Open cuts torn tails; one seen now means the log changed under us.
            try? log.close()
            throw StoreError("the event log ends in an unfinished write after open (\(torn)); refusing to start")
        }
        let recorder = LogRecorder(log: log, failure: failure, snapshotEvery: UInt64(configuration.log.snapshotEvery))
        let authenticator = Authenticator(state: loaded.state, recorder: recorder)
        DaemonLog.reportRepair(log, lastSeq: recorder.lastSeq)
        let bootID = (try? Systemd.bootID()) ?? ""
        let now = WallClock.nowMicros()
        _ = authenticator.execute(.start(version: version, bootID: bootID, pid: getpid(), rules: configuration.rules), now: now)
        if let acceptance { _ = authenticator.execute(acceptance, now: now) }
        try reconcile(passcodes, authenticator, now: now)
        // The start (S-15) and its rules are durable before READY=1.
        try? log.waitDurable(recorder.lastSeq)
        if let problem = recorder.failure { throw StoreError("the event log cannot record events: \(problem)") }
        if startChecks != nil { StartAnchoring.record(log, anchors: anchors, event: "start") }
        let snapshotEvery = UInt64(configuration.log.snapshotEvery)
        let snapshots = SnapshotWriter(log: log, reserve: configuration.log.reserveSpace, directory: stateDirectory,
                                       inbox: inbox, anchors: anchors)
        authenticator.observe = { seq, state in
            if seq % snapshotEvery == 0 { snapshots.write(StateCodec.encode(state), seq: seq) }
        }
        return (authenticator, log, loaded, snapshots, covered.covered)
    }

    /// The passcode store is written before its event; after a crash between
    /// the two, the store wins and the event is recorded now.
    package static func reconcile(_ passcodes: PasscodeBackend, _ authenticator: Authenticator, now: Int64) throws {
        let daemonUID = Accounts.currentUID()
        var uids = Set(passcodes.users)
        for (uid, user) in authenticator.state.users where user.passcodeSet { uids.insert(uid) }
        for uid in uids.sorted() {
            let stored = passcodes.isSet(uid)
            if stored != authenticator.state.user(uid).passcodeSet {
                _ = authenticator.execute(.changePasscode(uid: uid, set: stored, by: daemonUID), now: now)
            }
        }
    }

    /// One daemon per state directory: an exclusive flock on `<dir>/lock`,
    /// held for the life of the process (and checked by `localauthctl repair`).
    static func lockStateDirectory(_ directory: String) throws -> FileDescriptor {
        let fd = try FileDescriptor.open(directory + "/lock", .readWrite, options: [.create], permissions: 0o600)
        let locked: Bool
        do { locked = try FileLock.tryExclusive(fd, path: directory + "/lock") } catch {
            try? fd.close()
            throw error
        }
        guard locked else {
            try? fd.close()
            throw StoreError("another localauthd is using \(directory) (its lock file is held)")
        }
        return fd
    }

    /// The listening socket: systemd's (socket activation), else one bound
    /// at the configured path, with the file to remove at a clean exit.
    static func socket(_ configuration: DaemonConfiguration) throws -> (FileDescriptor, UnixSocket.BoundFile?) {
        if let passed = try Systemd.listenFDs().first {
            let fd = FileDescriptor(rawValue: passed.fd)
            try fd.setNonBlocking()
            return (fd, nil)
        }
        let path = configuration.daemon.socket
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            try Directory.create(String(path[..<slash]), mode: 0o755)
        }
        do {
            let fd = try UnixSocket.listen(path: path, mode: 0o666)
            return (fd, UnixSocket.BoundFile(path: path))
        } catch where error.errno == EADDRINUSE {
            throw inUse(path)
        }
    }

    private static func inUse(_ path: String) -> StoreError {
        StoreError("\(path) is in use: another process (a running localauthd?) accepts connections on it; stop it or choose another socket (--socket, Socket=)")
    }

}
