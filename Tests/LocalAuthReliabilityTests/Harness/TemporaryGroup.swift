// A group made for one test and removed when it ends (AdminGroup= tests,
// S-51, S-56): needs root and shadow's groupadd/gpasswd, else the test skips.
import Glibc
import LocalAuthTestSupport
import XCTest

extension ReliabilityTestCase {
    /// Makes the group `prefix` + this process's pid with `member` in it,
    /// and deletes it at the test's teardown. Returns its name.
    func temporaryGroup(_ prefix: String, member: String) throws -> String {
        guard getuid() == 0, access("/usr/sbin/groupadd", X_OK) == 0, access("/usr/bin/gpasswd", X_OK) == 0 else {
            throw XCTSkip("needs root and groupadd/gpasswd to change a group's members")
        }
        let group = "\(prefix)\(getpid() % 100_000)"
        XCTAssertEqual(exitCode(of: "/usr/sbin/groupadd", [group]), 0)
        addTeardownBlock { _ = exitCode(of: "/usr/sbin/groupdel", [group]) }
        XCTAssertEqual(exitCode(of: "/usr/bin/gpasswd", ["-a", member, group]), 0)
        return group
    }
}
