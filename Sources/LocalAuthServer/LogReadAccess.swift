// Who may read the event log besides root and the daemon's own user: the
// members of AuditGroup= and AdminGroup= (issue 20), so that `localauthctl
// log`, `replay` and `verify` run without root. The daemon cannot chgrp its
// files to a group it is not in (and its unit's system call filter has no
// chown at all), and one owning group cannot name two groups, so it grants
// them with POSIX ACLs on the files it owns, as journald's files are granted
// to adm and wheel:
//
//   STATE                      0700, + group:G:--x  traverse only: a name in
//                                                   it can be opened if its
//                                                   mode allows, not listed
//   STATE/log, STATE/snapshots 0750, + group:G:r-x, and the same as a default
//                              ACL, which files created later inherit
//   their files                0640, + group:G:r--
//
// The passcode store, secrets.key, the rights store and the lock stay 0600
// with no ACL, so the traverse right opens none of them. Applied at each
// start, before the log is opened: a group taken out of the configuration
// loses its access at the next start (a reload says so). Failing to grant
// or revoke is logged and does not stop the start: the daemon serves, and
// the log never holds a secret.
import Glibc
import LocalAuthConfig
import LocalAuthSystem

enum LogReadAccess {
    /// The directories whose files readers need (`localauthctl log` reads
    /// segments and seals; `replay` and `verify` snapshots too).
    static let readDirectories = ["log", "snapshots"]

    /// AuditGroup= and AdminGroup= with their gids (one entry per gid), and
    /// the names that are no group (DaemonLog warns about those already).
    static func groups(_ daemon: DaemonConfiguration.Daemon) -> [(name: String, gid: UInt32)] {
        var found: [(name: String, gid: UInt32)] = []
        for name in [daemon.auditGroup, daemon.adminGroup].compactMap({ $0 }) where !name.isEmpty {
            guard let gid = (try? Accounts.groupID(named: name)) ?? nil, !found.contains(where: { $0.gid == gid }) else { continue }
            found.append((name, gid))
        }
        return found
    }

    /// Grants (or, with no group, revokes) read access to the log of
    /// `stateDirectory`, and says what it did in the daemon's log.
    static func applyAtStart(_ daemon: DaemonConfiguration.Daemon, stateDirectory: String) {
        let readers = groups(daemon)
        var problems: [SystemError] = []
        let files = apply(stateDirectory: stateDirectory, gids: readers.map(\.gid)) { problems.append($0) }
        if problems.contains(where: { $0.errno == EOPNOTSUPP }) {
            DaemonLog.error("The file system of \(stateDirectory) has no POSIX ACLs: the members of "
                + readers.map(\.name).joined(separator: ", ") + " cannot read the event log without root.")
        } else {
            for problem in problems.prefix(5) { DaemonLog.error("Failed to set who may read the event log: \(problem)") }
        }
        if !readers.isEmpty, problems.isEmpty {
            DaemonLog.info("The event log is readable by the members of "
                + readers.map { "\($0.name) (gid \($0.gid))" }.joined(separator: ", ") + " (ACLs on \(files) files).")
        }
    }

    /// The work of `applyAtStart`; returns how many files and directories
    /// carry the grant. Each failure goes to `problem` and the rest goes on.
    static func apply(stateDirectory: String, gids: [UInt32], problem: (SystemError) -> Void) -> Int {
        // Nothing was ever granted here (the common case, no group set):
        // no need to visit every file to revoke.
        if gids.isEmpty, !hasGrant(stateDirectory), !hasGrant(stateDirectory + "/log") { return 0 }
        var granted = 0
        let traverse = Dictionary(uniqueKeysWithValues: gids.map { ($0, UInt16(1)) })
        if set(stateDirectory, isDirectory: true, owner: 7, owningGroup: 0, groups: traverse, other: 0, problem: problem,
               revokedMode: 0o700) {
            granted += 1
        }
        for name in readDirectories {
            let directory = stateDirectory + "/" + name
            do throws(SystemError) { try Directory.create(directory, mode: 0o750) } catch {
                problem(error)
                continue
            }
            let read = Dictionary(uniqueKeysWithValues: gids.map { ($0, UInt16(5)) })
            if set(directory, isDirectory: true, owner: 7, owningGroup: 5, groups: read, other: 0, inherited: true,
                   problem: problem) { granted += 1 }
            let entries: [String]
            do throws(SystemError) { entries = try Directory.entries(directory) } catch {
                problem(error)
                continue
            }
            let readOnly = read.mapValues { $0 & 4 }
            for entry in entries where isRegularFile(directory + "/" + entry) {
                if set(directory + "/" + entry, owner: 6, owningGroup: 4, groups: readOnly, other: 0, problem: problem) {
                    granted += 1
                }
            }
        }
        return granted
    }

    /// Gives `path` exactly these permissions with `groups` named (and, for a
    /// directory with `inherited`, the same as its default ACL); with no
    /// group, removes the ACLs, and sets `revokedMode` when one was there.
    /// True when the grant is in place.
    private static func set(
        _ path: String, isDirectory: Bool = false, owner: UInt16, owningGroup: UInt16, groups: [UInt32: UInt16], other: UInt16,
        inherited: Bool = false, problem: (SystemError) -> Void, revokedMode: mode_t? = nil
    ) -> Bool {
        let fd: FileDescriptor
        do throws(SystemError) {
            // Never followed; a FIFO or device planted here is refused unopened (FileDescriptor.open).
            fd = try FileDescriptor.open(path, .readOnly, options: isDirectory ? [.noFollow, .directory] : [.noFollow])
        } catch {
            if error.errno != ENOENT { problem(error) }  // gone since the listing: a snapshot replaced
            return false
        }
        defer { try? fd.close() }
        do throws(SystemError) {
            if groups.isEmpty {
                let removed = try fd.removeACL(.access)
                if inherited { try fd.removeACL(.default) }
                if removed, let revokedMode { try fd.chmod(revokedMode) }
                return false
            }
            let acl = AccessControlList(owner: owner, owningGroup: owningGroup, groups: groups, other: other)
            try fd.setACL(acl, .access)
            if inherited { try fd.setACL(acl, .default) }
            return true
        } catch {
            problem(error.about(path))
            return false
        }
    }

    private static func hasGrant(_ directory: String) -> Bool {
        guard let fd = try? FileDescriptor.open(directory, .readOnly, options: [.noFollow, .directory]) else { return false }
        defer { try? fd.close() }
        return ((try? fd.acl(.access)) ?? nil)?.groups.isEmpty == false
    }

    private static func isRegularFile(_ path: String) -> Bool {
        guard let status = File.status(path, followingLinks: false) else { return false }
        return !status.isDirectory && !status.isSpecial
    }
}

extension ServerCore {
    /// The log's readers are set at start (LogReadAccess); a reload says so
    /// rather than seeming to grant or revoke.
    func noteRestartOnlyLogReaders(_ fresh: DaemonConfiguration) {
        let old = configuration.daemon
        if fresh.daemon.auditGroup != old.auditGroup || fresh.daemon.adminGroup != old.adminGroup {
            journal(.notice, "Who may read the event log (AuditGroup=, AdminGroup=) changes at the next start "
                + "(systemctl restart localauthd); AdminGroup='s administrators change now.")
        }
    }
}
