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
import LocalAuthTestSupport
import XCTest

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
