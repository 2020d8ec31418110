// Client: one protocol connection, blocking, read with poll() timeouts that
// are only safety nets. Either a Unix socket of the test process (uid 0), or
// a `setpriv --reuid=N ... socat - UNIX-CONNECT:PATH` child spoken to over two
// pipes (a real second uid, seen by the daemon through SO_PEERCRED).
//
// Replies to different requests may interleave (an evaluation's PROMPTs and
// final answer arrive while other requests are served), so the client keeps a
// stash of lines read but not yet consumed: `next(tag:)` returns the oldest
// line with that tag, `nextLine()` the oldest line of all.
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthSystem
import XCTest

public final class Client {
    public let readFD: Int32
    public let writeFD: Int32
    /// The socat child, for clients of another uid.
    private var helper: pid_t?
    /// The socat child's pid (the peer the daemon sees), for clients of another uid.
    public var helperPID: pid_t? { helper }
    private var inbox: [UInt8] = []
    private var stash: [String] = []
    public private(set) var sawEOF = false
    private var closed = false
    /// Safety net for every read.
    public var timeout: Double = 15

    public init(socketPath: String) throws {
        let fd: FileDescriptor
        do {
            fd = try UnixSocket.connect(path: socketPath)
        } catch {
            throw HarnessError("connect \(socketPath): \(error)")
        }
        readFD = fd.rawValue
        writeFD = fd.rawValue
    }

    public convenience init(socketPath: String, asUID uid: UInt32) throws {
        try self.init(running: "/usr/bin/setpriv", [
            "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "--", "socat", "-", "UNIX-CONNECT:\(socketPath)",
        ])
    }

    /// Lines to and from a program's stdin and stdout (a `socat` of another
    /// uid, a D-Bus client driven line by line, an example program).
    public init(running path: String, _ arguments: [String], environment: [String: String] = [:],
                stderrPath: String = "/dev/null") throws {
        var toChild: [Int32] = [-1, -1], fromChild: [Int32] = [-1, -1]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else {
            throw HarnessError("pipe: \(String(cString: strerror(errno)))")
        }
        // Close-on-exec, so that no other child (a daemon) inherits them.
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        helper = try spawn(path, arguments, stdinFD: toChild[0], stdoutFD: fromChild[1], stderrPath: stderrPath,
                           environment: environment)
        close(toChild[0])
        close(fromChild[1])
        writeFD = toChild[1]
        readFD = fromChild[0]
    }

    /// The program's pid (`init(running:)`), nil for a socket.
    public var programPID: pid_t? { helper }

    /// Kills the program for real (SIGKILL) and reaps it.
    public func killProgram() {
        guard let helper else { return }
        kill(helper, SIGKILL)
        _ = waitForExit(helper, timeout: 10)
        self.helper = nil
        closed = true
        close(writeFD)
        if readFD != writeFD { close(readFD) }
    }

    deinit { shutDown() }

    /// Closes the connection (and reaps the socat helper).
    public func shutDown() {
        guard !closed else { return }
        closed = true
        close(writeFD)
        if readFD != writeFD { close(readFD) }
        if let helper {
            if waitForExit(helper, timeout: 5) == nil {
                kill(helper, SIGKILL)
                _ = waitForExit(helper, timeout: 5)
            }
        }
        helper = nil
    }

    // MARK: - Sending

    /// Writes all bytes (blocking). Throws if the peer is gone.
    public func sendRaw(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { buffer -> Int in
                if readFD == writeFD {
                    return Glibc.send(writeFD, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
                }
                return Glibc.write(writeFD, buffer.baseAddress, buffer.count)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw HarnessError("send: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    /// Sends one line; the LF is added.
    public func send(_ line: String) throws {
        try sendRaw(Array((line + "\n").utf8))
    }

    // MARK: - Receiving

    /// Reads once (waiting up to `timeout`); false at end of stream.
    private func fill(timeout: Double) throws -> Bool {
        if sawEOF { return false }
        var pollFD = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
        let ready = poll(&pollFD, 1, Int32(timeout * 1000))
        if ready < 0 {
            if errno == EINTR { return true }
            throw HarnessError("poll: \(String(cString: strerror(errno)))")
        }
        if ready == 0 { throw HarnessError("no reply within \(timeout) s (safety net); stash: \(stash)") }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(readFD, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR || errno == EAGAIN { return true }
            // A daemon that closes with our unread requests queued resets the socket.
            if errno == ECONNRESET { sawEOF = true; return false }
            throw HarnessError("read: \(String(cString: strerror(errno)))")
        }
        if count == 0 {
            sawEOF = true
            return false
        }
        inbox.append(contentsOf: buffer[0..<count])
        while let newline = inbox.firstIndex(of: UInt8(ascii: "\n")) {
            stash.append(String(decoding: inbox[..<newline], as: UTF8.self))
            inbox.removeSubrange(...newline)
        }
        return true
    }

    /// The next line in arrival order, or nil at end of stream.
    public func nextLine() throws -> String? {
        while stash.isEmpty {
            guard try fill(timeout: timeout) else { return nil }
        }
        return stash.removeFirst()
    }

    /// Whether a whole line has arrived, without waiting for one (a test
    /// that some other event happened first asks this, never a clock).
    public func hasLine() throws -> Bool {
        while stash.isEmpty, !sawEOF {
            var pollFD = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
            guard poll(&pollFD, 1, 0) > 0 else { return false }
            _ = try fill(timeout: 0)
        }
        return !stash.isEmpty
    }

    /// The next reply in arrival order (parsed), failing at end of stream.
    public func next() throws -> Response {
        guard let line = try nextLine() else { throw HarnessError("connection closed while a reply was expected") }
        return try Client.parse(line)
    }

    /// The oldest reply carrying `tag`; other lines stay stashed in order.
    public func next(tag: String) throws -> Response {
        while true {
            for (index, line) in stash.enumerated() where line.hasPrefix(tag + " ") {
                stash.remove(at: index)
                return try Client.parse(line)
            }
            guard try fill(timeout: timeout) else {
                throw HarnessError("connection closed while waiting for tag \(tag); stash: \(stash)")
            }
        }
    }

    /// The lines carrying `tag` that have arrived, without waiting for more
    /// (after a later reply: every line the daemon sent before it).
    public func stashedLines(tag: String) -> [String] {
        stash.filter { $0.hasPrefix(tag + " ") }
    }

    /// The oldest line carrying `tag`, unparsed (for tests that compare lines).
    public func nextLine(tag: String) throws -> String {
        while true {
            if let index = stash.firstIndex(where: { $0.hasPrefix(tag + " ") }) { return stash.remove(at: index) }
            guard try fill(timeout: timeout) else {
                throw HarnessError("connection closed while waiting for tag \(tag); stash: \(stash)")
            }
        }
    }

    /// Sends `TAG VERB ...` and returns the first line with that tag, unparsed.
    public func requestLine(_ line: String) throws -> String {
        try send(line)
        return try nextLine(tag: String(line.prefix { $0 != " " }))
    }

    /// Sends `TAG VERB ...` and returns the first reply with that tag.
    @discardableResult
    public func request(_ line: String) throws -> Response {
        let tag = String(line.prefix { $0 != " " })
        try send(line)
        return try next(tag: tag)
    }

    /// Reads every remaining line until the daemon closes the connection.
    public func readUntilEOF() throws -> [String] {
        var lines: [String] = []
        while let line = try nextLine() { lines.append(line) }
        if !inbox.isEmpty {
            lines.append(String(decoding: inbox, as: UTF8.self))
            inbox.removeAll()
        }
        return lines
    }

    /// Lines read but not yet consumed.
    public var pending: [String] { stash }

    public static func parse(_ line: String) throws -> Response {
        do {
            return try Response.parse(line)
        } catch {
            throw HarnessError("unparsable reply \(line.debugDescription): \(error)")
        }
    }
}

// MARK: - Assertions on replies

extension Response {
    public subscript(key: String) -> String? { arguments.value(for: key) }
}

public func XCTAssertOK(_ response: Response, _ note: String = "", file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(response.status, .ok, "expected OK, got \(response) \(note)", file: file, line: line)
}

/// `TAG ERR domain=protocol name=NAME`.
public func XCTAssertProtocolError(_ response: Response, _ name: String, _ note: String = "",
                            file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(response.status, .err, "expected ERR \(name), got \(response) \(note)", file: file, line: line)
    XCTAssertEqual(response.errorDomain, "protocol", "\(response)", file: file, line: line)
    XCTAssertEqual(response.errorName, name, "\(response) \(note)", file: file, line: line)
    XCTAssertNotNil(response.message, "protocol errors carry a message: \(response)", file: file, line: line)
}

/// `TAG ERR domain=la code=N name=NAME`.
public func XCTAssertLAError(_ response: Response, _ code: Int, _ name: String,
                      file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(response.status, .err, "expected LAError \(name), got \(response)", file: file, line: line)
    XCTAssertEqual(response.errorDomain, "la", "\(response)", file: file, line: line)
    XCTAssertEqual(response.errorCode, code, "\(response)", file: file, line: line)
    XCTAssertEqual(response.errorName, name, "\(response)", file: file, line: line)
    XCTAssertNotNil(response.message, "LAErrors carry a message: \(response)", file: file, line: line)
}

public func isHexToken(_ text: String?, minimumBytes: Int = 16) -> Bool {
    guard let text, text.count >= minimumBytes * 2, text.count % 2 == 0 else { return false }
    return text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) || (65...70).contains($0) }
}
