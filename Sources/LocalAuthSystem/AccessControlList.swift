// AccessControlList: a POSIX ACL (acl(5)) in the form the kernel keeps it, in
// the extended attributes system.posix_acl_access (who may do what with a
// file) and system.posix_acl_default (what a directory's new entries start
// with). The daemon grants AuditGroup= and AdminGroup= read access to its log
// with them (LogReadAccess in LocalAuthServer): the owner of a file may set
// its ACL, whereas a chgrp to a group the daemon is not in would need root.
//
// The attribute's format (linux/posix_acl_xattr.h): a little-endian u32
// version (2), then entries of (u16 tag, u16 permissions, u32 id) ordered by
// tag, then id. With named entries a mask entry is required, and the mode's
// group bits are then the mask: chmod changes the mask, not the owning
// group's entry, and the mask caps every named entry.
import CLocalAuthShim
import Glibc

public struct AccessControlList: Equatable, Sendable {
    public enum Kind: Sendable {
        case access, `default`

        public var attribute: String { self == .access ? "system.posix_acl_access" : "system.posix_acl_default" }
    }

    /// Permission bits, as in a mode's triplets: 4 read, 2 write, 1 execute (search).
    public var owner: UInt16
    public var owningGroup: UInt16
    /// Named users and groups: id → permission bits.
    public var users: [UInt32: UInt16]
    public var groups: [UInt32: UInt16]
    /// nil without named entries (then the mode's group bits are the owning group's).
    public var mask: UInt16?
    public var other: UInt16

    /// An ACL whose mask is the union of the group class (owning group and
    /// named entries), as setfacl computes it: every entry is effective.
    public init(owner: UInt16, owningGroup: UInt16, users: [UInt32: UInt16] = [:], groups: [UInt32: UInt16], other: UInt16) {
        self.owner = owner
        self.owningGroup = owningGroup
        self.users = users
        self.groups = groups
        self.other = other
        let named = users.values.reduce(0, |) | groups.values.reduce(0, |)
        mask = users.isEmpty && groups.isEmpty ? nil : owningGroup | named
    }

    private enum Tag: UInt16 {
        case userObject = 0x01, user = 0x02, groupObject = 0x04, group = 0x08, mask = 0x10, other = 0x20
    }
    private static let version: UInt32 = 2
    private static let undefinedID: UInt32 = .max

    /// The attribute's bytes.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        func put32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        func entry(_ tag: Tag, _ permissions: UInt16, _ id: UInt32 = Self.undefinedID) {
            withUnsafeBytes(of: tag.rawValue.littleEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: (permissions & 7).littleEndian) { bytes.append(contentsOf: $0) }
            put32(id)
        }
        put32(Self.version)
        entry(.userObject, owner)
        for (uid, permissions) in users.sorted(by: { $0.key < $1.key }) { entry(.user, permissions, uid) }
        entry(.groupObject, owningGroup)
        for (gid, permissions) in groups.sorted(by: { $0.key < $1.key }) { entry(.group, permissions, gid) }
        if let mask { entry(.mask, mask) }
        entry(.other, other)
        return bytes
    }

    /// Parses an attribute's bytes; nil when they are not a version-2 ACL
    /// with the three required entries.
    public init?(decoding bytes: [UInt8]) {
        func read(_ offset: Int, _ width: Int) -> UInt32 {
            (0..<width).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
        }
        guard bytes.count >= 4, (bytes.count - 4) % 8 == 0, read(0, 4) == Self.version else { return nil }
        var owner: UInt16?, owningGroup: UInt16?, other: UInt16?, mask: UInt16?
        var users: [UInt32: UInt16] = [:], groups: [UInt32: UInt16] = [:]
        for offset in stride(from: 4, to: bytes.count, by: 8) {
            let permissions = UInt16(read(offset + 2, 2)) & 7
            let id = read(offset + 4, 4)
            switch Tag(rawValue: UInt16(read(offset, 2))) {
            case .userObject: owner = permissions
            case .user: users[id] = permissions
            case .groupObject: owningGroup = permissions
            case .group: groups[id] = permissions
            case .mask: mask = permissions
            case .other: other = permissions
            case nil: return nil
            }
        }
        guard let owner, let owningGroup, let other else { return nil }
        self.owner = owner
        self.owningGroup = owningGroup
        self.users = users
        self.groups = groups
        self.mask = mask
        self.other = other
    }

    /// The permissions a named group actually has: its entry capped by the mask.
    public func effective(group gid: UInt32) -> UInt16 {
        (groups[gid] ?? 0) & (mask ?? 7)
    }

    /// The ACL of `path` (symlinks followed), nil when it has none. Reading
    /// an ACL needs no permission on the file itself, only the way to it.
    public static func read(_ path: String, _ kind: Kind) throws(SystemError) -> AccessControlList? {
        try decode(call: "getxattr", path: path) { buffer, size in la_getxattr(path, kind.attribute, buffer, size) }
    }

    static func decode(
        call: String, path: String?, _ get: (UnsafeMutableRawPointer?, Int) -> Int
    ) throws(SystemError) -> AccessControlList? {
        while true {
            let needed = get(nil, 0)
            if needed < 0 {
                if errno == ENODATA { return nil }
                if errno == EINTR { continue }
                throw .current(call, path: path)
            }
            var bytes = [UInt8](repeating: 0, count: needed)
            let got = bytes.withUnsafeMutableBytes { get($0.baseAddress, $0.count) }
            if got < 0 {
                if errno == ERANGE || errno == EINTR { continue }  // it grew in between
                if errno == ENODATA { return nil }
                throw .current(call, path: path)
            }
            guard let acl = AccessControlList(decoding: Array(bytes.prefix(got))) else {
                throw SystemError(call: call, errno: EINVAL, path: path)
            }
            return acl
        }
    }
}

extension FileDescriptor {
    /// Replaces the file's ACL of `kind` (the mode follows an access ACL).
    public func setACL(_ acl: AccessControlList, _ kind: AccessControlList.Kind) throws(SystemError) {
        let bytes = acl.encoded()
        _ = try retryOnInterrupt("fsetxattr(\(kind.attribute))") {
            bytes.withUnsafeBytes { la_fsetxattr(rawValue, kind.attribute, $0.baseAddress, $0.count) }
        }
    }

    /// Removes the file's ACL of `kind`; false when it had none (asked
    /// first: removing an absent ACL succeeds on ext4 and tmpfs).
    @discardableResult
    public func removeACL(_ kind: AccessControlList.Kind) throws(SystemError) -> Bool {
        guard try acl(kind) != nil else { return false }
        while la_fremovexattr(rawValue, kind.attribute) != 0 {
            if errno == ENODATA { return false }
            if errno != EINTR { throw .current("fremovexattr(\(kind.attribute))") }
        }
        return true
    }

    /// The file's ACL of `kind`, nil when it has none.
    public func acl(_ kind: AccessControlList.Kind) throws(SystemError) -> AccessControlList? {
        try AccessControlList.decode(call: "fgetxattr", path: nil) { buffer, size in
            la_fgetxattr(rawValue, kind.attribute, buffer, size)
        }
    }
}
