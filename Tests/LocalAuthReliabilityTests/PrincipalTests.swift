// S-53 against the real daemon (issue 27 items 3 and 4). Subordinate uids
// made one user 65536 SO_PEERCRED uids, each with its own connection cap
// and event budget; setuid programs (every su, sudo) all counted as uid 0,
// whose cap 256 stopped `su` processes filled, locking root's own
// `localauthctl` out. Limits now count per principal, and root keeps slots.
//
// Makes a user with a subordinate range (useradd, /etc/subuid) and a
// setuid-root copy of socat in a temporary directory, both removed at the
// end: run under /work/system.lock.
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class PrincipalTests: ReliabilityTestCase {
    let nobody: UInt32 = 65534

    /// A user with a subordinate uid range; removed (with its range) at the end.
    private func userWithSubordinateRange() throws -> (name: String, uid: UInt32, first: UInt32) {
        guard getuid() == 0, access("/usr/sbin/useradd", X_OK) == 0 else { throw XCTSkip("needs root and useradd") }
        let name = "lasub\(getpid() % 100_000)"
        XCTAssertEqual(run("/usr/sbin/useradd", ["--no-create-home", "--shell", "/usr/sbin/nologin", name]), 0)
        addTeardownBlock { _ = self.run("/usr/sbin/userdel", [name]) }
        let uid = try XCTUnwrap(getpwnam(name)?.pointee.pw_uid, "useradd made no \(name)")
        var first = subordinateStart(of: name)
        if first == nil {
            // A useradd that left /etc/subuid alone: delegate a range by hand.
            XCTAssertEqual(run("/usr/sbin/usermod", ["--add-subuids", "700000-765535", name]), 0)
            first = subordinateStart(of: name)
        }
        return (name, uid, try XCTUnwrap(first, "no /etc/subuid range for \(name)"))
    }

    private func subordinateStart(of name: String) -> UInt32? {
        let text = (try? String(contentsOfFile: "/etc/subuid", encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":")
            if fields.count == 3, fields[0] == name { return UInt32(fields[1]) }
        }
        return nil
    }

    /// The daemon's answer to a connection it refused, else nil (it was let in).
    private func refusal(_ client: Client) throws -> String? {
        let lines = try client.readUntilEOF()
        guard lines.count == 2, lines[1] == "* BYE reason=limit" else { return nil }
        return try Client.parse(lines[0]).errorName
    }

    func test_S53_aUsersSubordinateUidsShareItsConnectionCap() throws {
        let user = try userWithSubordinateRange()
        let daemon = try startDaemon(configuration: configuration(daemon: ["MaxConnectionsPerUser=4"]))
        var held: [Client] = []
        for index in 0..<4 {
            let client = try daemon.connect(asUID: user.first + UInt32(index) * 1000)
            XCTAssertOK(try client.request("p\(index) ping"), "subordinate uid \(user.first + UInt32(index) * 1000)")
            held.append(client)
        }
        // The fifth, from yet another of its uids, or from the user itself: refused.
        XCTAssertEqual(try refusal(daemon.connect(asUID: user.first + 60_000)), "limit-exceeded")
        XCTAssertEqual(try refusal(daemon.connect(asUID: user.uid)), "limit-exceeded", "the owner is the same principal")
        // Everyone else is served.
        XCTAssertOK(try daemon.connect(asUID: nobody).request("o ping"))
        XCTAssertOK(try daemon.connect().request("r ping"))
        // A real user namespace (newuidmap, /etc/subuid): its uid 1 is a subordinate uid of the user's.
        if access("/usr/bin/newuidmap", X_OK) == 0 {
            let namespaced = try Client(running: "/usr/bin/setpriv", [
                "--reuid=\(user.uid)", "--regid=\(user.uid)", "--clear-groups", "--",
                "unshare", "--user", "--map-auto", "--map-root-user", "--",
                "setpriv", "--reuid=1", "--regid=1", "--clear-groups", "--", "socat", "-", "UNIX-CONNECT:\(daemon.socketPath)",
            ])
            XCTAssertEqual(try refusal(namespaced), "limit-exceeded", "a namespace of the user's is the user's")
        }
        held[0].shutDown()
        XCTAssertTrue(waitUntil {
            guard let client = try? daemon.connect(asUID: user.first + 9) else { return false }
            return (try? client.request("again ping"))?.status == .ok
        }, "a freed slot is the principal's again")
    }

    func test_S53_setuidProgramsCountForTheirInvokerAndRootKeepsItsOwnSlots() throws {
        let directory = TemporaryDirectory(prefix: "localauth-setuid-")
        let setuidSocat = directory.path + "/socat"
        XCTAssertEqual(run("/bin/cp", ["/usr/bin/socat", setuidSocat]), 0)
        XCTAssertEqual(chown(setuidSocat, 0, 0), 0)
        XCTAssertEqual(chmod(setuidSocat, 0o4755), 0)
        let daemon = try startDaemon(configuration: configuration(daemon: ["MaxConnectionsPerUser=4"]))
        func setuidClient() throws -> Client {
            try Client(running: "/usr/bin/setpriv", ["--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups", "--",
                                                        setuidSocat, "-", "UNIX-CONNECT:\(daemon.socketPath)"])
        }
        var held: [Client] = []
        for index in 0..<4 {
            let client = try setuidClient()
            XCTAssertEqual(try client.request("s\(index) status")["uid"], "0", "a setuid-root program is root to the daemon")
            held.append(client)
        }
        XCTAssertEqual(try refusal(setuidClient()), "limit-exceeded", "the fifth counts for uid 65534, who ran them")
        XCTAssertEqual(try refusal(daemon.connect(asUID: nobody)), "limit-exceeded", "the same principal")
        // Root's own processes were not counted with them: root's localauthctl is served.
        let root = try daemon.connect()
        XCTAssertOK(try root.request("r1 stats"))
        // Nor is a setuid program's traffic root's: it pays from its invoker's budget (S-48).
        let ctx = try XCTUnwrap(try held[0].request("n new")["ctx"])
        var refused = 0
        try held[0].sendRaw(Array((0..<300).map { "c\($0) can-evaluate ctx=\(ctx) policy=owner\n" }.joined().utf8))
        for index in 0..<300 {
            if try held[0].next(tag: "c\(index)").errorName == "limit-exceeded" { refused += 1 }
        }
        XCTAssertGreaterThan(refused, 0, "a setuid program's flood is cut at its invoker's budget")
    }

    func test_S53_othersCannotTakeTheSlotsKeptForRoot() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: ["MaxConnections=32", "MaxConnectionsPerUser=64"]))
        var held: [Client] = []
        var refusedAt: Int?
        for index in 0..<32 {
            let client = try daemon.connect(asUID: nobody)
            if let answer = try? client.request("p\(index) ping"), answer.status == .ok {
                held.append(client)
            } else {
                refusedAt = index
                break
            }
        }
        XCTAssertEqual(refusedAt, 30, "uid 65534 gets 30 of 32: the last sixteenth is kept")
        XCTAssertEqual(held.count, 30)
        let first = try daemon.connect(), second = try daemon.connect()
        XCTAssertOK(try first.request("r1 ping"), "root's own process takes a kept slot")
        XCTAssertOK(try second.request("r2 stats"))
        XCTAssertEqual(try refusal(daemon.connect()), "limit-exceeded", "full is full")
    }

    @discardableResult
    private func run(_ path: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
