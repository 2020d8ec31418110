// DaemonProcess: the real `localauthd` binary in a throwaway directory.
//
// Each instance owns a temp dir holding a config file, a state directory and
// a socket directory (0755, so that a second uid can reach the 0666 socket).
// It spawns the binary with posix_spawn (stdout/stderr to files), waits until
// the socket accepts, and can stop it with SIGTERM, kill it with SIGKILL and
// restart it on the same state directory. Timeouts here are safety nets only.
import Foundation
import Glibc
import LocalAuthSystem
import XCTest

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

enum Binary {
    /// The daemon under test: $LOCALAUTHD_BINARY, else the `localauthd` next
    /// to the running test bundle (with `swift test --scratch-path X` both sit
    /// in X/debug), else `.build/debug/localauthd` under the package root.
    static func localauthd() throws -> String {
        var candidates: [String] = []
        if let path = ProcessInfo.processInfo.environment["LOCALAUTHD_BINARY"], !path.isEmpty {
            candidates.append(path)
        }
        var executables: [String] = []
        if let path = Bundle.main.executablePath { executables.append(path) }
        if let first = CommandLine.arguments.first { executables.append(first) }
        executables.append(Bundle.main.bundlePath)
        for executable in executables {
            var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
            // Walk up a few levels: on Linux the .xctest is the executable
            // itself; on other layouts it is inside a bundle.
            for _ in 0..<4 {
                candidates.append(directory.appendingPathComponent("localauthd").path)
                directory = directory.deletingLastPathComponent()
            }
        }
        var root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while root.path != "/" {
            if FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) {
                candidates.append(root.appendingPathComponent(".build/debug/localauthd").path)
                break
            }
            root = root.deletingLastPathComponent()
        }
        for candidate in candidates where access(candidate, X_OK) == 0 {
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG { return candidate }
        }
        throw HarnessError("localauthd binary not found; tried \(candidates). Build it or set LOCALAUTHD_BINARY.")
    }
}

/// Spawns a program with argv, stdin/stdout/stderr redirected as given.
/// `stdinFD`/`stdoutFD` are dup2'd onto 0/1; `stdoutPath`/`stderrPath` are opened.
func spawn(_ path: String, _ arguments: [String], stdinFD: Int32? = nil, stdoutFD: Int32? = nil,
           stdoutPath: String? = nil, stderrPath: String? = nil) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let stdinFD {
        posix_spawn_file_actions_adddup2(&actions, stdinFD, 0)
    } else {
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    }
    if let stdoutFD {
        posix_spawn_file_actions_adddup2(&actions, stdoutFD, 1)
    } else {
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    }
    posix_spawn_file_actions_addopen(&actions, 2, stderrPath ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var mask = sigset_t()
    sigemptyset(&mask)
    posix_spawnattr_setsigmask(&attributes, &mask)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    // A clean environment: no systemd hand-over variables from whoever runs the tests.
    let environment = ProcessInfo.processInfo.environment
        .filter { !["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID"].contains($0.key) }
        .map { "\($0.key)=\($0.value)" }
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
    defer {
        argv.forEach { free($0) }
        envp.forEach { free($0) }
    }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
    guard rc == 0 else { throw HarnessError("posix_spawn \(path): \(String(cString: strerror(rc)))") }
    return pid
}

/// Waits for a child; returns its exit code, or 128+signal. nil if it is still
/// running after `timeout` seconds (a safety net, never an assertion on time).
func waitForExit(_ pid: pid_t, timeout: Double) -> Int32? {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        var status: Int32 = 0
        let rc = waitpid(pid, &status, WNOHANG)
        if rc == pid {
            let signal = status & 0x7f
            return signal == 0 ? (status >> 8) & 0xff : 128 + signal
        }
        if rc < 0 && errno != EINTR { return -1 }
        if Date() >= deadline { return nil }
        usleep(5_000)
    }
}

/// Runs a program to completion and returns (exit code, stdout, stderr).
func runToCompletion(_ path: String, _ arguments: [String], timeout: Double = 30) throws -> (Int32, String, String) {
    let directory = try TempDirectory()
    let out = directory.path + "/stdout", err = directory.path + "/stderr"
    let pid = try spawn(path, arguments, stdoutPath: out, stderrPath: err)
    guard let code = waitForExit(pid, timeout: timeout) else {
        Glibc.kill(pid, SIGKILL)
        _ = waitForExit(pid, timeout: 10)
        throw HarnessError("\(path) \(arguments) did not exit")
    }
    return (code, readText(out), readText(err))
}

func readText(_ path: String) -> String {
    (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
}

/// mkdtemp, chmod 0755, removed on deinit.
final class TempDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/lait-XXXXXX".utf8CString)
        guard let result = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw HarnessError("mkdtemp: \(String(cString: strerror(errno)))")
        }
        path = String(cString: result)
        chmod(path, 0o755)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

final class DaemonProcess {
    static let defaultConfiguration = """
        [Biometry]
        Type=touchID
        PromptTimeoutSec=60

        """

    let directory: TempDirectory
    let binary: String
    let configPath: String
    let socketPath: String
    let stateDirectory: String
    let stderrPath: String
    let stdoutPath: String
    let extraArguments: [String]
    private(set) var pid: pid_t?
    private(set) var lastExitCode: Int32?

    var arguments: [String] {
        ["--config", configPath, "--socket", socketPath, "--state-dir", stateDirectory] + extraArguments
    }

    /// Writes `configuration` to a file and starts the daemon on it.
    init(configuration: String = DaemonProcess.defaultConfiguration, extraArguments: [String] = [],
         start: Bool = true) throws {
        Harness.prepareTestProcess()
        binary = try Binary.localauthd()
        directory = try TempDirectory()
        configPath = directory.path + "/localauthd.conf"
        socketPath = directory.path + "/run/socket"
        stateDirectory = directory.path + "/state"
        stderrPath = directory.path + "/stderr"
        stdoutPath = directory.path + "/stdout"
        self.extraArguments = extraArguments
        guard mkdir(directory.path + "/run", 0o755) == 0 else { throw HarnessError("mkdir run") }
        chmod(directory.path + "/run", 0o755)
        try configuration.write(toFile: configPath, atomically: true, encoding: .utf8)
        if start { try self.start() }
    }

    /// Spawns the daemon and waits until its socket accepts a connection.
    func start() throws {
        precondition(pid == nil, "already running")
        let child = try spawn(binary, arguments, stdoutPath: stdoutPath, stderrPath: stderrPath)
        pid = child
        let deadline = Date().addingTimeInterval(20)
        while true {
            if let probe = try? Client(socketPath: socketPath) {
                // Quit and wait for the close, so that the probe no longer
                // counts against any connection limit when the test begins.
                let reply = try probe.request("ready quit")
                guard reply.status == .ok, try probe.readUntilEOF().isEmpty else {
                    throw HarnessError("unexpected answer to the readiness probe: \(reply)")
                }
                return
            }
            if let code = waitForExit(child, timeout: 0) {
                pid = nil
                lastExitCode = code
                throw HarnessError("localauthd exited with \(code) before listening; stderr:\n\(stderr)")
            }
            if Date() >= deadline {
                kill()
                throw HarnessError("localauthd did not listen on \(socketPath); stderr:\n\(stderr)")
            }
            usleep(5_000)
        }
    }

    var stderr: String { readText(stderrPath) }
    var isRunning: Bool { pid != nil }

    /// Sends a signal and waits (safety net 20 s) for the exit code.
    @discardableResult
    func signalAndWait(_ signal: Int32) -> Int32? {
        guard let pid else { return lastExitCode }
        Glibc.kill(pid, signal)
        var code = waitForExit(pid, timeout: 20)
        if code == nil {
            Glibc.kill(pid, SIGKILL)
            code = waitForExit(pid, timeout: 20)
        }
        self.pid = nil
        lastExitCode = code
        return code
    }

    /// SIGTERM, wait, and require a clean exit (status 0).
    @discardableResult
    func stop(file: StaticString = #filePath, line: UInt = #line) -> Int32? {
        let code = signalAndWait(SIGTERM)
        XCTAssertEqual(code, 0, "localauthd did not stop cleanly on SIGTERM; stderr:\n\(stderr.prefix(1500))",
                       file: file, line: line)
        return code
    }

    /// SIGKILL for real: no chance to flush or say goodbye.
    func kill() {
        signalAndWait(SIGKILL)
    }

    /// Starts again on the same configuration, socket and state directory.
    func restart() throws {
        if pid != nil { stop() }
        try start()
    }

    func connect() throws -> Client {
        try Client(socketPath: socketPath)
    }

    /// A client running as another uid: `setpriv ... socat - UNIX-CONNECT:PATH`.
    func connect(asUID uid: UInt32) throws -> Client {
        try Client(socketPath: socketPath, asUID: uid)
    }

    deinit {
        if let pid {
            Glibc.kill(pid, SIGKILL)
            _ = waitForExit(pid, timeout: 20)
        }
    }
}

enum Harness {
    /// The test process must survive writes to closed pipes and sockets.
    static func prepareTestProcess() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Raises RLIMIT_NOFILE's soft limit to at least `wanted` (up to the hard limit).
    static func raiseOpenFileLimit(to wanted: UInt) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        if limit.rlim_cur < rlim_t(wanted) {
            limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }
}
