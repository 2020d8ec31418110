// Process helpers shared by the test targets that run the real binaries
// (integration, reliability): spawning with redirected output and extra
// environment, waiting with safety-net timeouts, temporary directories, and
// finding the binaries next to the test bundle. Test targets cannot import
// each other, so this is a library target under Tests/ that only tests use.
import Foundation
import Glibc
import XCTest

public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

public enum Binary {
    /// The daemon under test ($LOCALAUTH_BIN_DIR's, $LOCALAUTHD_BINARY, else next to the test bundle).
    public static func localauthd() throws -> String { try find("localauthd") }

    /// `name` in $LOCALAUTH_BIN_DIR when set (scripts/test runs the
    /// black-box suites once against the release binaries that ship),
    /// else $LOCALAUTHD_BINARY for the daemon, else next to the running
    /// test bundle (swift test --scratch-path X puts both in X/debug).
    public static func find(_ name: String) throws -> String {
        var candidates: [String] = []
        if let directory = ProcessInfo.processInfo.environment["LOCALAUTH_BIN_DIR"], !directory.isEmpty {
            // Only there: a run meant for the release binaries must not
            // quietly test the debug ones.
            let path = directory + "/" + name
            guard access(path, X_OK) == 0 else { throw HarnessError("\(name) not in LOCALAUTH_BIN_DIR=\(directory)") }
            return path
        }
        if name == "localauthd", let path = ProcessInfo.processInfo.environment["LOCALAUTHD_BINARY"], !path.isEmpty {
            candidates.append(path)
        }
        var executables: [String] = []
        if let path = Bundle.main.executablePath { executables.append(path) }
        if let first = CommandLine.arguments.first { executables.append(first) }
        executables.append(Bundle.main.bundlePath)
        for executable in executables {
            var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
            for _ in 0..<4 {
                candidates.append(directory.appendingPathComponent(name).path)
                directory = directory.deletingLastPathComponent()
            }
        }
        var root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while root.path != "/" {
            if FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) {
                candidates.append(root.appendingPathComponent(".build/debug/\(name)").path)
                break
            }
            root = root.deletingLastPathComponent()
        }
        for candidate in candidates where access(candidate, X_OK) == 0 {
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG { return candidate }
        }
        throw HarnessError("\(name) binary not found; tried \(candidates)")
    }
}

/// posix_spawn with stdin/stdout/stderr redirected; `appendOutput` appends
/// to the output files instead of truncating them.
public func spawn(_ path: String, _ arguments: [String], stdinFD: Int32? = nil, stdoutFD: Int32? = nil,
           stdoutPath: String? = nil, stderrPath: String? = nil, appendOutput: Bool = false,
           environment extra: [String: String] = [:]) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    let outFlags = O_WRONLY | O_CREAT | (appendOutput ? O_APPEND : O_TRUNC)
    if let stdinFD {
        posix_spawn_file_actions_adddup2(&actions, stdinFD, 0)
    } else {
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    }
    if let stdoutFD {
        posix_spawn_file_actions_adddup2(&actions, stdoutFD, 1)
    } else {
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath ?? "/dev/null", outFlags, 0o644)
    }
    posix_spawn_file_actions_addopen(&actions, 2, stderrPath ?? "/dev/null", outFlags, 0o644)

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

    var environment = ProcessInfo.processInfo.environment
        // A service manager's variables (the test may run under one) and the
        // daemon's test hook reach the child only when a test passes them.
        .filter { !["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID",
                    "JOURNAL_STREAM", "LOCALAUTHD_TEST_HANG"].contains($0.key) }
    for (key, value) in extra { environment[key] = value }
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        argv.forEach { free($0) }
        envp.forEach { free($0) }
    }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
    guard rc == 0 else { throw HarnessError("posix_spawn \(path): \(String(cString: strerror(rc)))") }
    return pid
}

/// Exit code, or 128+signal; nil while still running after `timeout` (a safety net).
public func waitForExit(_ pid: pid_t, timeout: Double) -> Int32? {
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

/// A program's exit code, its output discarded; -1 when it cannot run.
public func exitCode(of path: String, _ arguments: [String]) -> Int32 {
    (try? runToCompletion(path, arguments))?.0 ?? -1
}

/// Runs a program to completion: (exit code, stdout, stderr).
public func runToCompletion(_ path: String, _ arguments: [String], timeout: Double = 60,
                     environment: [String: String] = [:]) throws -> (Int32, String, String) {
    let directory = TemporaryDirectory()
    let out = directory.path + "/stdout", err = directory.path + "/stderr"
    let pid = try spawn(path, arguments, stdoutPath: out, stderrPath: err, environment: environment)
    guard let code = waitForExit(pid, timeout: timeout) else {
        Glibc.kill(pid, SIGKILL)
        _ = waitForExit(pid, timeout: 10)
        throw HarnessError("\(path) \(arguments) did not exit")
    }
    return (code, readText(out), readText(err))
}

public func readText(_ path: String) -> String {
    (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
}

public func readBytes(_ path: String) -> [UInt8] {
    (try? Array(Data(contentsOf: URL(fileURLWithPath: path)))) ?? []
}
