// Accounts: user and group lookups through NSS (getpwuid_r, getgrnam_r,
// getgrouplist), for rules such as "members of group X may administer".
// Membership counts the user's primary group and supplementary groups, as
// login would set them. A user or group that does not exist is "not a
// member"; a failing lookup (NSS error) is thrown.
import Glibc

public enum Accounts {
    public static func currentUID() -> UInt32 { getuid() }

    /// The gid of group `name`, or nil when there is no such group. As
    /// chown(1) does, a name that no group has but that is a gid in
    /// canonical decimal (no sign, no leading zero, not (gid_t)-1) is that
    /// gid: `AdminGroup=27` means gid 27 (the configuration's words are
    /// "a group name or number").
    public static func groupID(named name: String) throws(SystemError) -> UInt32? {
        var group = Glibc.group()
        var found: UnsafeMutablePointer<Glibc.group>?
        try withLookupBuffer("getgrnam_r") { buffer in getgrnam_r(name, &group, buffer.baseAddress!, buffer.count, &found) }
        if let found { return found.pointee.gr_gid }
        return numericGroupID(name)
    }

    /// `text` as a gid in canonical decimal, or nil.
    static func numericGroupID(_ text: String) -> UInt32? {
        let digits = Array(text.utf8)
        guard !digits.isEmpty, digits.count <= 10, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              digits.count == 1 || digits[0] != 0x30,
              let value = UInt32(text), value != UInt32.max else { return nil }
        return value
    }

    /// The name of group `gid`, or nil when there is no such group.
    public static func groupName(gid: UInt32) throws(SystemError) -> String? {
        var group = Glibc.group()
        var name: String?
        try withLookupBuffer("getgrgid_r") { buffer in
            var found: UnsafeMutablePointer<Glibc.group>?
            let rc = getgrgid_r(gid, &group, buffer.baseAddress!, buffer.count, &found)
            // Read the name before the buffer it points into is released.
            if rc == 0, let found { name = String(cString: found.pointee.gr_name) }
            return rc
        }
        return name
    }

    /// The user name and primary gid of `uid`, or nil when there is no such user.
    public static func user(uid: UInt32) throws(SystemError) -> (name: String, gid: UInt32)? {
        var entry = passwd()
        var result: (name: String, gid: UInt32)?
        try withLookupBuffer("getpwuid_r") { buffer in
            var found: UnsafeMutablePointer<passwd>?
            let rc = getpwuid_r(uid, &entry, buffer.baseAddress!, buffer.count, &found)
            // Read the strings before the buffer they point into is released.
            if rc == 0, let found { result = (String(cString: found.pointee.pw_name), found.pointee.pw_gid) }
            return rc
        }
        return result
    }

    /// The gids of `uid`'s primary and supplementary groups; empty when there is no such user.
    public static func groupIDs(uid: UInt32) throws(SystemError) -> [UInt32] {
        guard let user = try user(uid: uid) else { return [] }
        var count: Int32 = 32
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            let capacity = count
            if getgrouplist(user.name, user.gid, &groups, &count) >= 0 {
                return Array(groups.prefix(Int(count)))
            }
            // -1 with `count` raised to what is needed; guard against a count that did not grow.
            if count <= capacity { count = capacity * 2 }
            if count > 65536 { throw SystemError(call: "getgrouplist", errno: ERANGE, path: user.name) }
        }
    }

    /// Whether `uid` belongs to group `name` (primary or supplementary).
    public static func isMember(uid: UInt32, ofGroupNamed name: String) throws(SystemError) -> Bool {
        guard let gid = try groupID(named: name) else { return false }
        return try groupIDs(uid: uid).contains(gid)
    }

    /// Runs a *_r lookup with a buffer that grows while it answers ERANGE.
    /// `body` returns the lookup's result code (0, or an errno value).
    private static func withLookupBuffer(
        _ call: String, _ body: (UnsafeMutableBufferPointer<CChar>) -> Int32
    ) throws(SystemError) {
        var size = 1024
        while true {
            let buffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: size)
            defer { buffer.deallocate() }
            let rc = body(buffer)
            switch rc {
            case 0: return
            case EINTR: continue
            case ERANGE where size < 1 << 20: size *= 2
            default: throw SystemError(call: call, errno: rc)
            }
        }
    }
}
