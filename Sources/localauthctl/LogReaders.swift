// What to tell a user who may not read the event log: which groups may (the
// daemon names AuditGroup= and AdminGroup= in the state directory's ACL at
// each start, LogReadAccess in LocalAuthServer), and how to join one; or,
// when no group may, how to let one. The ACL is read from the disk, not from
// localauthd.conf, so the answer is true for `-D DIR` as well, and reading
// an ACL needs no permission on the directory itself.
import Glibc
import LocalAuthSystem

enum LogReaders {
    /// The sentences after "permission denied." for the log of `directory`.
    static func advice(_ directory: String) -> String {
        let gids = ((try? AccessControlList.read(directory, .access)) ?? nil).map { acl in
            acl.groups.keys.sorted().filter { acl.effective(group: $0) & 1 != 0 }
        } ?? []
        guard !gids.isEmpty else {
            return "The state directory belongs to the daemon; run this as root (sudo) or as the daemon's user, "
                + "or let a group read the log with AuditGroup= (localauthd.conf(5)) and join that group."
        }
        let names = gids.map { gid in ((try? Accounts.groupName(gid: gid)) ?? nil) ?? String(gid) }
        let listed = names.joined(separator: ", ")
        // Joined since this session began: the kernel has the old group list.
        let joined = ((try? Accounts.groupIDs(uid: getuid())) ?? []).first { gids.contains($0) }
        if let joined, !sessionGroups().contains(joined) {
            let name = names[gids.firstIndex(of: joined)!]
            return "You are a member of \(name), but this session started before you joined it: "
                + "log in again (or run `newgrp \(name)`)."
        }
        let user = ((try? Accounts.user(uid: getuid())) ?? nil)?.name ?? "USER"
        return "Root, the daemon's user and the members of \(gids.count == 1 ? "group" : "the groups") \(listed) "
            + "(AuditGroup=, AdminGroup=) may read it: join \(gids.count == 1 ? "it" : "one") "
            + "(`usermod -aG \(names[0]) \(user)`, then log in again) or use sudo."
    }

    /// The calling process's supplementary groups and its gid.
    private static func sessionGroups() -> [UInt32] {
        let count = getgroups(0, nil)
        guard count > 0 else { return [getegid()] }
        var groups = [gid_t](repeating: 0, count: Int(count))
        let got = getgroups(count, &groups)
        return Array(groups.prefix(Int(max(got, 0)))) + [getegid()]
    }
}
