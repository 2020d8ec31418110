// localauthctl repair: Cut the log after the last trustworthy record (daemon stopped; keeps a copy).
import Glibc
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
        let lock = open(directory + "/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        defer { if lock >= 0 { close(lock) } }
        if lock >= 0, flock(lock, LOCK_EX | LOCK_NB) != 0 {
            throw CommandFailure("localauthd is running on \(directory) (it holds \(directory)/lock); stop it first")
        }
        let by = getuid()
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
        var owner = stat()
        guard stat(directory, &owner) == 0, owner.st_uid != getuid() else { return }
        func walk(_ path: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return }
            if info.st_uid != owner.st_uid { _ = lchown(path, owner.st_uid, owner.st_gid) }
            guard info.st_mode & S_IFMT == S_IFDIR, let entries = try? Directory.entries(path) else { return }
            for entry in entries { walk(path + "/" + entry) }
        }
        guard let entries = try? Directory.entries(directory) else { return }
        for entry in entries { walk(directory + "/" + entry) }
    }

    /// Whether something answers `ping` on `path` within a second.
    static func daemonAnswers(_ path: String) -> Bool {
        guard let client = try? DaemonClient.connect(path) else { return false }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(client.fileDescriptor.rawValue, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return (try? client.call("ping"))?.status == .ok
    }
}
