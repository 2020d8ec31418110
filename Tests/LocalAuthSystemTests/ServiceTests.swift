import Glibc
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class SystemdTests: XCTestCase {
    func testNotifyReachesNotifySocket() throws {
        let scratch = TemporaryDirectory()
        let directory = scratch.path
        let path = directory + "/notify"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(rc, 0)

        setenv("NOTIFY_SOCKET", path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        XCTAssertTrue(try Systemd.notify("READY=1"))
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = recv(fd, &buffer, buffer.count, 0)
        XCTAssertEqual(n > 0 ? String(decoding: buffer[..<n], as: UTF8.self) : "", "READY=1")

        unsetenv("NOTIFY_SOCKET")
        XCTAssertFalse(try Systemd.notify("READY=1"))
    }

    func testWithoutSystemd() throws {
        XCTAssertTrue(try Systemd.listenFDs().isEmpty)
        XCTAssertNil(Systemd.watchdogInterval())
        let boot = try Systemd.bootID()
        XCTAssertEqual(boot.count, 32)
        XCTAssertTrue(boot.allSatisfy { "0123456789abcdef".contains($0) }, boot)
    }

    func testJournalSendDoesNotCrash() {
        Journal.send(fields: [("MESSAGE", "localauthd system test"), ("PRIORITY", "7"), ("LOCALAUTH_TEST", "1")])
        XCTAssertFalse(Journal.send(fields: []))
        setenv("JOURNAL_STREAM", "0:0", 1)
        XCTAssertFalse(Journal.isConnectedToJournal)
        var info = stat()
        fstat(2, &info)
        setenv("JOURNAL_STREAM", "\(info.st_dev):\(info.st_ino)", 1)
        XCTAssertTrue(Journal.isConnectedToJournal)
        unsetenv("JOURNAL_STREAM")
        XCTAssertFalse(Journal.isConnectedToJournal)
    }
}

final class AccountsTests: XCTestCase {
    func testRootIsInGroupRoot() throws {
        XCTAssertEqual(try Accounts.groupID(named: "root"), 0)
        XCTAssertTrue(try Accounts.isMember(uid: 0, ofGroupNamed: "root"))
        XCTAssertFalse(try Accounts.isMember(uid: 0, ofGroupNamed: "no-such-group-localauth"))
        XCTAssertNil(try Accounts.groupID(named: "no-such-group-localauth"))
        XCTAssertNil(try Accounts.user(uid: 4_000_000_000))
        XCTAssertEqual(try Accounts.user(uid: 0)?.name, "root")
        XCTAssertEqual(Accounts.currentUID(), getuid())
    }

    /// "a group name or number": a gid in canonical decimal is that gid
    /// when no group is named so (as chown(1) reads it); anything else that
    /// names no group is no group.
    func testAGroupNumberIsItsGidAndOnlyInCanonicalDecimal() throws {
        XCTAssertEqual(try Accounts.groupID(named: "0"), 0)
        XCTAssertTrue(try Accounts.isMember(uid: 0, ofGroupNamed: "0"))
        XCTAssertEqual(try Accounts.groupID(named: "4000000000"), 4_000_000_000)
        XCTAssertFalse(try Accounts.isMember(uid: 0, ofGroupNamed: "4000000000"))
        for text in ["00", "01", "+1", "-1", "1 ", " 1", "4294967295", "4294967296", "99999999999", "0x10", "", "1e3"] {
            XCTAssertNil(try Accounts.groupID(named: text), "\(text.debugDescription) is not a gid")
        }
    }

    func testSupplementaryGroupsCount() throws {
        // nobody (65534) is in nogroup as its primary group on Debian.
        guard let nobody = try Accounts.user(uid: 65534) else { throw XCTSkip("no uid 65534") }
        XCTAssertTrue(try Accounts.groupIDs(uid: 65534).contains(nobody.gid))
        XCTAssertFalse(try Accounts.isMember(uid: 65534, ofGroupNamed: "root"))
    }
}

final class SystemErrorTests: XCTestCase {
    func testDescriptionNamesTheCall() {
        XCTAssertEqual("\(SystemError(call: "fdatasync", errno: EIO))", "fdatasync: Input/output error")
        XCTAssertEqual("\(SystemError(call: "open", errno: ENOENT, path: "/x"))", "open /x: No such file or directory")
        XCTAssertTrue(SystemError(call: "send", errno: EAGAIN).isWouldBlock)
    }

    func testRetryOnInterrupt() throws {
        var calls = 0
        let value = try retryOnInterrupt("fake") { () -> Int32 in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 5
        }
        XCTAssertEqual(value, 5)
        XCTAssertNil(try retryOnInterruptUnlessWouldBlock("fake") { () -> Int32 in
            errno = EAGAIN
            return -1
        })
    }
}
