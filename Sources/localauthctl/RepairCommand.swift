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
        // The daemon holds an exclusive flock on <dir>/lock while it runs.
        let lock = try? FileDescriptor.open(directory + "/lock", .readWrite, options: [.create], permissions: 0o600)
        defer { try? lock?.close() }
        if let lock, (try? FileLock.tryExclusive(lock)) != true {
            throw CommandFailure("localauthd is running on \(directory) (it holds \(directory)/lock); stop it first")
        }
        let by = Accounts.currentUID()
        let report: RepairReport
        do throws(LogError) {
            report = try EventLog.repair(directory, time: WallClock.nowMicros()) { firstLostSeq, kept in
                // A user whose passcode-changed event was cut is known only to
                // the passcode store: recorded again first, so that the repair
                // record raises their delay too (issue #15 item 9); the daemon's
                // start would record it after the repair, with no delay.
                let known = (try? Replay.fold(kept))?.state
                var bodies = Self.storedPasscodeUsers(directory).filter { known?.user($0).passcodeSet != true }
                    .map { EventBody.passcodeChanged(uid: $0, set: true, by: by) }
                bodies.append(.logRepaired(firstLostSeq: firstLostSeq, by: by))
                return bodies.map { (RecordKeys(type: $0.kind.rawValue, uid: $0.uid), EventCodec.encode($0)) }
            }
        } catch {
            throw CommandFailure(error.description)
        }
        Console.out(report.message)
        if report.repaired, let kept = report.keptIn, report.problem == nil { Console.out("Kept: \(kept)") }
        Self.giveBack(directory)
        return 0
    }

    /// The uids of the builtin passcode store (`<dir>/passcodes`, "uid:hash" lines).
    static func storedPasscodeUsers(_ directory: String) -> [UserID] {
        guard let bytes = try? File.read(directory + "/passcodes", maxSize: 64 << 20) else { return [] }
        return bytes.split(separator: UInt8(ascii: "\n")).compactMap { line in
            line.firstIndex(of: UInt8(ascii: ":")).flatMap { UserID(String(decoding: line[line.startIndex..<$0], as: UTF8.self)) }
        }.sorted()
    }

    /// Files written here by root (repair runs as root) go to the directory's
    /// owner, so that the daemon's own user can still write its log.
    static func giveBack(_ directory: String) {
        guard let owner = File.status(directory), owner.uid != Accounts.currentUID() else { return }
        func walk(_ path: String) {
            guard let info = File.status(path, followingLinks: false) else { return }
            if info.uid != owner.uid { try? File.chown(path, uid: owner.uid, gid: owner.gid, followingLinks: false) }
            guard info.isDirectory, let entries = try? Directory.entries(path) else { return }
            for entry in entries { walk(path + "/" + entry) }
        }
        guard let entries = try? Directory.entries(directory) else { return }
        for entry in entries { walk(directory + "/" + entry) }
    }

    /// Whether something answers `ping` on `path` within a second.
    static func daemonAnswers(_ path: String) -> Bool {
        guard let client = try? DaemonClient.connect(path) else { return false }
        try? client.fileDescriptor.setReceiveTimeout(seconds: 1)
        return (try? client.call("ping"))?.status == .ok
    }
}
