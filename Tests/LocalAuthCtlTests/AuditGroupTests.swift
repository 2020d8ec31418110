// AuditGroup= and AdminGroup= (issue 20): their members run `localauthctl
// log`, `replay` and `verify` without root, on segments and snapshots made
// before and after the start; anyone else is refused with the groups to join;
// the passcode store, secrets.key, the rights store and the lock stay 0600
// with no ACL, unreadable by the members; a start without the groups takes
// the access away. The readers are uid 65534 with the kernel group list
// setpriv gives them (what login would give a member), so no account is made.
import Foundation
import Glibc
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class AuditGroupTests: XCTestCase {
    var daemon: DaemonProcess!
    var audit: UInt32 = 0
    var admins: UInt32 = 0

    override func setUpWithError() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to run localauthctl as another uid") }
        // Two groups every Debian system has, neither of them uid 65534's.
        guard let staff = try Accounts.groupID(named: "staff"), let users = try Accounts.groupID(named: "users") else {
            throw XCTSkip("needs the groups staff and users")
        }
        (audit, admins) = (staff, users)
        daemon = try DaemonProcess(configuration: Self.configuration(groups: true), options: .forClients)
        // Traversal only for others (0711): the state directory's modes are the daemon's.
        XCTAssertEqual(chmod(daemon.directory.path, 0o711), 0)
    }

    override func tearDown() {
        if let daemon, daemon.isRunning { XCTAssertEqual(daemon.stop(), 0, daemon.stderr) }
        daemon = nil
        super.tearDown()
    }

    /// Small segments and frequent snapshots, so that both exist before and after a start.
    static func configuration(groups: Bool) -> String {
        "[Biometry]\nType=touchID\n[Log]\nSegmentSize=4K\nSnapshotEvery=5\n"
            + (groups ? "[Daemon]\nAuditGroup=staff\nAdminGroup=users\n" : "")
    }

    /// localauthctl ARGS as uid 65534 with exactly `groups` as its groups.
    func ctlAsNobody(_ arguments: [String], groups: [UInt32]) throws -> CtlResult {
        let identity = ["--reuid=65534", "--regid=65534"]
            + (groups.isEmpty ? ["--clear-groups"] : ["--groups=" + groups.map(String.init).joined(separator: ",")])
        let (code, out, err) = try runToCompletion("/usr/bin/setpriv", identity + ["--", try ctlBinary()] + arguments)
        return CtlResult(code: code, out: out, err: err)
    }

    func makeHistory(_ admin: Admin, from first: Int) throws {
        for i in first..<(first + 80) { try admin.ok("enroll uid=1000 template=t\(i)") }
    }

    func testMembersOfAuditGroupAndAdminGroupReadTheLogWithoutRoot() throws {
        let admin = try Admin(daemon.socketPath)
        try admin.ok("set-passcode secret=1234")
        try admin.ok("right-save identifier=com.example.audit requirement=biometry secret=c2VjcmV0")
        try makeHistory(admin, from: 0)
        XCTAssertTrue(daemon.stderr.contains("The event log is readable by the members of staff (gid \(audit)), "
            + "users (gid \(admins))"), daemon.stderr)
        let state = daemon.stateDirectory
        let segments = try Directory.entries(state + "/log").filter { $0.hasSuffix(".seg") }
        XCTAssertGreaterThan(segments.count, 1, "the log rotated since the start")
        XCTAssertFalse(try Directory.entries(state + "/snapshots").isEmpty, "snapshots were written")

        for (group, name) in [(audit, "AuditGroup"), (admins, "AdminGroup")] {
            let log = try ctlAsNobody(["log", "-D", state, "-o", "json", "--no-pager"], groups: [group])
            XCTAssertEqual(log.code, 0, "\(name): \(log.err)")
            // Snapshots are recorded off the loop: the log may grow, never differ.
            let everything = try ctl(["log", "-D", state, "-o", "json", "--no-pager"])
            XCTAssertEqual(everything.code, 0, everything.err)
            XCTAssertGreaterThan(log.lines.count, 80)
            XCTAssertEqual(log.lines, Array(everything.lines.prefix(log.lines.count)), "\(name) reads every segment")
            let replay = try ctlAsNobody(["replay", "-D", state, "-o", "json"], groups: [group])
            XCTAssertEqual(replay.code, 0, "\(name): \(replay.err)")
            XCTAssertEqual((jsonObject(replay.out)["users"] as? [String: Any])?.keys.contains("1000"), true, replay.out)
            let verify = try ctlAsNobody(["verify", "-D", state], groups: [group])
            XCTAssertEqual(verify.code, 0, "\(name): \(verify.err)")
            XCTAssertTrue(verify.out.contains("snapshots agree"), "\(name) reads the snapshots: \(verify.out)")
        }

        for verb in [["log", "--no-pager"], ["replay"], ["verify"]] {
            let refused = try ctlAsNobody([verb[0], "-D", state] + verb.dropFirst(), groups: [])
            XCTAssertEqual(refused.code, 1, "\(verb): \(refused.out)")
            for expected in ["permission denied", "staff, users", "join one", "usermod -aG staff"] {
                XCTAssertTrue(refused.err.contains(expected), "\(verb) says \(expected): \(refused.err)")
            }
        }

        // The log's files: 0640 with the groups' read; the secrets: 0600, no ACL, closed to the members.
        for name in segments {
            let path = state + "/log/" + name
            XCTAssertEqual(try File.permissions(path), 0o640, name)
            XCTAssertEqual(try AccessControlList.read(path, .access)?.effective(group: audit), 4, name)
        }
        for name in ["passcodes", "secrets.key", "rights", "lock"] {
            let path = state + "/" + name
            XCTAssertTrue(File.exists(path), name)
            XCTAssertEqual(try File.permissions(path), 0o600, name)
            XCTAssertNil(try AccessControlList.read(path, .access), "\(name) has no ACL")
            let (code, _, err) = try runToCompletion("/usr/bin/setpriv", [
                "--reuid=65534", "--regid=65534", "--groups=\(audit),\(admins)", "--", "/bin/cat", path,
            ])
            XCTAssertNotEqual(code, 0, "\(name) is closed to the members")
            XCTAssertTrue(err.contains("Permission denied"), "\(name): \(err)")
        }
        // Traverse, not list: the state directory's names are not shown to the members.
        let (code, _, _) = try runToCompletion("/usr/bin/setpriv", [
            "--reuid=65534", "--regid=65534", "--groups=\(audit)", "--", "/bin/ls", state,
        ])
        XCTAssertNotEqual(code, 0)
    }

    func testAStartWithoutTheGroupsTakesTheirAccessAway() throws {
        let state = daemon.stateDirectory
        try makeHistory(try Admin(daemon.socketPath), from: 0)
        XCTAssertEqual(try ctlAsNobody(["verify", "-D", state], groups: [audit]).code, 0)
        XCTAssertEqual(daemon.stop(), 0, daemon.stderr)

        try Self.configuration(groups: false).write(toFile: daemon.directory.path + "/localauthd.conf", atomically: true, encoding: .utf8)
        try daemon.start()
        try makeHistory(try Admin(daemon.socketPath), from: 80)
        for groups in [[audit], [admins]] {
            let refused = try ctlAsNobody(["log", "-D", state, "--no-pager"], groups: groups)
            XCTAssertEqual(refused.code, 1, refused.out)
            XCTAssertTrue(refused.err.contains("permission denied"), refused.err)
            XCTAssertTrue(refused.err.contains("AuditGroup="), "says how to let a group read it: \(refused.err)")
        }
        XCTAssertEqual(try File.permissions(state), 0o700)
        for directory in ["log", "snapshots"] {
            XCTAssertEqual(try File.permissions(state + "/" + directory), 0o750, directory)
            XCTAssertNil(try AccessControlList.read(state + "/" + directory, .default), directory)
            for name in try Directory.entries(state + "/" + directory) {
                XCTAssertNil(try AccessControlList.read(state + "/\(directory)/" + name, .access), name)
            }
        }
    }
}
