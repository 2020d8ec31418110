// Issue 27 item 8, S-59: after `userdel`, the next account given the same
// uid authorized the old right with its own password and read the old
// secret. A right is bound to the account (user name) that saved it: the
// new account's connection finds no right, the right is dropped with its
// secret and key, and the log says so (`right-dropped`). With real
// accounts (useradd/userdel, so root), real binaries, real NSS.
import Foundation
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class RightAccountTests: IntegrationTestCase {
    func test_S59_aNewAccountWithAnOldUidGetsNoneOfTheOldAccountsRights() throws {
        let (uid, old) = try makeAccount("laold")
        defer { deleteAccount(old) }
        let daemon = try startDaemon()
        let first = try daemon.connect(asUID: uid)
        XCTAssertOK(try first.request("s right-save identifier=com.example.login requirement=default secret=c2VjcmV0LTQy"))
        XCTAssertOK(try first.request("st right-state identifier=com.example.login"))
        XCTAssertOK(try daemon.connect(asUID: uid).request("st0 right-state identifier=com.example.login"),
                    "the same account's other connection")

        deleteAccount(old)
        let new = "lanew\(getpid() % 100_000)"
        XCTAssertEqual(exitCode(of: "/usr/sbin/useradd", ["-M", "-N", "-s", "/usr/sbin/nologin", "-u", String(uid), new]), 0)
        defer { deleteAccount(new) }

        // The new account's connection: no right, none to authorize, none to list.
        let second = try daemon.connect(asUID: uid)
        XCTAssertProtocolError(try second.request("st right-state identifier=com.example.login"), "unknown-right")
        let ctx = try newContext(second)
        XCTAssertProtocolError(try second.request("r right-secret ctx=\(ctx) identifier=com.example.login"), "unknown-right")
        // Dropped, not only hidden: the old account's connection has lost it too, and so has the store.
        XCTAssertProtocolError(try first.request("st2 right-state identifier=com.example.login"), "unknown-right")
        // The new account's own rights work; its save's OK says the store on disk holds it (and the drop before it).
        XCTAssertOK(try second.request("s2 right-save identifier=com.example.login requirement=default secret=AAAA"))
        let store = try String(contentsOfFile: daemon.stateDirectory + "/rights", encoding: .utf8)
        let oldHex = old.utf8.map { String(format: "%02x", $0) }.joined()
        XCTAssertFalse(store.contains(oldHex), "the old account's right is still in the store: \(store)")
        XCTAssertEqual(store.split(separator: "\n").count, 2, "the header and the new account's right: \(store)")
        XCTAssertEqual(try second.request("st3 right-state identifier=com.example.login")["has-secret"], "true")

        XCTAssertEqual(daemon.stop(), 0, daemon.stderr)
        let events = try droppedEvents(daemon)
        XCTAssertEqual(events.count, 1, "\(events)")
        XCTAssertTrue(events.first?.contains("\"name\":\"\(old)\"") == true, "\(events)")
        XCTAssertTrue(events.first?.contains("\"reason\":\"account-replaced\"") == true, "\(events)")
    }

    /// An account removed while the daemon was down: its rights are dropped at the start.
    func test_S59_rightsOfAnAccountRemovedWhileTheDaemonWasDownAreDroppedAtTheStart() throws {
        let (uid, old) = try makeAccount("lagone")
        defer { deleteAccount(old) }
        let daemon = try startDaemon()
        XCTAssertOK(try daemon.connect(asUID: uid).request("s right-save identifier=x requirement=default secret=AAAA"))
        XCTAssertEqual(daemon.stop(), 0, daemon.stderr)
        deleteAccount(old)
        try daemon.start()
        // Observable, not timed: the store loses the right once the start's lookup is answered.
        waitUntil(safetyNet: 15) {
            !((try? String(contentsOfFile: daemon.stateDirectory + "/rights", encoding: .utf8))?.contains(" x ") ?? true)
        }
        XCTAssertProtocolError(try daemon.connect(asUID: uid).request("st right-state identifier=x"), "unknown-right")
        XCTAssertEqual(daemon.stop(), 0, daemon.stderr)
        let events = try droppedEvents(daemon)
        XCTAssertEqual(events.count, 1, "\(events)")
        XCTAssertTrue(events.first?.contains("\"reason\":\"account-removed\"") == true, "\(events)")
    }

    /// A fresh account on a free uid (root only: useradd).
    private func makeAccount(_ prefix: String) throws -> (UInt32, String) {
        guard getuid() == 0, access("/usr/sbin/useradd", X_OK) == 0, access("/usr/sbin/userdel", X_OK) == 0 else {
            throw XCTSkip("needs root and useradd/userdel to replace an account")
        }
        let name = "\(prefix)\(getpid() % 100_000)"
        for uid in UInt32(61_000 + getpid() % 1000)..<64_000 where getpwuid(uid) == nil {
            XCTAssertEqual(exitCode(of: "/usr/sbin/useradd", ["-M", "-N", "-s", "/usr/sbin/nologin", "-u", String(uid), name]), 0)
            return (uid, name)
        }
        throw XCTSkip("no free uid in 61000..<64000")
    }

    /// userdel -f: the test's client for the uid (a process of that uid) still runs.
    private func deleteAccount(_ name: String) {
        if getpwnam(name) != nil { XCTAssertEqual(exitCode(of: "/usr/sbin/userdel", ["-f", name]), 0, "userdel -f \(name)") }
    }

    private func droppedEvents(_ daemon: DaemonProcess) throws -> [String] {
        let log = try runToCompletion(try Binary.find("localauthctl"),
                                      ["log", "-D", daemon.stateDirectory, "-o", "json", "--no-pager"]).1
        return log.split(separator: "\n").map(String.init).filter { $0.contains("\"type\":\"right-dropped\"") }
    }
}
