// File: path-level calls on regular files (existence, whole-file reads,
// rename, unlink, ownership). Descriptor-level calls are on FileDescriptor.
import Glibc

public enum File {
    /// Whether `path` exists (following symlinks).
    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// The whole file, failing with EFBIG when it is larger than `maxSize`.
    public static func read(_ path: String, maxSize: Int) throws(SystemError) -> [UInt8] {
        let fd = try FileDescriptor.open(path, .readOnly)
        defer { try? fd.close() }
        var bytes: [UInt8] = []
        let chunk = 64 * 1024
        while true {
            let start = bytes.count
            // One byte past the limit is enough to tell the file is too large
            // (written so that maxSize == Int.max cannot overflow).
            let room = maxSize - start
            let want = room >= chunk ? chunk : room + 1
            bytes.append(contentsOf: repeatElement(0, count: want))
            var failure: SystemError?
            let got = bytes.withUnsafeMutableBytes { buffer -> Int in
                do throws(SystemError) {
                    return try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[start..<(start + want)]))
                } catch {
                    failure = error
                    return 0
                }
            }
            if let failure { throw SystemError(call: failure.call, errno: failure.errno, path: path) }
            bytes.removeLast(want - got)
            if bytes.count > maxSize { throw SystemError(call: "read", errno: EFBIG, path: path) }
            if got == 0 { return bytes }
        }
    }

    /// rename(2): atomically replaces `destination`.
    public static func rename(_ source: String, to destination: String) throws(SystemError) {
        _ = try retryOnInterrupt("rename", path: source) { Glibc.rename(source, destination) }
    }

    /// unlink(2).
    public static func unlink(_ path: String) throws(SystemError) {
        _ = try retryOnInterrupt("unlink", path: path) { Glibc.unlink(path) }
    }

    /// chmod(2).
    public static func chmod(_ path: String, _ mode: mode_t) throws(SystemError) {
        _ = try retryOnInterrupt("chmod", path: path) { Glibc.chmod(path, mode) }
    }

    /// chown(2) (lchown(2) with `followingLinks: false`: a link itself); pass
    /// `UInt32.max` (-1) to leave the owner or group unchanged.
    public static func chown(_ path: String, uid: uid_t, gid: gid_t, followingLinks: Bool = true) throws(SystemError) {
        if followingLinks {
            _ = try retryOnInterrupt("chown", path: path) { Glibc.chown(path, uid, gid) }
        } else {
            _ = try retryOnInterrupt("lchown", path: path) { Glibc.lchown(path, uid, gid) }
        }
    }

    /// Who owns a file and whether it is a directory.
    public struct Status: Sendable, Equatable {
        public var uid: uid_t
        public var gid: gid_t
        public var isDirectory: Bool
    }

    /// stat(2) (lstat(2) with `followingLinks: false`); nil when it fails.
    public static func status(_ path: String, followingLinks: Bool = true) -> Status? {
        var info = stat()
        guard (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        return Status(uid: info.st_uid, gid: info.st_gid, isDirectory: info.st_mode & S_IFMT == S_IFDIR)
    }

    /// st_mode's permission bits (lstat: a symlink's own).
    public static func permissions(_ path: String) throws(SystemError) -> mode_t {
        var info = stat()
        _ = try retryOnInterrupt("lstat", path: path) { lstat(path, &info) }
        return info.st_mode & 0o7777
    }
}
