// PathWalk: how every path-level call of this layer (File, Directory,
// AtomicFile, FileDescriptor.open, UnixSocket.listen) finds its file, so that
// none can be turned against the caller by a directory another user owns
// (issue 27 item 2: root's `localauthctl repair` chowned, and `STATE/lock`
// created, files that the state directory's owner named through symlinks).
//
// A path is walked one component at a time from a directory descriptor
// (openat with O_PATH | O_DIRECTORY | O_NOFOLLOW), and the kernel never
// follows a symlink on the way: the walk follows one itself, and only where
// it sits in a directory that nobody but root and this process's user can
// change (owned by one of them, not writable by group or others). A symlink
// in any other directory (the state directory seen by root, /tmp) is
// refused with ELOOP; so is `..` out of one. The call itself then acts on
// the last component relative to its directory's descriptor, again without
// following it (O_NOFOLLOW, AT_SYMLINK_NOFOLLOW, renameat, unlinkat). A
// walk costs an openat and a close per component; no path here is opened
// per request.
import CLocalAuthShim
import Glibc

private let O_PATH = LA_O_PATH

enum PathWalk {
    /// Symlinks one walk may follow (the kernel's own limit).
    static let symlinkLimit = 40

    /// The directory holding the last component of `path` (an O_PATH
    /// descriptor the caller closes) and that component's name. With
    /// `followingFinal`, a last component that is a symlink in a trusted
    /// directory is followed to what it names; otherwise (or untrusted) the
    /// name is returned as it is, and the caller's call acts on it with
    /// NOFOLLOW. A path that ends in `/` or is `/` names "." of the last directory.
    static func parent(_ path: String, followingFinal: Bool) throws(SystemError) -> (directory: FileDescriptor, name: String) {
        try walk(path, followingFinal: followingFinal, creating: nil)
    }

    /// The directory `path` names, itself (O_PATH; the caller closes it),
    /// creating each missing directory with exactly `mode` when `creating`
    /// is set (mkdirat, then fchmod on the new directory's descriptor: the
    /// umask does not narrow it, and no path is followed to chmod it).
    static func directory(_ path: String, creating mode: mode_t?) throws(SystemError) -> FileDescriptor {
        let (parent, name) = try walk(path, followingFinal: true, creating: mode)
        defer { try? parent.close() }
        if name == "." { return try openPath(parent, ".", path: path) }
        if let mode, mkdirat(parent.rawValue, name, mode) == 0 {
            return try fixMode(parent, name, mode, path: path)
        } else if mode != nil, errno != EEXIST {
            throw .current("mkdir", path: path)
        }
        return try openPath(parent, name, path: path)
    }

    /// Whether a symlink in the directory `fd` may be followed: only root
    /// and this process's effective user can have put it there.
    static func isTrusted(_ fd: FileDescriptor) -> Bool {
        var info = stat()
        guard fstat(fd.rawValue, &info) == 0 else { return false }
        return (info.st_uid == 0 || info.st_uid == geteuid()) && info.st_mode & 0o022 == 0
    }

    /// fstatat without following; nil when the entry does not exist or cannot be seen.
    static func status(_ directory: FileDescriptor, _ name: String) -> stat? {
        var info = stat()
        return fstatat(directory.rawValue, name, &info, AT_SYMLINK_NOFOLLOW) == 0 ? info : nil
    }

    private static func walk(_ path: String, followingFinal: Bool, creating mode: mode_t?) throws(SystemError) -> (directory: FileDescriptor, name: String) {
        guard !path.isEmpty else { throw SystemError(call: "open", errno: ENOENT, path: path) }
        var current = try start(absolute: path.hasPrefix("/"), path: path)
        // Components still to walk, the next one last.
        var remaining = components(path).reversed() as [String]
        var followed = 0
        do throws(SystemError) {
            while let name = remaining.popLast() {
                if name == "." { continue }
                let isLast = remaining.isEmpty
                if isLast {
                    guard followingFinal, let info = status(current, name), info.st_mode & S_IFMT == S_IFLNK,
                          isTrusted(current) else {
                        return (current, name)
                    }
                } else if name == ".." {
                    guard isTrusted(current) else {
                        throw SystemError(call: "open", errno: EACCES, path: path,
                                          reason: "'..' out of a directory another user can change")
                    }
                }
                let next = openat(current.rawValue, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                if next >= 0 {
                    try? current.close()
                    current = FileDescriptor(rawValue: next)
                    continue
                }
                let code = errno
                if code == ENOENT, let mode, !isLast {
                    guard mkdirat(current.rawValue, name, mode) == 0 || errno == EEXIST else { throw .current("mkdir", path: path) }
                    let made = try fixMode(current, name, mode, path: path)
                    try? current.close()
                    current = made
                    continue
                }
                // Not a directory: a symlink is followed only in a trusted directory.
                guard code == ENOTDIR || code == ELOOP || isLast,
                      let info = status(current, name), info.st_mode & S_IFMT == S_IFLNK else {
                    throw SystemError(call: "open", errno: code, path: path)
                }
                guard isTrusted(current) else { throw unfollowed(path) }
                followed += 1
                guard followed <= symlinkLimit else { throw SystemError(call: "open", errno: ELOOP, path: path) }
                let target = try readLink(current, name, path: path)
                remaining += components(target).reversed()
                if target.hasPrefix("/") {
                    try? current.close()
                    current = try start(absolute: true, path: path)
                }
            }
            return (current, ".")
        } catch {
            try? current.close()
            throw error
        }
    }

    private static func components(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    private static func start(absolute: Bool, path: String) throws(SystemError) -> FileDescriptor {
        let fd = open(absolute ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .current("open", path: path) }
        return FileDescriptor(rawValue: fd)
    }

    private static func openPath(_ directory: FileDescriptor, _ name: String, path: String) throws(SystemError) -> FileDescriptor {
        let fd = openat(directory.rawValue, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if let info = status(directory, name), info.st_mode & S_IFMT == S_IFLNK { throw unfollowed(path) }
            throw SystemError(call: "open", errno: code, path: path)
        }
        return FileDescriptor(rawValue: fd)
    }

    /// The refusal of a symlink that is not followed.
    static func unfollowed(_ path: String) -> SystemError {
        SystemError(call: "open", errno: ELOOP, path: path,
                    reason: "a symlink in a directory another user can change, which is not followed")
    }

    /// The directory `name` just made: opened (not followed) and given exactly `mode`.
    private static func fixMode(_ directory: FileDescriptor, _ name: String, _ mode: mode_t, path: String) throws(SystemError) -> FileDescriptor {
        let fd = openat(directory.rawValue, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw .current("open", path: path) }
        let made = FileDescriptor(rawValue: fd)
        do throws(SystemError) { try made.chmod(mode) } catch {
            try? made.close()
            throw error.about(path)
        }
        return made
    }

    private static func readLink(_ directory: FileDescriptor, _ name: String, path: String) throws(SystemError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlinkat(directory.rawValue, name, &buffer, buffer.count - 1)
        guard count > 0 else { throw .current("readlink", path: path) }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
