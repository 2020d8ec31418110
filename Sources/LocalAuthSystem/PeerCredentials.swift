// PeerCredentials: who is on the other end of a Unix socket, from the kernel
// (SO_PEERCRED), as of connect(2). The daemon's only source of caller identity.
import CLocalAuthShim

public struct PeerCredentials: Hashable, Sendable {
    public let pid: Int32
    public let uid: UInt32
    public let gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// The credentials of `socket`'s peer.
    public init(socket: FileDescriptor) throws(SystemError) {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
        _ = try retryOnInterrupt("getsockopt(SO_PEERCRED)") { la_peer_credentials(socket.rawValue, &pid, &uid, &gid) }
        self.init(pid: pid, uid: uid, gid: gid)
    }

    /// The real uid of `socket`'s peer process now (a setuid program's
    /// invoker), or nil when the kernel cannot say race-free (before Linux
    /// 6.13, or the peer has exited). Read through the peer's pidfd, never
    /// by pid: a pid can be reused between the connect and the look.
    public static func realUID(of socket: FileDescriptor) -> UInt32? {
        var ruid: UInt32 = 0
        return la_peer_real_uid(socket.rawValue, &ruid) == 0 ? ruid : nil
    }
}
