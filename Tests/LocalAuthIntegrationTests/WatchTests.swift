// watch / cancel-watch (PROTOCOL.md v1.1) on the wire: the STATE line at
// once and after each change of its fields, who may watch whom, the
// per-connection bound, and that a cancelled or closed watch says nothing.
import Foundation
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class WatchTests: IntegrationTestCase {
    /// The next STATE line of `tag` on `client`.
    func state(_ client: Client, _ tag: String = "w", file: StaticString = #filePath, line: UInt = #line) throws -> Response {
        let reply = try client.next(tag: tag)
        XCTAssertEqual(reply.status, .state, "\(reply)", file: file, line: line)
        return reply
    }

    func testWatchSendsTheStateAtOnceAndAfterEveryChange() throws {
        let daemon = try startDaemon()
        let admin = try daemon.connect()
        let watcher = try daemon.connect()
        XCTAssertOK(try watcher.request("w watch"))
        let first = try state(watcher)
        XCTAssertEqual(first.arguments.value(for: "uid"), "0")
        XCTAssertEqual(first["biometry"], "touchID")
        XCTAssertEqual(first["enrolled"], "0")
        XCTAssertEqual(first["passcode-set"], "false")
        XCTAssertEqual(first["locked-out"], "false")
        XCTAssertEqual(first["domain-state"], "")

        XCTAssertOK(try admin.request("p set-passcode secret=1234"))
        XCTAssertEqual(try state(watcher)["passcode-set"], "true")
        let token = try admin.request("e enroll uid=0")["domain-state"]
        let enrolled = try state(watcher)
        XCTAssertEqual(enrolled["enrolled"], "1")
        XCTAssertEqual(enrolled["domain-state"], token, "the S-10 token")

        // Five failures lock biometry out (S-2); the line says so once.
        for misses in [3, 2] {
            let ctx = try newContext(admin)
            _ = try evaluate(admin, ctx: ctx, policy: "biometrics", tag: "ev\(misses)")
            for miss in 0..<misses {
                try sensor(admin, "nomatch")
                if miss < misses - 1 { _ = try admin.next(tag: "ev\(misses)") }
            }
            _ = try admin.next(tag: "ev\(misses)")
        }
        let locked = try state(watcher)
        XCTAssertEqual(locked["locked-out"], "true")
        XCTAssertEqual(locked["enrolled"], "1")

        XCTAssertOK(try admin.request("r reset uid=0"))
        XCTAssertEqual(try state(watcher)["locked-out"], "false", "S-9: a reset lifts it")
        XCTAssertOK(try admin.request("c clear-passcode uid=0"))
        XCTAssertEqual(try state(watcher)["passcode-set"], "false")
        XCTAssertOK(try admin.request("u unenroll uid=0"))
        let unenrolled = try state(watcher)
        XCTAssertEqual(unenrolled["enrolled"], "0")
        XCTAssertEqual(unenrolled["domain-state"], "")

        // Events that change none of the fields send nothing: the next line is ping's.
        let ctx = try newContext(admin)
        _ = try admin.request("ce can-evaluate ctx=\(ctx) policy=owner")  // recorded, changes no field
        try assertNextIsPing(watcher)
    }

    func testCancelWatchAndAClosedConnectionEndTheWatch() throws {
        let daemon = try startDaemon()
        let admin = try daemon.connect()
        let watcher = try daemon.connect()
        XCTAssertOK(try watcher.request("w watch uid=0"))
        _ = try state(watcher)
        XCTAssertOK(try watcher.request("x cancel-watch"))
        XCTAssertOK(try admin.request("p set-passcode secret=1234"))
        try assertNextIsPing(watcher, "no STATE after cancel-watch")
        XCTAssertOK(try watcher.request("x2 cancel-watch"), "idempotent")

        // A watcher that goes away costs nothing later; the daemon keeps serving.
        let gone = try daemon.connect()
        XCTAssertOK(try gone.request("w watch"))
        _ = try state(gone)
        gone.shutDown()
        XCTAssertOK(try admin.request("e enroll uid=0"))
        XCTAssertOK(try admin.request("pg ping"))
    }

    func testWatchingAnotherUserNeedsAnAdministratorAndIsBounded() throws {
        let daemon = try startDaemon()
        let user = try daemon.connect(asUID: 65534)
        XCTAssertProtocolError(try user.request("w1 watch uid=0"), "permission-denied")
        XCTAssertProtocolError(try user.request("w2 cancel-watch uid=0"), "permission-denied")
        XCTAssertProtocolError(try user.request("w3 watch uid=abc"), "bad-argument")
        XCTAssertProtocolError(try user.request("w4 watch ctx=1"), "bad-argument")
        XCTAssertOK(try user.request("w watch"))
        XCTAssertEqual(try state(user).arguments.value(for: "uid"), "65534")

        let admin = try daemon.connect()
        for uid in 1000..<1016 {
            XCTAssertOK(try admin.request("a\(uid) watch uid=\(uid)"))
            XCTAssertEqual(try state(admin, "a\(uid)").arguments.value(for: "uid"), String(uid))
        }
        XCTAssertProtocolError(try admin.request("over watch uid=2000"), "limit-exceeded")
        XCTAssertOK(try admin.request("again watch uid=1000"), "re-watching a watched uid is no new watch")
        XCTAssertEqual(try state(admin, "again").arguments.value(for: "uid"), "1000")
        XCTAssertOK(try admin.request("c cancel-watch uid=1001"))
        XCTAssertOK(try admin.request("ok watch uid=2000"), "room again after a cancel")
    }
}

extension WatchTests {
    /// S-40: the STATE line that says locked-out=true reveals the failure
    /// that caused it, so it comes only once that failure is durable (the
    /// same check as DurabilityTests' for prompts and answers).
    func testTheLockoutLineWaitsForItsFailureToBeDurable() throws {
        let daemon = try startDaemon(configuration: configuration(biometry: ["LockoutThreshold=1"]))
        let admin = try daemon.connect()
        try prepareOwner(admin)
        let watcher = try daemon.connect()
        XCTAssertOK(try watcher.request("w watch"))
        XCTAssertEqual(try state(watcher)["locked-out"], "false")
        let ctx = try newContext(admin)
        _ = try evaluate(admin, ctx: ctx, policy: "biometrics", tag: "ev")
        try admin.send("s sensor uid=0 result=nomatch")
        let locked = try state(watcher)
        XCTAssertEqual(locked["locked-out"], "true")
        let stats = try watcher.request("st stats")
        let durable = stats["durable-seq"].flatMap(UInt64.init) ?? 0
        let (code, out, _) = try runToCompletion(try Binary.find("localauthctl"),
                                                 ["log", "-D", daemon.stateDirectory, "-o", "json", "--no-pager"])
        XCTAssertEqual(code, 0)
        let failures = out.split(separator: "\n").compactMap { line -> UInt64? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["type"] as? String == "biometric-failed" else { return nil }
            return (object["seq"] as? Int).map(UInt64.init)
        }
        XCTAssertEqual(failures.count, 1)
        XCTAssertGreaterThanOrEqual(durable, failures.first ?? .max, "the failure was durable when its lockout was seen")
    }
}

extension WatchTests {
    /// A STATE line caused before this is queued before the ping's OK, so
    /// the next line in arrival order is the ping's answer exactly when no
    /// STATE line was sent.
    func assertNextIsPing(_ client: Client, _ note: String = "", file: StaticString = #filePath, line: UInt = #line) throws {
        try client.send("pg ping")
        XCTAssertEqual(try client.nextLine(), "pg OK", note, file: file, line: line)
    }
}
