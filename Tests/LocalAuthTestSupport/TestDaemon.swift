// A daemon for the client-side tests (the LocalAuthentication module and
// localauthctl): a temp directory with its own socket, LOCALAUTHD_SOCKET
// pointing at it (so `LAContext()` reaches it unchanged), and `Admin`, a raw
// protocol connection of the test process (root, the administrator) to
// enroll, set passcodes and feed the simulated sensor. Timeouts are safety
// nets only.
import Foundation
import Glibc
import XCTest

public final class TestDaemon {
    public let directory: String
    public let socketPath: String
    public private(set) var pid: pid_t = 0

    public init(configuration: String = "[Biometry]\nType=touchID\nPromptTimeoutSec=60\n", start: Bool = true) throws {
        signal(SIGPIPE, SIG_IGN)
        var template = Array("/tmp/latest-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw HarnessError("mkdtemp failed")
        }
        directory = String(cString: made)
        socketPath = directory + "/socket"
        try configuration.write(toFile: directory + "/localauthd.conf", atomically: true, encoding: .utf8)
        if start { try self.start() }
    }

    /// Spawns the daemon on this directory and waits until it listens.
    public func start() throws {
        let binary = try Binary.localauthd()
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

    public var stderr: String { (try? String(contentsOfFile: directory + "/stderr", encoding: .utf8)) ?? "" }
    public var stateDirectory: String { directory + "/state" }

    /// SIGTERM and wait (safety net 20 s); returns the exit status.
    @discardableResult
    public func stop() -> Int32 {
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
public final class Admin: @unchecked Sendable {
    private let fd: Int32
    private var inbox: [UInt8] = []
    private var counter = 0

    public init(_ socketPath: String) throws {
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

    /// Sends `VERB KEY=VALUE...` without waiting; returns the tag.
    public func send(_ command: String) -> String {
        counter += 1
        let tag = "a\(counter)"
        let bytes = Array("\(tag) \(command)\n".utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return tag
    }

    /// Sends `VERB KEY=VALUE...` and returns the final reply's line.
    @discardableResult
    public func request(_ command: String) throws -> [String: String] {
        try final(send(command), command)
    }

    /// The final reply with `tag`.
    public func final(_ tag: String, _ what: String = "") throws -> [String: String] {
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
            guard poll(&descriptor, 1, 15_000) > 0 else { throw HarnessError("no reply to \(what) (safety net)") }
            var chunk = [UInt8](repeating: 0, count: 8192)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw HarnessError("connection closed") }
            inbox.append(contentsOf: chunk[..<n])
        }
    }

    /// Like `request`, failing unless the reply is OK.
    @discardableResult
    public func ok(_ command: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: String] {
        let reply = try request(command)
        XCTAssertEqual(reply["status"], "OK", "\(command) -> \(reply)", file: file, line: line)
        return reply
    }

    /// `status`, plus the KEY=VALUE pairs (values unquoted; enough for these tests).
    public static func fields(_ line: String) -> [String: String] {
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
