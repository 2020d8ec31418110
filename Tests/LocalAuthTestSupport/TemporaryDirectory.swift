// The one temporary-directory helper of the test suites: mkdtemp under /tmp
// (or /dev/shm, where fsync is free, for tests that damage a log at every
// byte; durability itself is tested on disk), mode 0755 so that a daemon or
// client of another uid can reach inside, removed with everything in it when
// the last reference goes (after unmounting what a test mounted inside).
import Foundation
import Glibc

public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String
    /// Mount points inside, unmounted (lazily) before the removal.
    public var mounts: [String] = []

    /// `prefix` names the directory (`/tmp/<prefix>XXXXXX`).
    public init(prefix: String = "localauth-test-", inMemory: Bool = false) {
        let base = inMemory && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
        var template = Array("\(base)/\(prefix)XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            // No writable /tmp: nothing in these suites could run.
            preconditionFailure("mkdtemp \(base)/\(prefix)XXXXXX: \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
        chmod(path, 0o755)
    }

    /// `log` below it: where EventLog keeps its segments.
    public var log: String { path + "/log" }

    /// Writes `text` to the file `name` inside; returns its path.
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String {
        let file = path + "/" + name
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    deinit {
        for mount in mounts.reversed() { _ = try? runToCompletion("/usr/bin/umount", ["-l", mount]) }
        try? FileManager.default.removeItem(atPath: path)
    }
}
