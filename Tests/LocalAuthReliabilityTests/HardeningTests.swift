// Issue 15 items 7, 8 and 12 against the real daemon: it is not dumpable
// (S-50), administrator rights are judged at each request (S-51), and a
// uid is accepted in one spelling only.
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class HardeningTests: ReliabilityTestCase {
    /// S-50: a non-dumpable process's /proc files belong to root, whatever
    /// uid it runs as. As root, the daemon runs as nobody so that this shows.
    func testTheDaemonIsNotDumpable() throws {
        let asNobody = getuid() == 0
        let base = TemporaryDirectory()
        let state = base.path + "/state"
        if asNobody {
            mkdir(state, 0o700)
            chown(state, 65534, 65534)
            chmod(base.path, 0o755)
        }
        let daemon = try startDaemon(stateDirectory: state, runAsUID: asNobody ? 65534 : nil)
        skipPermissionCheck.insert(ObjectIdentifier(daemon))
        guard let pid = daemon.pid else { return XCTFail("no pid") }
        var info = Glibc.stat()
        XCTAssertEqual(lstat("/proc/\(pid)/mem", &info), 0)
        let runsAs: uid_t = asNobody ? 65534 : getuid()
        XCTAssertNotEqual(runsAs, 0, "cannot tell when the daemon itself is root")
        XCTAssertEqual(info.st_uid, 0, "/proc/\(pid)/mem belongs to the daemon's uid \(runsAs): the process is dumpable")
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        XCTAssertTrue(status.contains("Uid:\t\(runsAs)"), "the daemon does not run as \(runsAs): \(status.prefix(400))")
    }

    /// S-51: a member removed from AdminGroup loses admin rights on the
    /// connection it already has, within the membership cache's lifetime.
    func testAdminRightsEndOnAnOpenConnectionWhenTheGroupDropsTheUser() throws {
        let group = try temporaryGroup("latest", member: "nobody")
        let daemon = try startDaemon(configuration: configuration(daemon: ["AdminGroup=\(group)"]))
        let member = try daemon.connect(asUID: 65534)
        XCTAssertOK(try member.request("a1 stats"), "a member of AdminGroup is an administrator")
        XCTAssertEqual(exitCode(of: "/usr/bin/gpasswd", ["-d", "nobody", group]), 0)
        // Observable, not timed: poll (safety net 15 s) until the same connection is refused.
        var last: Response?
        var index = 1
        waitUntil(safetyNet: 15) {
            index += 1
            last = try? member.request("a\(index) stats")
            return last?.errorName == "permission-denied"
        }
        XCTAssertEqual(last?.errorName, "permission-denied", "admin rights outlived the group membership: \(String(describing: last))")
        XCTAssertProtocolError(try member.request("r1 reset uid=0"), "permission-denied")
    }

    /// Item 12: uid= in canonical decimal only.
    func testNonCanonicalUidsAreRefused() throws {
        let daemon = try startDaemon()
        let admin = try daemon.connect()
        for spelling in ["+0", "00", "01004", "+1004", "4294967295", "-1", "1e3", "0x10"] {
            XCTAssertProtocolError(try admin.request("\(tag("u")) status uid=\(spelling)"), "bad-argument", "uid=\(spelling)")
        }
        XCTAssertOK(try admin.request("\(tag("u")) status uid=0"))
        XCTAssertOK(try admin.request("\(tag("u")) status uid=1004"))
    }
}
