// The shell's side of S-53 (LocalAuthCore's Principal says the rule): the
// facts a connection's principal is judged by, gathered once, at accept, so
// that no request line ever pays for them. The peer's real uid comes from
// its pidfd (PeerCredentials.realUID; a D-Bus caller's from the process
// the bus named, PinnedProcess.realUID); the subordinate ranges from
// /etc/subuid, with owner names resolved through /etc/passwd (files only:
// no NSS lookup on the loop; a name it lacks keys its own range). Both files
// are read again when their inode, size or time changes (a stat each per
// accept), so a user added with useradd counts from their next connection.
import Glibc
import LocalAuthCore
import LocalAuthSystem

final class CallerPrincipals {
    let subuidPath: String
    let passwdPath: String
    private(set) var ranges = SubordinateRanges()
    /// Set when the ranges were read again, until `takeChangedRanges`.
    private var rangesChanged = false
    private var subuidStamp: FileStamp?
    private var passwdStamp: FileStamp?

    init(subuidPath: String = "/etc/subuid", passwdPath: String = "/etc/passwd") {
        self.subuidPath = subuidPath
        self.passwdPath = passwdPath
    }

    /// The principal of the peer on `socket` (SO_PEERCRED's `peer`).
    func principal(of peer: PeerCredentials, on socket: FileDescriptor) -> Principal {
        refreshRanges()
        return Principal.of(peerUID: peer.uid, realUID: PeerCredentials.realUID(of: socket), ranges: ranges)
    }

    /// The principal of a D-Bus caller: the bus's uid for it, and its
    /// process as pinned when the bus named its pid (nil: none).
    func principal(ofBusCaller uid: UserID, process: PinnedProcess?) -> Principal {
        refreshRanges()
        return Principal.of(peerUID: uid, realUID: process?.realUID, ranges: ranges)
    }

    /// Reads the files again when either changed (none: no ranges).
    func refreshRanges() {
        let subuid = FileStamp(subuidPath), passwd = FileStamp(passwdPath)
        guard subuid != subuidStamp || passwd != passwdStamp else { return }
        subuidStamp = subuid
        passwdStamp = passwd
        rangesChanged = true
        guard subuid != nil, let text = try? File.read(subuidPath, maxSize: 16 << 20) else {
            ranges = SubordinateRanges()
            return
        }
        let names = CallerPrincipals.uids(inPasswd: (try? File.read(passwdPath, maxSize: 64 << 20)) ?? [])
        ranges = SubordinateRanges(subuid: String(decoding: text, as: UTF8.self)) { names[$0] }
    }

    /// The ranges, when they changed since the last call (for the core).
    func takeChangedRanges() -> SubordinateRanges? {
        guard rangesChanged else { return nil }
        rangesChanged = false
        return ranges
    }

    /// name -> uid of a passwd(5) file's lines.
    static func uids(inPasswd bytes: [UInt8]) -> [String: UserID] {
        var names: [String: UserID] = [:]
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: ":"), maxSplits: 3, omittingEmptySubsequences: false)
            guard fields.count >= 3, !fields[0].isEmpty,
                  let uid = UInt32(String(decoding: fields[2], as: UTF8.self)) else { continue }
            let name = String(decoding: fields[0], as: UTF8.self)
            if names[name] == nil { names[name] = uid }
        }
        return names
    }
}

/// What tells a file changed: its inode, size and modification time.
struct FileStamp: Equatable {
    var inode: UInt64
    var size: Int64
    var seconds: Int
    var nanoseconds: Int

    init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        seconds = info.st_mtim.tv_sec
        nanoseconds = info.st_mtim.tv_nsec
    }
}
