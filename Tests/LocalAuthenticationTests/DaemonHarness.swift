// The real `localauthd` for these tests (a trimmed copy of the integration
// harness: test targets cannot import each other). A daemon runs in a temp
// directory with its own socket; `LOCALAUTHD_SOCKET` points at it, so code
// that writes `LAContext()` (the seed helpers) reaches it unchanged. The test
// process is root, hence the daemon's administrator: `Admin` speaks the raw
// protocol to enroll, set passcodes and feed the simulated sensor.
// Timeouts here are safety nets only, never assertions.
import Foundation
import Glibc
import LocalAuthentication
import XCTest

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The daemon next to the test bundle (`swift test --scratch-path X`: X/debug), or $LOCALAUTHD_BINARY.
func daemonBinary() throws -> String {
    var candidates: [String] = []
    if let path = ProcessInfo.processInfo.environment["LOCALAUTHD_BINARY"], !path.isEmpty { candidates.append(path) }
    for executable in [Bundle.main.executablePath, CommandLine.arguments.first, Bundle.main.bundlePath].compactMap({ $0 }) {
        var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(directory.appendingPathComponent("localauthd").path)
            directory = directory.deletingLastPathComponent()
        }
    }
    for candidate in candidates where access(candidate, X_OK) == 0 {
        var info = stat()
        if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG { return candidate }
    }
    throw HarnessError("localauthd not found (tried \(candidates)); build it or set LOCALAUTHD_BINARY")
}

final class TestDaemon {
    let directory: String
    let socketPath: String
    private(set) var pid: pid_t = 0

    init(configuration: String = "[Biometry]\nType=touchID\nPromptTimeoutSec=60\n") throws {
        signal(SIGPIPE, SIG_IGN)
        var template = Array("/tmp/latest-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw HarnessError("mkdtemp failed")
        }
        directory = String(cString: made)
        socketPath = directory + "/socket"
        try configuration.write(toFile: directory + "/localauthd.conf", atomically: true, encoding: .utf8)
        let binary = try daemonBinary()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, directory + "/stdout", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, directory + "/stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let arguments = [binary, "--config", directory + "/localauthd.conf", "--socket", socketPath,
                         "--state-dir", directory + "/state"]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LISTEN_") && $0.key != "NOTIFY_SOCKET" }
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        let rc = posix_spawn(&pid, binary, &actions, nil, argv, envp)
        guard rc == 0 else { throw HarnessError("posix_spawn: \(String(cString: strerror(rc)))") }
        let deadline = Date().addingTimeInterval(20)
        while (try? Admin(socketPath)) == nil {
            if Date() > deadline { throw HarnessError("localauthd did not listen:\n\(stderr)") }
            usleep(5_000)
        }
        setenv("LOCALAUTHD_SOCKET", socketPath, 1)
    }

    var stderr: String { (try? String(contentsOfFile: directory + "/stderr", encoding: .utf8)) ?? "" }
    var stateDirectory: String { directory + "/state" }

    /// SIGTERM and wait (safety net 20 s); returns the exit status.
    @discardableResult
    func stop() -> Int32 {
        guard pid != 0 else { return 0 }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(20)
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() > deadline { kill(pid, SIGKILL) }
            usleep(5_000)
        }
        pid = 0
        return (status >> 8) & 0xff
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A raw protocol connection of the test process (uid 0, the administrator).
final class Admin: @unchecked Sendable {
    private let fd: Int32
    private var inbox: [UInt8] = []
    private var counter = 0

    init(_ socketPath: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, b) in socketPath.utf8.enumerated() { buffer[i] = b }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            close(fd)
            throw HarnessError("connect: \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(fd) }

    /// Sends `VERB KEY=VALUE...` and returns the final reply's line.
    @discardableResult
    func request(_ command: String) throws -> [String: String] {
        counter += 1
        let tag = "a\(counter)"
        let bytes = Array("\(tag) \(command)\n".utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        while true {
            if let newline = inbox.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: inbox[..<newline], as: UTF8.self)
                inbox.removeSubrange(...newline)
                guard line.hasPrefix(tag + " ") else { continue }
                let fields = Admin.fields(line)
                if fields["status"] == "PROMPT" { continue }
                return fields
            }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 15_000) > 0 else { throw HarnessError("no reply to \(command) (safety net)") }
            var chunk = [UInt8](repeating: 0, count: 8192)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw HarnessError("connection closed") }
            inbox.append(contentsOf: chunk[..<n])
        }
    }

    /// Like `request`, failing unless the reply is OK.
    @discardableResult
    func ok(_ command: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: String] {
        let reply = try request(command)
        XCTAssertEqual(reply["status"], "OK", "\(command) -> \(reply)", file: file, line: line)
        return reply
    }

    /// `status`, plus the KEY=VALUE pairs (values unquoted; enough for these tests).
    static func fields(_ line: String) -> [String: String] {
        var result: [String: String] = [:]
        let parts = line.split(separator: " ", maxSplits: 2)
        result["status"] = parts.count > 1 ? String(parts[1]) : ""
        guard parts.count > 2 else { return result }
        var rest = Substring(parts[2])
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "=") else { break }
            let key = String(rest[..<equals])
            rest = rest[rest.index(after: equals)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                while let c = rest.first, c != "\"" {
                    if c == "\\", let next = rest.dropFirst().first { value.append(next); rest = rest.dropFirst(2); continue }
                    value.append(c)
                    rest = rest.dropFirst()
                }
                rest = rest.dropFirst()
            } else {
                let end = rest.firstIndex(of: " ") ?? rest.endIndex
                value = String(rest[..<end])
                rest = rest[end...]
            }
            result[key] = value
            rest = rest.drop { $0 == " " }
        }
        return result
    }
}

/// A prompt handler a test drives: it reports each prompt (so the admin
/// feeds the sensor only once a prompt waits) and answers passcode prompts
/// from a list (nil entries cancel).
final class ScriptedHandler: LAPromptHandler, @unchecked Sendable {
    private let lock = NSLock()
    private let promptArrived = DispatchSemaphore(value: 0)
    private var prompts: [String] = []
    private var answers: [String?]
    private(set) var biometricPrompts: [LABiometricPrompt] = []
    private(set) var passcodePrompts: [LAPasscodePrompt] = []
    private(set) var dismissals = 0
    /// Choose the fallback when it is offered.
    var chooseFallback = false

    init(passcodes: [String?] = []) { answers = passcodes }

    func showBiometricPrompt(_ prompt: LABiometricPrompt, session: any LAPromptSession) {
        lock.withLock {
            biometricPrompts.append(prompt)
            prompts.append("biometric")
        }
        promptArrived.signal()
        if chooseFallback, prompt.fallbackTitle != nil { session.chooseFallback() }
    }

    func passcode(for prompt: LAPasscodePrompt, session: any LAPromptSession) async -> String? {
        let answer: String?? = lock.withLock {
            passcodePrompts.append(prompt)
            prompts.append("passcode")
            return answers.isEmpty ? nil : answers.removeFirst()
        }
        promptArrived.signal()
        return answer ?? nil
    }

    func dismissPrompt(session: any LAPromptSession) {
        lock.withLock { dismissals += 1 }
    }

    /// Blocks until the next prompt; returns its kind.
    func nextPrompt(file: StaticString = #filePath, line: UInt = #line) -> String? {
        guard promptArrived.wait(timeout: .now() + 15) == .success else {
            XCTFail("no prompt arrived (safety net)", file: file, line: line)
            return nil
        }
        return lock.withLock { prompts.removeFirst() }
    }
}

/// Waits for an evaluatePolicy reply (safety net 20 s).
final class ReplyBox: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var replies: [(Bool, (any Error)?, Bool)] = []

    var reply: @Sendable (Bool, (any Error)?) -> Void {
        { [self] success, error in
            let onMain = Thread.isMainThread
            lock.withLock { replies.append((success, error, onMain)) }
            done.signal()
        }
    }

    /// The one reply; fails the test on none.
    func wait(file: StaticString = #filePath, line: UInt = #line) -> (success: Bool, error: LAError?, nsError: NSError?, onMain: Bool) {
        guard done.wait(timeout: .now() + 20) == .success else {
            XCTFail("no reply (safety net)", file: file, line: line)
            return (false, nil, nil, false)
        }
        let (success, error, onMain) = lock.withLock { replies[0] }
        return (success, error as? LAError, error.map { $0 as NSError }, onMain)
    }

    var count: Int { lock.withLock { replies.count } }
}
