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
        var ports = BootPorts()
        ports.wake = { try? durabilityWake.post() }
        // S-49: segments the snapshot covers are hashed after READY.
        ports.checksCoveredSegmentsLater = true
        let opened = try openAuthenticator(configuration, passcodes: passcodes, ports: ports, inbox: snapshotInbox,
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
            let again = try openAuthenticator(configuration, passcodes: passcodes, ports: ports, inbox: snapshotInbox,
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
        let coveredCheck = CoveredSegmentsCheck.start(opened.log, opened.covered, done: ports.wake)
        defer { coveredCheck?.stop() }
        server.coveredSegmentsPending = coveredCheck != nil
        loop.coveredCheck = coveredCheck
        try loop.run()
        coveredCheck?.stop()
        finishStop(server.authenticator, log: log, snapshots: snapshots, inbox: snapshotInbox, anchors: anchorStore,
                   now: WallClock.nowMicros())
        // The refusal of a start (S-41), after the clean stop: exit status 1, the commands to run.
        if let failure = coveredCheck?.outcome.failure { throw failure }
    }

    /// After the loop's last turn (and before a reopen, with no anchor):
    /// the snapshots handed over are written and recorded, the head
    /// anchored, the log closed.
    package static func finishStop(_ authenticator: Authenticator, log: EventLog, snapshots: SnapshotWriter,
                                   inbox: SnapshotInbox, anchors: AnchorStore?, now: Int64) {
        snapshots.finish()
        recordSnapshotsWrittenDuringStop(authenticator, inbox, log, now: now)
        StartAnchoring.record(log, anchors: anchors, event: "stop")
        try? log.close()
    }

    /// A snapshot the queue finished after the loop's last turn is recorded
    /// now, after `daemon-stopped`, so that the next start can use it (S-49:
    /// an unrecorded snapshot is passed over). Nothing folded now may ask for
    /// another snapshot: the queue is done.
    static func recordSnapshotsWrittenDuringStop(_ authenticator: Authenticator, _ inbox: SnapshotInbox, _ log: EventLog,
                                                 now: Int64) {
        let written = inbox.drain()
        guard !written.isEmpty, authenticator.recorder.failure == nil else { return }
        authenticator.observe = { _, _ in }
        for snapshot in written {
            _ = authenticator.execute(.recordSnapshot(seq: snapshot.seq, sha256: snapshot.digest.hex), now: now)
        }
        authenticator.flush()
        try? log.waitDurable(log.lastSeq)
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
