// localauthctl repair: Cut the log after the last trustworthy record (daemon stopped; keeps a copy).
import LocalAuthCore
import LocalAuthLog
import LocalAuthSystem

struct RepairCommand: Command {
    static let name = "repair"
    static let summary = "Cut the log after the last trustworthy record (daemon stopped; keeps a copy)"
    static let details = """
        Refuses while localauthd runs on DIR (it holds DIR/lock) or answers on its
        socket. Keeps a copy of everything it
        cuts in DIR/repair-<time>/, then appends a log-repaired event, which leaves
        every user locked out of biometry until a passcode success (S-41).
        Run by root on a DIR another user owns (the daemon's), it works as
        that user.
        """
    static let isLive = false
    static let options = [StateDirectoryOption.spec, SocketOption.spec]

    var explicitDirectory: String?
    var explicitSocket: String?
    var socket: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requireNoPositionals()
        explicitDirectory = arguments.value(StateDirectoryOption.spec.key)
        explicitSocket = arguments.value(SocketOption.spec.key)
        socket = SocketOption.path(arguments)
    }

    func run() throws(CommandFailure) -> Int32 {
        let directory = try StateDirectoryOption.directory(explicitDirectory)
        _ = try StateDirectoryOption.logDirectory(directory)
        var sockets = [socket]
        if explicitSocket == nil, let configured = try? InstalledConfiguration.load().daemon.socket, configured != socket {
            sockets.append(configured)
        }
        for path in sockets where Self.daemonAnswers(path) {
            throw CommandFailure("localauthd is running (it answers on \(path)); stop it first (systemctl stop localauthd)")
        }
        // Recorded as who repaired: the caller, before any change of user.
        let by = Accounts.currentUID()
        // Root repairing a directory another user owns does it as that user
        // (issue 27 item 2): every file it makes is theirs without a chown
        // walk, and nothing they place here can turn root's calls onto
        // root's files.
        do throws(SystemError) { _ = try ProcessSettings.becomeOwner(of: directory) } catch {
            throw CommandFailure("Failed to act as the owner of \(directory): \(error)")
        }
        // The daemon holds an exclusive flock on <dir>/lock while it runs.
        let lock: FileDescriptor
        do throws(SystemError) {
            lock = try FileDescriptor.open(directory + "/lock", .readWrite, options: [.create], permissions: 0o600)
        } catch {
            throw CommandFailure("Failed to open \(directory)/lock, which tells whether localauthd runs: \(error)")
        }
        defer { try? lock.close() }
        if (try? FileLock.tryExclusive(lock)) != true {
            throw CommandFailure("localauthd is running on \(directory) (it holds \(directory)/lock); stop it first")
        }
        let report: RepairReport
        do throws(LogError) {
            report = try EventLog.repair(directory, time: WallClock.nowMicros()) { firstLostSeq, kept in
                RepairRecords.make(firstLostSeq: firstLostSeq, kept: kept,
                                   storedPasscodeUsers: Self.storedPasscodeUsers(directory), by: by)
            }
        } catch {
            throw CommandFailure(error.description)
        }
        Console.out(report.message)
        if report.repaired, let kept = report.keptIn, report.problem == nil { Console.out("Kept: \(kept)") }
        return 0
    }

    /// The uids of the builtin passcode store (PasscodeStoreFile).
    static func storedPasscodeUsers(_ directory: String) -> [UserID] {
        ((try? PasscodeStoreFile.read(directory)) ?? [:]).keys.sorted()
    }

    /// Whether something answers `ping` on `path` within a second.
    static func daemonAnswers(_ path: String) -> Bool {
        guard let client = try? DaemonClient.connect(path) else { return false }
        try? client.fileDescriptor.setReceiveTimeout(seconds: 1)
        return (try? client.call("ping"))?.status == .ok
    }
}
