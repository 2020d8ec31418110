// Hostile clients (issue 8 item 3): each is answered as PROTOCOL.md says, and
// while it misbehaves another client (a victim with an evaluation waiting at a
// prompt) is still served, to the end of its evaluation.
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class HostileClientTests: ReliabilityTestCase {
    let nobody: UInt32 = 65534

    /// A victim (uid 0) at a biometric prompt, and an admin connection.
    struct Victim {
        var client: Client
        var admin: Client
        var ctx: String
        var evalTag: String
    }

    func startVictim(_ daemon: DaemonProcess, passcode: String) throws -> Victim {
        let admin = try daemon.connect()
        try prepareUser(admin, uid: 0, passcode: passcode)
        let client = try daemon.connect()
        let ctx = try newContext(client)
        let evalTag = tag("ev")
        try client.send("\(evalTag) evaluate ctx=\(ctx) policy=biometrics reason=victim")
        let prompt = try client.next(tag: evalTag)
        XCTAssertEqual(prompt.status, .prompt, "\(prompt)")
        return Victim(client: client, admin: admin, ctx: ctx, evalTag: evalTag)
    }

    /// The victim is still served: ping, then its evaluation ends with a match.
    func assertVictimServed(_ victim: Victim, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertOK(try victim.client.request("\(tag("vp")) ping"), file: file, line: line)
        XCTAssertOK(try victim.admin.request("\(tag("vs")) sensor uid=0 result=match"), file: file, line: line)
        let final = try victim.client.next(tag: victim.evalTag)
        XCTAssertEqual(final.status, .ok, "victim's evaluation: \(final)", file: file, line: line)
        XCTAssertEqual(final["method"], "biometric", file: file, line: line)
    }

    /// VmRSS of a process in KiB.
    func residentKiB(_ pid: pid_t?) -> Int {
        guard let pid else { return 0 }
        for line in readText("/proc/\(pid)/status").split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
        }
        return 0
    }

    // MARK: - Overlong lines, NUL, invalid UTF-8

    func testOverlongLinesNulAndInvalidUTF8WhileAnotherClientEvaluates() throws {
        let daemon = try startDaemon()
        let victim = try startVictim(daemon, passcode: Secrets.make("Vict1mPass"))
        // Overlong, with and without a line feed, in many small writes and one big one.
        for variant in 0..<4 {
            let hostile = try daemon.connect()
            var bytes = [UInt8](repeating: UInt8(ascii: "A"), count: 8192 + 1 + variant * 50_000)
            if variant % 2 == 1 { bytes.append(0x0A) }
            if variant == 2 {
                for chunk in stride(from: 0, to: bytes.count, by: 1000) {
                    try? hostile.sendRaw(Array(bytes[chunk..<min(chunk + 1000, bytes.count)]))
                }
            } else {
                try? hostile.sendRaw(bytes)
            }
            let lines = try hostile.readUntilEOF()
            XCTAssertEqual(lines.count, 2, "variant \(variant): \(lines)")
            if lines.count == 2 {
                XCTAssertProtocolError(try Client.parse(lines[0]), "line-too-long")
                XCTAssertEqual(try Client.parse(lines[1]).status, .bye)
            }
        }
        // NUL bytes and invalid UTF-8 in every position: bad-syntax, connection usable.
        let garbage = try daemon.connect()
        let samples: [[UInt8]] = [
            [0x00], [0x00, 0x0A], Array("g1 ping\0".utf8), Array("g2 pi\0ng".utf8), Array("g3\0 ping".utf8),
            [0xFF, 0xFE], Array("g4 status uid=".utf8) + [0xC0, 0x80], Array("g5 hello client=\"".utf8) + [0xED, 0xA0, 0x80, 0x22],
            Array("g6 hello client=".utf8) + [0xF4, 0x90, 0x80, 0x80], [0x0D], [0x0D, 0x0D], Array("g7 ping\r\r".utf8),
            Array("g8 ping \u{7f}".utf8), [0x80, 0x80, 0x20, 0x70, 0x69, 0x6E, 0x67],
        ]
        for sample in samples {
            try garbage.sendRaw(sample + [0x0A])
            let reply = try garbage.next()
            XCTAssertEqual(reply.status, .err, "\(sample) -> \(reply)")
            XCTAssertEqual(reply.errorDomain, "protocol", "\(sample) -> \(reply)")
        }
        XCTAssertOK(try garbage.request("g9 ping"))
        try assertVictimServed(victim)
    }

    // MARK: - Slowloris

    func testHalfLinesAreCutOffAfterTheIdleTimeoutAndOthersAreServed() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: ["IdleLineTimeoutSec=1", "MaxConnectionsPerUser=512"]))
        Harness.raiseOpenFileLimit(to: 4096)
        let victim = try startVictim(daemon, passcode: Secrets.make("Slow1orisPass"))
        var slow: [Client] = []
        for index in 0..<200 {
            let client = try daemon.connect()
            try client.sendRaw(Array("s\(index) pi".utf8))
            slow.append(client)
        }
        // Others are served while the half lines hang.
        try assertVictimServed(victim)
        // Each half line is answered once with limit-exceeded and BYE, then closed.
        for (index, client) in slow.enumerated() {
            client.timeout = 30
            let lines = try client.readUntilEOF()
            XCTAssertEqual(lines.count, 2, "slow client \(index): \(lines)")
            guard lines.count == 2 else { continue }
            let error = try Client.parse(lines[0])
            XCTAssertEqual(error.tag, "*")
            XCTAssertProtocolError(error, "limit-exceeded")
            XCTAssertEqual(try Client.parse(lines[1])["reason"], "limit")
        }
        // A client that trickles a full line byte by byte is not cut off if it finishes.
        let trickle = try daemon.connect()
        for byte in Array("tr ping".utf8) { try trickle.sendRaw([byte]) }
        try trickle.sendRaw([0x0A])
        XCTAssertOK(try trickle.next(tag: "tr"))
    }

    // MARK: - A client that never reads

    func testAClientThatNeverReadsIsClosedAndMemoryStaysBounded() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: ["MaxPendingBytes=64K", "MaxPropertyBytes=4000", "MaxPropertyBytesPerContext=4000"]))
        let victim = try startVictim(daemon, passcode: Secrets.make("NeverR3adPass"))
        let before = residentKiB(daemon.pid)
        let hostile = try daemon.connect()
        let ctx = try newContext(hostile)
        let title = String(repeating: "T", count: 4000)
        XCTAssertOK(try hostile.request("h0 set ctx=\(ctx) cancel-title=\(title)"))
        // Pipeline thousands of requests with long replies and never read them.
        let request = Array("h get ctx=\(ctx)\n".utf8)
        var batch: [UInt8] = []
        for _ in 0..<200 { batch += request }
        var sent = 0
        for _ in 0..<100 {
            do { try hostile.sendRaw(batch) } catch { break }  // the daemon closed on us
            sent += 200
        }
        // Others are served meanwhile.
        try assertVictimServed(victim)
        // The hostile connection ends (within the daemon's 5 s for a closing peer that does not read).
        hostile.timeout = 60
        let lines = (try? hostile.readUntilEOF()) ?? []
        XCTAssertTrue(hostile.sawEOF || lines.last.map { $0.contains("BYE") } == true, "the connection was not closed")
        XCTAssertLessThan(lines.count, sent, "every request was answered: MaxPendingBytes did not apply")
        let after = residentKiB(daemon.pid)
        XCTAssertLessThan(after - before, 64 * 1024, "daemon RSS grew from \(before) KiB to \(after) KiB")
        XCTAssertOK(try daemon.connect().request("p ping"))
    }

    // MARK: - Thousands of connections from one uid

    func testThousandsOfConnectionsFromOneUIDAreRefusedBeyondTheLimit() throws {
        let limit = 64
        let daemon = try startDaemon(configuration: configuration(daemon: ["MaxConnectionsPerUser=\(limit)", "MaxConnections=4096"]))
        let soft = Harness.raiseOpenFileLimit(to: 8192)
        let total = min(2000, Int(soft) - 200)
        var accepted: [Client] = []
        var refused = 0
        var otherAnswers: [String] = []
        for index in 0..<total {
            let client = try daemon.connect()
            if index < limit {
                XCTAssertOK(try client.request("c\(index) ping"))
                accepted.append(client)
                continue
            }
            // The daemon answers a refused connection at once and closes it.
            let lines = try client.readUntilEOF()
            if lines.count == 2, let error = try? Client.parse(lines[0]), error.errorName == "limit-exceeded",
               lines[1].contains("BYE reason=limit") {
                refused += 1
            } else {
                otherAnswers.append(lines.joined(separator: " | "))
            }
        }
        XCTAssertEqual(refused, total - limit, "unexpected answers: \(otherAnswers.prefix(5))")
        // Another uid is not affected.
        let other = try daemon.connect(asUID: nobody)
        XCTAssertOK(try other.request("o1 ping"))
        XCTAssertEqual(try other.request("o2 status")["uid"], String(nobody))
        // Every accepted connection still works; closing some frees their slots.
        for (index, client) in accepted.enumerated() where index % 7 == 0 {
            XCTAssertOK(try client.request("again\(index) ping"))
        }
        let probe = try XCTUnwrap(accepted.last)
        let open = Int(try probe.request("\(tag("n")) stats")["connections"] ?? "") ?? 0
        for client in accepted.prefix(10) { client.shutDown() }
        accepted.removeFirst(10)
        // The daemon sees the closes on a later loop turn: wait for its count of them.
        XCTAssertTrue(try waitUntil { (Int(try probe.request("\(tag("n")) stats")["connections"] ?? "") ?? .max) <= open - 10 },
                      "the daemon never saw the closes")
        var reopened = 0
        for _ in 0..<10 {
            let client = try daemon.connect()
            if let reply = try? client.request("r ping"), reply.status == .ok {
                reopened += 1
                accepted.append(client)
            }
        }
        XCTAssertEqual(reopened, 10, "slots freed by closed connections were not reused")
        accepted.forEach { $0.shutDown() }
    }

    // MARK: - Context ids guessed or reused

    func testContextIDsOfOtherConnectionsAndGuessesAreUnknown() throws {
        let daemon = try startDaemon()
        let owner = try daemon.connect()
        let passcode = Secrets.make("Own3rPass")
        try prepareUser(owner, uid: 0, passcode: passcode)
        let ctx = try newContext(owner)
        let evalTag = "own"
        try owner.send("\(evalTag) evaluate ctx=\(ctx) policy=owner reason=mine")
        XCTAssertEqual(try owner.next(tag: evalTag)["kind"], "biometric")

        let sameUID = try daemon.connect()
        let otherUID = try daemon.connect(asUID: nobody)
        let wrongGuess = Secrets.make("Gu3ssedPass")
        var rng = SeededGenerator(seed: 8)
        let guesses = [ctx, ctx.uppercased(), String(ctx.dropLast()), ctx + "0", "0", String(repeating: "0", count: 32)]
            + (0..<20).map { _ in (0..<32).map { _ in String(Int.random(in: 0..<16, using: &rng), radix: 16) }.joined() }
        for intruder in [sameUID, otherUID] {
            for (index, guess) in guesses.enumerated() {
                for verb in ["get ctx=\(guess)", "evaluate ctx=\(guess) policy=owner reason=x", "cancel ctx=\(guess)",
                             "fallback ctx=\(guess)", "passcode ctx=\(guess) secret=\(wrongGuess)", "invalidate ctx=\(guess)",
                             "set ctx=\(guess) cancel-title=x", "can-evaluate ctx=\(guess) policy=owner"] {
                    let reply = try intruder.request("g\(index) \(verb)")
                    XCTAssertProtocolError(reply, "unknown-context", verb)
                }
            }
        }
        // The owner's evaluation is untouched: no cancel, no passcode attempt counted.
        XCTAssertOK(try owner.request("s1 sensor uid=0 result=nomatch"))
        XCTAssertEqual(try owner.next(tag: evalTag)["attempt"], "2")
        XCTAssertOK(try owner.request("f fallback ctx=\(ctx)"))
        let passcodePrompt = try owner.next(tag: evalTag)
        XCTAssertEqual(passcodePrompt["kind"], "passcode")
        XCTAssertEqual(passcodePrompt["attempts-left"], "6", "a guessed passcode was counted: \(passcodePrompt)")
        XCTAssertOK(try owner.request("pc passcode ctx=\(ctx) secret=\(passcode)"))
        XCTAssertEqual(try owner.next(tag: evalTag)["method"], "passcode")
        let status = try self.status(owner, uid: 0)
        XCTAssertEqual(status["passcode-failures"], "0")
        // A closed connection's context id cannot be taken over either.
        owner.shutDown()
        let later = try daemon.connect()
        XCTAssertProtocolError(try later.request("l1 get ctx=\(ctx)"), "unknown-context")
        XCTAssertProtocolError(try later.request("l2 evaluate ctx=\(ctx) policy=owner reason=x"), "unknown-context")
    }

    // MARK: - Admin verbs from a non-admin

    func testAdminVerbsFromANonAdminArePermissionDenied() throws {
        let daemon = try startDaemon()
        let admin = try daemon.connect()
        let passcode = Secrets.make("Adm1nVictim")
        try prepareUser(admin, uid: 0, passcode: passcode)
        let before = try status(admin, uid: 0)
        let intruder = try daemon.connect(asUID: nobody)
        let stolen = Secrets.make("St0lenPass")
        for verb in ["clear-passcode uid=0", "enroll uid=0", "enroll uid=\(nobody)", "unenroll uid=0", "sensor uid=0 result=nomatch",
                     "sensor uid=0 result=match", "sensor uid=\(nobody) result=match", "unlocked uid=0", "unlocked uid=\(nobody)",
                     "reset uid=0", "reset uid=\(nobody)", "stats", "status uid=0", "set-passcode secret=\(stolen) uid=0"] {
            let reply = try intruder.request("a \(verb)")
            XCTAssertProtocolError(reply, "permission-denied", verb)
        }
        // Its own status and ping still work; uid 0 is unchanged.
        XCTAssertOK(try intruder.request("own status"))
        XCTAssertOK(try intruder.request("own2 status uid=\(nobody)"))
        let after = try status(admin, uid: 0)
        XCTAssertEqual(before.arguments, after.arguments)
        // The log holds no admin event by the intruder.
        let log = try LogContents(stateDirectory: daemon.stateDirectory)
        for event in log.events {
            switch event.body {
            case .enrollmentChanged(_, _, let by, _, _), .passcodeChanged(_, _, let by), .deviceUnlocked(_, let by), .userReset(_, let by):
                XCTAssertNotEqual(by, nobody, "an admin event by the non-admin: \(event.body)")
            default: break
            }
        }
    }

    // MARK: - passcode and fallback with no prompt

    func testPasscodeFallbackAndCancelWithNoPromptAreBadStateAndNeverCount() throws {
        let daemon = try startDaemon()
        let admin = try daemon.connect()
        let passcode = Secrets.make("N0PromptPass")
        try prepareUser(admin, uid: 0, passcode: passcode)
        let client = try daemon.connect()
        let ctx = try newContext(client)
        let wrong = Secrets.make("Wr0ngNoPrompt")
        for verb in ["passcode ctx=\(ctx) secret=\(wrong)", "passcode ctx=\(ctx) secret=\(passcode)", "fallback ctx=\(ctx)", "cancel ctx=\(ctx)"] {
            XCTAssertProtocolError(try client.request("x \(verb)"), "bad-state", verb)
        }
        // During a biometric prompt: passcode is still bad-state (no passcode prompt waits).
        try client.send("ev evaluate ctx=\(ctx) policy=owner reason=test")
        XCTAssertEqual(try client.next(tag: "ev")["kind"], "biometric")
        XCTAssertProtocolError(try client.request("y passcode ctx=\(ctx) secret=\(wrong)"), "bad-state")
        // Fallback on the first prompt (not offered before a failure, S-27).
        let fallback = try client.request("z fallback ctx=\(ctx)")
        XCTAssertProtocolError(fallback, "bad-state", "fallback before any failure")
        XCTAssertOK(try client.request("c cancel ctx=\(ctx)"))
        XCTAssertEqual(try client.next(tag: "ev").errorName, "userCancel")
        // After the evaluation ended: all bad-state again.
        XCTAssertProtocolError(try client.request("w passcode ctx=\(ctx) secret=\(wrong)"), "bad-state")
        XCTAssertProtocolError(try client.request("v cancel ctx=\(ctx)"), "bad-state")
        let status = try self.status(admin, uid: 0)
        XCTAssertEqual(status["passcode-failures"], "0")
        XCTAssertEqual(status["biometric-failures"], "0")
        let log = try LogContents(stateDirectory: daemon.stateDirectory)
        XCTAssertFalse(log.events.contains { $0.body.kind == .passcodeRejected || $0.body.kind == .passcodeSubmitted },
                       "a passcode with no prompt reached the log")
    }

    // MARK: - Requests after quit

    func testRequestsAfterQuitAreNotAnswered() throws {
        let daemon = try startDaemon()
        let client = try daemon.connect()
        try client.sendRaw(Array("q1 quit\nq2 ping\nq3 new\nq4 status\n".utf8))
        let lines = try client.readUntilEOF()
        XCTAssertEqual(lines, ["q1 OK"], "requests after quit were answered")
        // Pipelined in separate writes, after the OK was read.
        let second = try daemon.connect()
        XCTAssertOK(try second.request("r1 quit"))
        try? second.send("r2 new")
        XCTAssertEqual(try second.readUntilEOF(), [])
        let admin = try daemon.connect()
        XCTAssertEqual(try status(admin, uid: 0)["contexts"], "0", "a context was created after quit")
    }

    // MARK: - A flood of new

    /// F-5: a client that invalidates its contexts as it should must be able
    /// to go on creating new ones on the same connection (the refusal itself
    /// says "invalidate some first").
    func testInvalidatedContextsDoNotCountAgainstTheLimit() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: ["MaxContextsPerConnection=4"]))
        let client = try daemon.connect()
        for round in 0..<10 {
            let reply = try client.request("n\(round) new")
            XCTAssertOK(reply, "new number \(round + 1) with at most one context open at a time")
            guard let ctx = reply["ctx"] else { break }
            XCTAssertOK(try client.request("i\(round) invalidate ctx=\(ctx)"))
        }
    }

    func testAFloodOfNewIsLimitedPerConnectionAndMemoryStaysBounded() throws {
        let maxContexts = 64
        let daemon = try startDaemon(configuration: configuration(daemon: ["MaxContextsPerConnection=\(maxContexts)"]))
        let admin = try daemon.connect()
        let before = residentKiB(daemon.pid)
        var clients: [Client] = []
        for round in 0..<20 {
            let client = try daemon.connect()
            var batch: [UInt8] = []
            for index in 0..<500 { batch += Array("n\(index) new\n".utf8) }
            try client.sendRaw(batch)
            var ok = 0, limited = 0
            for _ in 0..<500 {
                let reply = try client.next()
                if reply.status == .ok { ok += 1 } else if reply.errorName == "limit-exceeded" { limited += 1 }
            }
            XCTAssertEqual(ok, maxContexts, "round \(round)")
            XCTAssertEqual(limited, 500 - maxContexts, "round \(round)")
            XCTAssertOK(try client.request("still ping"), "the connection stays usable")
            clients.append(client)
        }
        XCTAssertEqual(try status(admin, uid: 0)["contexts"], String(20 * maxContexts))
        let during = residentKiB(daemon.pid)
        for client in clients { client.shutDown() }
        clients.removeAll()
        // Closing releases them (S-14); the count comes back to zero.
        XCTAssertTrue(try waitUntil { try status(admin, uid: 0)["contexts"] == "0" },
                      "contexts of closed connections were not released")
        XCTAssertLessThan(during - before, 128 * 1024, "RSS grew from \(before) KiB to \(during) KiB for \(20 * maxContexts) contexts")
        // And the released contexts leave the state: a second round does not grow it further.
        for _ in 0..<20 {
            let client = try daemon.connect()
            for index in 0..<maxContexts { XCTAssertOK(try client.request("m\(index) new")) }
            client.shutDown()
        }
        let log = try LogContents(stateDirectory: daemon.stateDirectory)
        XCTAssertLessThanOrEqual(log.state.contexts.count, maxContexts, "released contexts stay in the state")
    }
}
