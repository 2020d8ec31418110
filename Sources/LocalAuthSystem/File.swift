// File: path-level calls on regular files (existence, whole-file reads,
// rename, unlink, ownership). Descriptor-level calls are on FileDescriptor.
// Each finds its file through PathWalk and acts on it relative to its
// directory's descriptor, never following a symlink that another user could
// have placed (issue 27 item 2).
import Glibc

public enum File {
    /// Whether `path` exists (following symlinks where PathWalk does; a
    /// symlink it does not follow exists as itself).
    public static func exists(_ path: String) -> Bool {
        guard let (directory, name) = try? PathWalk.parent(path, followingFinal: true) else { return false }
        defer { try? directory.close() }
        return PathWalk.status(directory, name) != nil
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
            if let failure { throw failure.about(path) }
            bytes.removeLast(want - got)
            if bytes.count > maxSize { throw SystemError(call: "read", errno: EFBIG, path: path) }
            if got == 0 { return bytes }
        }
    }

    /// renameat(2): atomically replaces `destination` (neither end is followed).
    public static func rename(_ source: String, to destination: String) throws(SystemError) {
        let (from, fromName) = try PathWalk.parent(source, followingFinal: false)
        defer { try? from.close() }
        let (to, toName) = try PathWalk.parent(destination, followingFinal: false)
        defer { try? to.close() }
        _ = try retryOnInterrupt("rename", path: source) { renameat(from.rawValue, fromName, to.rawValue, toName) }
    }

    /// unlinkat(2) (a symlink is removed, not followed).
    public static func unlink(_ path: String) throws(SystemError) {
        let (directory, name) = try PathWalk.parent(path, followingFinal: false)
        defer { try? directory.close() }
        _ = try retryOnInterrupt("unlink", path: path) { unlinkat(directory.rawValue, name, 0) }
    }

    /// fchmodat(2) with AT_SYMLINK_NOFOLLOW: a symlink PathWalk did not
    /// follow is refused, never chmod'ed through.
    public static func chmod(_ path: String, _ mode: mode_t) throws(SystemError) {
        let (directory, name) = try PathWalk.parent(path, followingFinal: true)
        defer { try? directory.close() }
        try refuseUnfollowedLink(directory, name, call: "chmod", path: path)
        _ = try retryOnInterrupt("chmod", path: path) { fchmodat(directory.rawValue, name, mode, AT_SYMLINK_NOFOLLOW) }
    }

    /// fchownat(2) with AT_SYMLINK_NOFOLLOW (`followingLinks: false`: a
    /// symlink at the end is itself changed); pass `UInt32.max` (-1) to leave
    /// the owner or group unchanged.
    public static func chown(_ path: String, uid: uid_t, gid: gid_t, followingLinks: Bool = true) throws(SystemError) {
        let (directory, name) = try PathWalk.parent(path, followingFinal: followingLinks)
        defer { try? directory.close() }
        if followingLinks { try refuseUnfollowedLink(directory, name, call: "chown", path: path) }
        _ = try retryOnInterrupt(followingLinks ? "chown" : "lchown", path: path) {
            fchownat(directory.rawValue, name, uid, gid, AT_SYMLINK_NOFOLLOW)
        }
    }

    /// Who owns a file and whether it is a directory.
    public struct Status: Sendable, Equatable {
        public var uid: uid_t
        public var gid: gid_t
        public var isDirectory: Bool
        /// Neither a directory nor a regular file (a symlink, FIFO, socket or device).
        public var isSpecial: Bool
    }

    /// fstatat(2) (`followingLinks: false`: a symlink at the end as itself); nil when it fails.
    public static func status(_ path: String, followingLinks: Bool = true) -> Status? {
        guard let (directory, name) = try? PathWalk.parent(path, followingFinal: followingLinks) else { return nil }
        defer { try? directory.close() }
        guard let info = PathWalk.status(directory, name) else { return nil }
        let type = info.st_mode & S_IFMT
        return Status(uid: info.st_uid, gid: info.st_gid, isDirectory: type == S_IFDIR,
                      isSpecial: type != S_IFDIR && type != S_IFREG)
    }

    /// st_mode's permission bits (a symlink's own).
    public static func permissions(_ path: String) throws(SystemError) -> mode_t {
        let (directory, name) = try PathWalk.parent(path, followingFinal: false)
        defer { try? directory.close() }
        var info = stat()
        _ = try retryOnInterrupt("lstat", path: path) { fstatat(directory.rawValue, name, &info, AT_SYMLINK_NOFOLLOW) }
        return info.st_mode & 0o7777
    }

    /// A call that follows symlinks meets one PathWalk would not follow: ELOOP.
    private static func refuseUnfollowedLink(_ directory: FileDescriptor, _ name: String, call: String, path: String) throws(SystemError) {
        if let info = PathWalk.status(directory, name), info.st_mode & S_IFMT == S_IFLNK {
            throw SystemError(call: call, errno: ELOOP, path: path, reason: PathWalk.unfollowed(path).reason)
        }
    }
}
