// Who asks, as a session agent may say it (S-67): the daemon names the app's
// process (uid, pid, the pidfd inode that pins it); the agent, the same uid,
// reads its executable and a Flatpak sandbox's id through the shared C
// reader (Sources/CLocalAuthAgent, also the desktop agent's). The read runs
// on a thread of its own with a deadline: a sandbox's own file system
// (FUSE) could stall it, and the prompt must not wait on the app.
import CLocalAuthAgent
import Dispatch
import Foundation

struct AppIdentity: Sendable {
    let uid: UInt32
    let pid: Int32
    /// nil: not known (the reason is in `problem`).
    var executable: String?
    var executableVerified = false
    var otherMountNamespace = false
    var flatpakID: String?
    var unpinned = false
    var problem: String?

    /// How long the read may take before the prompt goes on without it.
    static let deadline = DispatchTimeInterval.seconds(1)

    /// Reads the identity of process `pid` (which must be `process`, of `uid`).
    static func read(uid: UInt32, pid: Int32, process: UInt64?) -> AppIdentity {
        let result = ReadResult()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var raw = la_app_identity()
            _ = la_app_identity_read(pid, process ?? 0, uid, &raw)
            result.store(AppIdentity(uid: uid, pid: pid, raw: raw))
            done.signal()
        }
        guard done.wait(timeout: .now() + deadline) == .success, let identity = result.value else {
            return AppIdentity(uid: uid, pid: pid, problem: "its files did not answer in time")
        }
        return identity
    }

    init(uid: UInt32, pid: Int32, problem: String) {
        self.uid = uid
        self.pid = pid
        self.problem = problem
    }

    private init(uid: UInt32, pid: Int32, raw: la_app_identity) {
        self.uid = uid
        self.pid = pid
        var raw = raw
        unpinned = raw.unpinned != 0
        guard raw.known != 0 else {
            problem = Self.string(&raw.problem)
            return
        }
        executable = Self.string(&raw.exe)
        executableVerified = raw.exe_verified != 0
        otherMountNamespace = raw.other_mount_namespace != 0
        let flatpak = Self.string(&raw.flatpak_id)
        flatpakID = flatpak.isEmpty ? nil : flatpak
    }

    private static func string<T>(_ tuple: inout T) -> String {
        withUnsafeBytes(of: &tuple) { bytes in
            let end = bytes.firstIndex(of: 0) ?? bytes.count
            return String(decoding: bytes[..<end], as: UTF8.self)
        }
    }

    /// The lines a terminal shows, every string escaped (DisplayText).
    var lines: [String] {
        var lines: [String] = []
        if let flatpakID {
            lines.append("Flatpak app " + DisplayText.escaped(flatpakID, keepingLineFeeds: false) + " (as its sandbox states)")
        }
        if let executable {
            var line = "Program " + DisplayText.escaped(executable, keepingLineFeeds: false)
            if !executableVerified { line += otherMountNamespace ? " (inside its own file system)" : " (not the file at that path now)" }
            lines.append(line)
        } else {
            lines.append("An unknown program (\(problem ?? "unknown"))")
        }
        var who = "process \(pid), uid \(uid)"
        if unpinned { who += "; not pinned: this kernel cannot say that pid \(pid) is still the same process" }
        lines.append("  " + who)
        return lines
    }
}

private final class ReadResult: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: AppIdentity?
    func store(_ value: AppIdentity) { lock.withLock { stored = value } }
    var value: AppIdentity? { lock.withLock { stored } }
}
