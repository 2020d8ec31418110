// Test support for the systemd side channels, without systemd running: a
// NOTIFY_SOCKET datagram receiver and the paths of the unit files. The daemon
// launcher, the client, processes and temporary directories are
// LocalAuthTestSupport's, as in every other suite.
// Every timeout here is a safety net, never an assertion about speed.
import Foundation
import Glibc
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest


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

    /// A program on PATH, or nil.
    static func tool(_ name: String) -> String? {
        for directory in ["/usr/bin", "/bin", "/usr/sbin", "/sbin"] where access(directory + "/" + name, X_OK) == 0 {
            return directory + "/" + name
        }
        return nil
    }
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
        guard fd >= 0 else { throw HarnessError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw HarnessError("path too long") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { throw HarnessError("bind \(path): \(String(cString: strerror(errno)))") }
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

/// Runs a tool to completion; (exit code, stdout + stderr).
func runTool(_ path: String, _ arguments: [String], timeout: Double = 120) throws -> (Int32, String) {
    let (code, out, err) = try runToCompletion(path, arguments, timeout: timeout)
    return (code, out + err)
}
