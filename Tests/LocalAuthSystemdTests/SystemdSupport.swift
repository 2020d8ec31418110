// Test support for the systemd side channels, without systemd running:
// a NOTIFY_SOCKET datagram receiver, a spawner that sets the service
// manager's variables for a child whose pid is known, a minimal line client,
// and the paths of the built binaries and the unit files.
// Every timeout here is a safety net, never an assertion about speed.
import Foundation
import Glibc
import LocalAuthSystem
import XCTest

struct SystemdTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

enum Paths {
    /// The package root (where Package.swift is).
    static var packageRoot: String {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url.path }
            url = url.deletingLastPathComponent()
        }
        return FileManager.default.currentDirectoryPath
    }

    static var unitDirectory: String { packageRoot + "/systemd" }

    /// $LOCALAUTHD_BINARY, else `localauthd` next to the test bundle (with
    /// `swift test --scratch-path X` both are in X/debug), else .build/debug.
    static func localauthd() throws -> String {
        var candidates: [String] = []
        if let path = ProcessInfo.processInfo.environment["LOCALAUTHD_BINARY"], !path.isEmpty { candidates.append(path) }
        for executable in [Bundle.main.executablePath, CommandLine.arguments.first, Bundle.main.bundlePath].compactMap({ $0 }) {
            var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
            for _ in 0..<4 {
                candidates.append(directory.appendingPathComponent("localauthd").path)
                directory = directory.deletingLastPathComponent()
            }
        }
        candidates.append(packageRoot + "/.build/debug/localauthd")
        for candidate in candidates where access(candidate, X_OK) == 0 {
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG { return candidate }
        }
        throw SystemdTestError("localauthd binary not found; tried \(candidates)")
    }

    /// A program on PATH, or nil.
    static func tool(_ name: String) -> String? {
        for directory in ["/usr/bin", "/bin", "/usr/sbin", "/sbin"] where access(directory + "/" + name, X_OK) == 0 {
            return directory + "/" + name
        }
        return nil
    }
}

/// mkdtemp under /tmp, mode 0755, removed on deinit.
final class Scratch {
    let path: String

    init() throws {
        var template = Array("/tmp/lasd-XXXXXX".utf8CString)
        guard let result = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SystemdTestError("mkdtemp: \(String(cString: strerror(errno)))")
        }
        path = String(cString: result)
        chmod(path, 0o755)
    }

    func write(_ name: String, _ text: String) throws -> String {
        let file = path + "/" + name
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// An AF_UNIX datagram socket standing in for systemd's notify socket. Keeps
/// every datagram in arrival order.
final class NotifyReceiver {
    let path: String
    private let fd: Int32
    private(set) var messages: [String] = []

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemdTestError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw SystemdTestError("path too long") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { throw SystemdTestError("bind \(path): \(String(cString: strerror(errno)))") }
    }

    deinit { close(fd) }

    /// The next datagram, or nil when none came within `timeout` seconds.
    func receive(timeout: Double) -> String? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 8192)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { return nil }
        let message = String(decoding: buffer[0..<count], as: UTF8.self)
        messages.append(message)
        return message
    }

    /// Receives until a datagram has a line satisfying `predicate`; returns
    /// that datagram. Fails the test (and returns nil) after `timeout`.
    @discardableResult
    func waitFor(_ what: String, timeout: Double = 20, file: StaticString = #filePath, line: UInt = #line,
                 _ predicate: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let message = receive(timeout: max(0.05, deadline.timeIntervalSinceNow)) else { continue }
            if message.split(separator: "\n").contains(where: { predicate(String($0)) }) { return message }
        }
        XCTFail("no \(what) datagram; got \(messages)", file: file, line: line)
        return nil
    }

    /// Receives what is already queued, without waiting.
    func drain() -> [String] {
        var drained: [String] = []
        while let message = receive(timeout: 0) { drained.append(message) }
        return drained
    }
}

/// A child process whose pid is the daemon's pid (through `exec`).
final class Child {
    let pid: pid_t
    private var exitCode: Int32?

    /// Runs `program arguments` with `environment` added to a clean copy of
    /// ours. With `watchdogPID`, a shell sets WATCHDOG_PID=$$ and execs the
    /// program, so WATCHDOG_PID is exactly the program's pid.
    init(_ program: String, _ arguments: [String], environment: [String: String], watchdogPID: Bool = false,
         stderrPath: String) throws {
        let argv: [String] = watchdogPID
            ? ["/bin/sh", "-c", "export WATCHDOG_PID=$$; exec \"$0\" \"$@\"", program] + arguments
            : [program] + arguments
        let dropped: Set<String> = ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC",
                                    "WATCHDOG_PID", "JOURNAL_STREAM", "LOCALAUTHD_TEST_HANG"]
        var merged = ProcessInfo.processInfo.environment.filter { !dropped.contains($0.key) }
        for (key, value) in environment { merged[key] = value }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let cArgv: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        let cEnv: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            cArgv.forEach { free($0) }
            cEnv.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, &attributes, cArgv, cEnv)
        guard rc == 0 else { throw SystemdTestError("posix_spawn \(argv[0]): \(String(cString: strerror(rc)))") }
        self.pid = pid
    }

    func signal(_ signal: Int32) { kill(pid, signal) }

    /// Exit code (128+signal when killed), nil while running after `timeout`.
    func wait(timeout: Double = 20) -> Int32? {
        if let exitCode { return exitCode }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            var status: Int32 = 0
            let rc = waitpid(pid, &status, WNOHANG)
            if rc == pid {
                let signal = status & 0x7f
                exitCode = signal == 0 ? (status >> 8) & 0xff : 128 + signal
                return exitCode
            }
            if rc < 0 && errno != EINTR { return -1 }
            if Date() >= deadline { return nil }
            usleep(5_000)
        }
    }

    deinit {
        if exitCode == nil {
            kill(pid, SIGKILL)
            _ = wait(timeout: 20)
        }
    }
}

/// One protocol connection, blocking, with poll() safety nets.
final class LineClient {
    private let fd: FileDescriptor
    private var inbox: [UInt8] = []

    init(socketPath: String) throws {
        fd = try UnixSocket.connect(path: socketPath)
    }

    deinit { try? fd.close() }

    /// Lines read but not yet asked for.
    private var stash: [String] = []

    /// Sends `line` and returns the first reply line with its tag.
    func request(_ line: String, timeout: Double = 20) throws -> String {
        try fd.writeAll(Array((line + "\n").utf8))
        return try next(tag: String(line.prefix(while: { $0 != " " })), timeout: timeout)
    }

    /// The oldest unread line with `tag`; other lines stay for later.
    func next(tag: String, timeout: Double = 20) throws -> String {
        if let index = stash.firstIndex(where: { $0.hasPrefix(tag + " ") }) { return stash.remove(at: index) }
        while true {
            let reply = try nextLine(timeout: timeout)
            if reply.hasPrefix(tag + " ") { return reply }
            stash.append(reply)
        }
    }

    private func nextLine(timeout: Double = 20) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = inbox.firstIndex(of: 10) {
                let line = String(decoding: inbox[..<newline], as: UTF8.self)
                inbox.removeSubrange(...newline)
                return line
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw SystemdTestError("no reply line; have \(String(decoding: inbox, as: UTF8.self))") }
            var poller = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(left * 1000) + 1) == 1 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = try buffer.withUnsafeMutableBytes { try fd.read(into: $0) }
            if count == 0 { throw SystemdTestError("connection closed; have \(String(decoding: inbox, as: UTF8.self))") }
            inbox.append(contentsOf: buffer[0..<count])
        }
    }
}

/// Waits (safety net) until a connection to `path` succeeds.
func waitUntilConnectable(_ path: String, child: Child, stderrPath: String, timeout: Double = 20) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if let fd = try? UnixSocket.connect(path: path) {
            try? fd.close()
            return
        }
        if let code = child.wait(timeout: 0) {
            throw SystemdTestError("exited with \(code); output:\n\((try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "")")
        }
        usleep(10_000)
    }
    throw SystemdTestError("\(path) never accepted a connection")
}

/// Runs a tool to completion; (exit code, stdout + stderr).
func runTool(_ path: String, _ arguments: [String], timeout: Double = 120) throws -> (Int32, String) {
    let scratch = try Scratch()
    let output = scratch.path + "/output"
    let child = try Child(path, arguments, environment: [:], stderrPath: output)
    guard let code = child.wait(timeout: timeout) else { throw SystemdTestError("\(path) \(arguments) did not exit") }
    return (code, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
}
