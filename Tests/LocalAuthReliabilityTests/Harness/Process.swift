// The daemon under test, for the reliability tests: on top of the shared
// process helpers (LocalAuthTestSupport) a state directory chosen by the test
// (a tiny tmpfs), a daemon running as another uid (setpriv), extra
// environment (libfaketime), and stdout/stderr kept across restarts
// (appended) so that the secret scan sees all of it.
import Foundation
import Glibc
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class DaemonProcess {
    let directory: TempDirectory
    let binary: String
    let configPath: String
    let socketPath: String
    let stateDirectory: String
    let stderrPath: String
    let stdoutPath: String
    /// Run the daemon as this uid (setpriv), or as the test's uid (root).
    let runAsUID: UInt32?
    /// Extra environment for the daemon (LD_PRELOAD=libfaketime, FAKETIME=...).
    var environment: [String: String] = [:]
    private(set) var pid: pid_t?
    private(set) var lastExitCode: Int32?
    /// Every pid this instance spawned (for the record).
    private(set) var starts = 0

    var arguments: [String] {
        ["--config", configPath, "--socket", socketPath, "--state-dir", stateDirectory]
    }

    init(configuration: String, stateDirectory: String? = nil, runAsUID: UInt32? = nil,
         environment: [String: String] = [:], start: Bool = true) throws {
        Harness.prepareTestProcess()
        binary = try Binary.find("localauthd")
        directory = try TempDirectory()
        configPath = directory.path + "/localauthd.conf"
        socketPath = directory.path + "/run/socket"
        self.stateDirectory = stateDirectory ?? directory.path + "/state"
        stderrPath = directory.path + "/stderr"
        stdoutPath = directory.path + "/stdout"
        self.runAsUID = runAsUID
        self.environment = environment
        guard mkdir(directory.path + "/run", 0o755) == 0 else { throw HarnessError("mkdir run") }
        chmod(directory.path + "/run", 0o755)
        if let uid = runAsUID {
            chown(directory.path + "/run", uid, uid)
            chmod(directory.path, 0o755)
        }
        try configuration.write(toFile: configPath, atomically: true, encoding: .utf8)
        chmod(configPath, 0o644)
        if start { try self.start() }
    }

    /// Spawns the daemon and waits until its socket accepts a connection.
    func start() throws {
        precondition(pid == nil, "already running")
        let child: pid_t
        if let uid = runAsUID {
            child = try spawn("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "--", binary] + arguments,
                              stdoutPath: stdoutPath, stderrPath: stderrPath, appendOutput: true, environment: environment)
        } else if !environment.isEmpty {
            // Through a shell: a Swift binary exec'd directly with libfaketime
            // preloaded loses its argv (it then starts with the default paths);
            // exec'd by /bin/sh it keeps it (observed with libfaketime 0.9.10).
            child = try spawn("/bin/sh", ["-c", "exec \"$0\" \"$@\"", binary] + arguments, stdoutPath: stdoutPath,
                              stderrPath: stderrPath, appendOutput: true, environment: environment)
        } else {
            child = try spawn(binary, arguments, stdoutPath: stdoutPath, stderrPath: stderrPath, appendOutput: true)
        }
        pid = child
        starts += 1
        let deadline = Date().addingTimeInterval(30)
        while true {
            if let probe = try? Client(socketPath: socketPath) {
                if let reply = try? probe.request("ready quit"), reply.status == .ok, (try? probe.readUntilEOF()) != nil {
                    return
                }
            }
            if let code = waitForExit(child, timeout: 0) {
                pid = nil
                lastExitCode = code
                throw HarnessError("localauthd exited with \(code) before listening; stderr:\n\(stderr.suffix(3000))")
            }
            if Date() >= deadline {
                let cmdline = readText("/proc/\(child)/cmdline").replacingOccurrences(of: "\0", with: " ")
                kill()
                throw HarnessError("localauthd did not listen on \(socketPath) (command line: \(cmdline)); stderr:\n\(stderr.suffix(3000))")
            }
            usleep(5_000)
        }
    }

    /// Starts the daemon and expects it to refuse (exit non-zero before listening).
    func startExpectingFailure() -> (code: Int32?, stderr: String) {
        let before = stderr.utf8.count
        do {
            try start()
            return (nil, "")
        } catch {
            let text = stderr
            return (lastExitCode, String(text.utf8.dropFirst(before)) ?? text)
        }
    }

    var stderr: String { readText(stderrPath) }
    var isRunning: Bool { pid != nil }

    @discardableResult
    func signalAndWait(_ signal: Int32) -> Int32? {
        guard let pid else { return lastExitCode }
        Glibc.kill(pid, signal)
        var code = waitForExit(pid, timeout: 30)
        if code == nil {
            Glibc.kill(pid, SIGKILL)
            code = waitForExit(pid, timeout: 30)
        }
        self.pid = nil
        lastExitCode = code
        return code
    }

    @discardableResult
    func stop(file: StaticString = #filePath, line: UInt = #line) -> Int32? {
        let code = signalAndWait(SIGTERM)
        XCTAssertEqual(code, 0, "localauthd did not stop cleanly on SIGTERM; stderr:\n\(stderr.suffix(1500))",
                       file: file, line: line)
        return code
    }

    func kill() { signalAndWait(SIGKILL) }

    func connect() throws -> Client { try Client(socketPath: socketPath) }
    func connect(asUID uid: UInt32) throws -> Client { try Client(socketPath: socketPath, asUID: uid) }

    deinit {
        if let pid {
            Glibc.kill(pid, SIGKILL)
            _ = waitForExit(pid, timeout: 20)
        }
    }
}

enum Harness {
    static func prepareTestProcess() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Raises RLIMIT_NOFILE's soft limit to at least `wanted` (up to the hard limit); returns the new soft limit.
    @discardableResult
    static func raiseOpenFileLimit(to wanted: UInt) -> UInt {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < rlim_t(wanted) {
            limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return UInt(limit.rlim_cur)
    }

    static var soak: Bool { ProcessInfo.processInfo.environment["LOCALAUTH_SOAK"] == "1" }

    static func environmentInt(_ name: String) -> Int? {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0) }
    }
}

/// A small deterministic PRNG (SplitMix64), so a failing cycle can be replayed from its seed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
