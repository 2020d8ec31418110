// DaemonProcess: the real `localauthd` binary in a throwaway directory, the
// one daemon launcher of every suite that runs it (Options says how it runs).
//
// Each instance owns a temp dir holding a config file, a state directory and
// a socket directory (0755, so that a second uid can reach the 0666 socket).
// It spawns the binary with posix_spawn (stdout/stderr to files), waits until
// the socket accepts, and can stop it with SIGTERM, kill it with SIGKILL and
// restart it on the same state directory. Timeouts here are safety nets only.
import Foundation
import Glibc
import LocalAuthProtocol
import XCTest

public final class DaemonProcess {
    public static let defaultConfiguration = """
        [Biometry]
        Type=touchID
        PromptTimeoutSec=60

        """

    /// The default, with on-behalf contexts (PAM) allowed on the simulated
    /// sensor and builtin passcodes: tests only (S-52).
    public static let onBehalfTestConfiguration = defaultConfiguration + """
        [Daemon]
        InsecureTestBackendsForPAM=yes

        """

    public let directory: TemporaryDirectory
    public let binary: String
    public let configPath: String
    public let socketPath: String
    public let stateDirectory: String
    public let stderrPath: String
    public let stdoutPath: String
    public private(set) var options: Options
    public private(set) var pid: pid_t?
    public private(set) var lastExitCode: Int32?
    /// How many times this instance spawned the daemon (for the record).
    public private(set) var starts = 0

    /// Extra environment for the next start.
    public var environment: [String: String] {
        get { options.environment }
        set { options.environment = newValue }
    }

    public var arguments: [String] {
        ["--config", configPath, "--socket", socketPath, "--state-dir", stateDirectory] + options.extraArguments
    }

    /// Writes `configuration` to a file and starts the daemon on it.
    public init(configuration: String = DaemonProcess.defaultConfiguration, options: Options = Options(),
                start: Bool = true) throws {
        Harness.prepareTestProcess()
        binary = try Binary.localauthd()
        directory = TemporaryDirectory()
        configPath = directory.path + "/localauthd.conf"
        socketPath = directory.path + "/run/socket"
        stateDirectory = options.stateDirectory ?? directory.path + "/state"
        stderrPath = directory.path + "/stderr"
        stdoutPath = directory.path + "/stdout"
        self.options = options
        guard mkdir(directory.path + "/run", 0o755) == 0 else { throw HarnessError("mkdir run") }
        chmod(directory.path + "/run", 0o755)
        if let uid = options.runAsUID {
            chown(directory.path + "/run", uid, uid)
            chmod(directory.path, 0o755)
        }
        try configuration.write(toFile: configPath, atomically: true, encoding: .utf8)
        chmod(configPath, 0o644)
        if start { try self.start() }
    }

    /// Spawns the daemon and waits until its socket accepts a connection.
    public func start() throws {
        precondition(pid == nil, "already running")
        let (path, argv) = command()
        let child = try spawn(path, argv, stdoutPath: stdoutPath, stderrPath: stderrPath,
                              appendOutput: options.appendOutput, environment: environment)
        pid = child
        starts += 1
        let deadline = Date().addingTimeInterval(options.safetyNet)
        while true {
            if try probe() {
                // `LAContext()` and localauthctl find the daemon through it.
                if options.exportsSocket { setenv("LOCALAUTHD_SOCKET", socketPath, 1) }
                return
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

    /// The program and arguments that run the daemon as `options` say.
    private func command() -> (String, [String]) {
        if options.ownWatchdogPID {
            return ("/bin/sh", ["-c", "export WATCHDOG_PID=$$; exec \"$0\" \"$@\"", binary] + arguments)
        }
        if let uid = options.runAsUID {
            return ("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "--", binary] + arguments)
        }
        if !environment.isEmpty {
            // Through a shell: a Swift binary exec'd directly with libfaketime
            // preloaded loses its argv (it then starts with the default paths);
            // exec'd by /bin/sh it keeps it (observed with libfaketime 0.9.10).
            return ("/bin/sh", ["-c", "exec \"$0\" \"$@\"", binary] + arguments)
        }
        return (binary, arguments)
    }

    /// One readiness probe: true once the daemon answered it. It quits and
    /// waits for the close, so that the probe no longer counts against any
    /// connection limit when the test begins.
    private func probe() throws -> Bool {
        guard let client = try? Client(socketPath: socketPath) else { return false }
        if options.patientProbe {
            guard let reply = try? client.request("ready quit"), reply.status == .ok else { return false }
            return (try? client.readUntilEOF()) != nil
        }
        let reply = try client.request("ready quit")
        guard reply.status == .ok, try client.readUntilEOF().isEmpty else {
            throw HarnessError("unexpected answer to the readiness probe: \(reply)")
        }
        return true
    }

    /// Starts the daemon and expects it to refuse (exit non-zero before listening).
    public func startExpectingFailure() -> (code: Int32?, stderr: String) {
        let before = stderr.utf8.count
        do {
            try start()
            return (nil, "")
        } catch {
            let text = stderr
            return (lastExitCode, String(text.utf8.dropFirst(before)) ?? text)
        }
    }

    public var stderr: String { readText(stderrPath) }
    /// stdout then stderr.
    public var output: String { readText(stdoutPath) + readText(stderrPath) }
    public var isRunning: Bool { pid != nil }

    /// Sends a signal and waits (safety net) for the exit code.
    @discardableResult
    public func signalAndWait(_ signal: Int32) -> Int32? {
        guard let pid else { return lastExitCode }
        Glibc.kill(pid, signal)
        var code = waitForExit(pid, timeout: options.safetyNet)
        if code == nil {
            Glibc.kill(pid, SIGKILL)
            code = waitForExit(pid, timeout: options.safetyNet)
        }
        self.pid = nil
        lastExitCode = code
        return code
    }

    /// Sends a signal without waiting.
    public func signal(_ signal: Int32) {
        if let pid { Glibc.kill(pid, signal) }
    }

    /// The exit code once the daemon exited (nil while it still runs after
    /// `timeout`, a safety net; 0 s only looks).
    public func awaitExit(timeout: Double? = nil) -> Int32? {
        guard let pid else { return lastExitCode }
        guard let code = waitForExit(pid, timeout: timeout ?? options.safetyNet) else { return nil }
        self.pid = nil
        lastExitCode = code
        return code
    }

    /// SIGTERM, wait, and require a clean exit (status 0).
    @discardableResult
    public func stop(file: StaticString = #filePath, line: UInt = #line) -> Int32? {
        let code = signalAndWait(SIGTERM)
        XCTAssertEqual(code, 0, "localauthd did not stop cleanly on SIGTERM; stderr:\n\(stderr.suffix(1500))",
                       file: file, line: line)
        return code
    }

    /// SIGKILL for real: no chance to flush or say goodbye.
    public func kill() {
        signalAndWait(SIGKILL)
    }

    /// Starts again on the same configuration, socket and state directory.
    public func restart() throws {
        if pid != nil { stop() }
        try start()
    }

    public func connect() throws -> Client {
        try Client(socketPath: socketPath)
    }

    /// A client running as another uid: `setpriv ... socat - UNIX-CONNECT:PATH`.
    public func connect(asUID uid: UInt32) throws -> Client {
        try Client(socketPath: socketPath, asUID: uid)
    }

    deinit {
        if let pid {
            Glibc.kill(pid, SIGKILL)
            _ = waitForExit(pid, timeout: 20)
        }
    }
}
