// A peer's process, held by a pidfd so that what is learnt about "pid N"
// is known to be about the process that connected, not another that got
// its number after it exited (S-65). The pidfd comes from the socket
// (SO_PEERPIDFD, Linux 6.5: the process the kernel recorded at connect(2));
// on an older kernel from pidfd_open(pid), which a process that passed its
// connection on and exited can defeat (the daemon says so in its journal).
// A fact about the pid (logind's answer, /proc) counts only if the process
// is still alive once the fact is in: alive then, the pid was never reused.
import CLocalAuthShim
import Glibc

public final class PinnedProcess {
    public let pid: Int32
    /// The pidfd's inode: on pidfs (Linux 6.9) one per process, never
    /// reused while the system runs; what an agent compares with its own
    /// pidfd of `pid` (S-67). nil where the kernel cannot say.
    public let inode: UInt64?
    /// Whether the pidfd came from the socket itself (SO_PEERPIDFD).
    public let fromSocket: Bool
    private var fd: Int32

    /// The process at the other end of `socket`, whose SO_PEERCRED pid is `pid`.
    public init(peerOf socket: Int32, pid: Int32) throws(SystemError) {
        self.pid = pid
        var descriptor = la_peer_pidfd(socket)
        fromSocket = descriptor >= 0
        if descriptor < 0 {
            guard errno == ENOPROTOOPT || errno == EINVAL else { throw SystemError.current("getsockopt(SO_PEERPIDFD)") }
            descriptor = la_pidfd_open(pid)
            if descriptor < 0 { throw SystemError.current("pidfd_open") }
        }
        fd = descriptor
        var inode: UInt64 = 0
        self.inode = la_pidfd_inode(descriptor, &inode) == 0 ? inode : nil
    }

    /// Process `pid` as it is now (pidfd_open): what an agent does with the
    /// `app-pid` it is told, to compare inodes (S-67).
    public init(pid: Int32) throws(SystemError) {
        self.pid = pid
        fromSocket = false
        fd = la_pidfd_open(pid)
        if fd < 0 { throw SystemError.current("pidfd_open") }
        var inode: UInt64 = 0
        self.inode = la_pidfd_inode(fd, &inode) == 0 ? inode : nil
    }

    deinit { close() }

    /// The process's real uid now (a setuid program's invoker, S-53), or
    /// nil where the kernel cannot say (before Linux 6.13) or the process
    /// has exited: then the pid may already name another process.
    public var realUID: UInt32? {
        var ruid: UInt32 = 0
        guard fd >= 0, la_pidfd_real_uid(fd, &ruid) == 0, !hasExited else { return nil }
        return ruid
    }

    /// True once the process has exited (or its pidfd cannot be asked).
    public var hasExited: Bool { fd < 0 || la_pidfd_exited(fd) != 0 }

    public func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
    }
}
