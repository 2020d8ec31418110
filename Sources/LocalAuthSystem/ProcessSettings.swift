// Process-wide settings the daemon makes once at its start: the file creation
// mask and the open-file limit (every connection is a descriptor); and the
// switch to a state directory's owner that root's `localauthctl repair` makes.
import CLocalAuthShim
import Glibc

public enum ProcessSettings {
    /// umask(2): the bits no file or directory this process creates gets.
    public static func setFileCreationMask(_ mask: mode_t) {
        umask(mask)
    }

    /// Lifts the soft RLIMIT_NOFILE to `wanted` (at most the hard limit);
    /// never lowers it. Best effort: a failing call leaves the limit as it is.
    public static func raiseOpenFileLimit(to wanted: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let target = rlim_t(wanted)
        if limit.rlim_cur < target {
            limit.rlim_cur = min(target, limit.rlim_max)
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }
}

extension ProcessSettings {
    /// Root working in a directory another user owns becomes that user, for
    /// good (setgroups to the owner's groups, setresgid, setresuid): what it
    /// creates there is the owner's, and nothing the owner places there
    /// (a symlink, a hard link, a swapped subdirectory) can make root act on
    /// a file the owner could not touch itself (issue 27 item 2). The
    /// kernel also makes the process non-dumpable, so the owner cannot
    /// ptrace it. Returns the owner's uid when it changed user, nil when
    /// nothing was to be done (not root, or the owner is root).
    public static func becomeOwner(of directory: String) throws(SystemError) -> uid_t? {
        guard geteuid() == 0 else { return nil }
        guard let owner = File.status(directory) else { throw .current("stat", path: directory) }
        guard owner.uid != 0 else { return nil }
        // The owner's groups as login would set them; a uid without a passwd
        // entry gets the directory's group alone.
        let user = try? Accounts.user(uid: owner.uid)
        let gid = user?.gid ?? owner.gid
        var groups = (try? Accounts.groupIDs(uid: owner.uid)) ?? []
        if groups.isEmpty { groups = [gid] }
        let rc = groups.withUnsafeBufferPointer { la_become(owner.uid, gid, $0.baseAddress, Int32($0.count)) }
        guard rc == 0 else {
            throw SystemError(call: "setresuid", errno: errno, path: directory,
                              reason: "could not become the owner of \(directory) (uid \(owner.uid)): \(SystemError.current("setresuid").message)")
        }
        return owner.uid
    }
}
