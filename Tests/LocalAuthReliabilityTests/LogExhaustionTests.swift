// Log exhaustion (issue 15 items 2 and 11, S-48): each attack of the issue
// replayed by an unprivileged uid against the real daemon, with the secure
// outcome asserted by counting what the log holds before and after, never
// by timing. The means are in docs/decisions/0003-no-user-exhausts-the-log.md (S-48).
import Foundation
import Glibc
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class LogExhaustionTests: ReliabilityTestCase {
    let attackerUID: UInt32 = 65534
    let bystanderUID: UInt32 = 65533

    /// Events of `kind` about `uid` in the daemon's log now; policy checks
    /// count with the repeats recorded in one event (kind 33, S-48).
    func logged(_ daemon: DaemonProcess, _ kind: EventKind, uid: UInt32) throws -> Int {
        try LogContents(stateDirectory: daemon.stateDirectory).events.reduce(0) { total, event in
            guard event.body.uid == UserID(uid) else { return total }
            if kind == .policyChecked, case .policyCheckedRepeatedly(let checks) = event.body { return total + Int(checks.count) }
            return total + (event.body.kind == kind ? 1 : 0)
        }
    }

    /// Sends `lines` in one write and reads one reply per line (a pipelining attacker).
    func pipeline(_ client: Client, _ lines: [String]) throws -> [Response] {
        try client.sendRaw(Array(lines.map { $0 + "\n" }.joined().utf8))
        var replies: [Response] = []
        for _ in lines { replies.append(try client.next()) }
        return replies
    }

    // MARK: - Flooding can-evaluate and set

    func test_S48_anUnprivilegedCanEvaluateFloodIsLimitedWhileOthersAndAdminsAreServed() throws {
        let burst = 50
        let daemon = try startDaemon(configuration: configuration(log: ["UserEventRate=1", "UserEventBurst=\(burst)"]))
        let admin = try daemon.connect()
        try prepareUser(admin, uid: attackerUID, passcode: Secrets.make("Fl00dAttacker"))
        let attacker = try daemon.connect(asUID: attackerUID)
        let ctx = try newContext(attacker)
        // An evaluation of the attacker's own, running before the flood.
        try attacker.send("ev evaluate ctx=\(ctx) policy=biometrics reason=flood")
        XCTAssertEqual(try attacker.next(tag: "ev")["attempt"], "1")
        let checksBefore = try logged(daemon, .policyChecked, uid: attackerUID)

        let flood = 500
        let replies = try pipeline(attacker, (0..<flood).map { "f\($0) can-evaluate ctx=\(ctx) policy=biometrics" })
        let refused = replies.filter { $0.errorName == "limit-exceeded" }
        let answered = replies.filter { $0.status == .ok || $0["domain"] == "la" }
        XCTAssertEqual(refused.count + answered.count, flood, "every request got an answer: \(replies.suffix(3))")
        // The budget: a burst, plus one a second for as long as the flood took.
        XCTAssertLessThanOrEqual(answered.count, burst + 20, "the flood was not limited")
        XCTAssertGreaterThan(refused.count, flood / 2)
        XCTAssertTrue(refused.first?["message"]?.contains("UserEventRate=1") == true, "\(refused.first.map(String.init(describing:)) ?? "")")
        // A refused request recorded nothing.
        XCTAssertEqual(try logged(daemon, .policyChecked, uid: attackerUID) - checksBefore, answered.count)

        // Another user has a budget of their own; the admin has none at all.
        let bystander = try daemon.connect(asUID: bystanderUID)
        let theirs = try newContext(bystander)
        XCTAssertEqual(try bystander.request("b1 can-evaluate ctx=\(theirs) policy=owner")["domain"], "la",
                       "the bystander's check was answered by the core (passcode not set), not refused")
        let adminCtx = try newContext(admin)
        let adminReplies = try pipeline(admin, (0..<(burst * 4)).map { "a\($0) can-evaluate ctx=\(adminCtx) policy=owner" })
        XCTAssertFalse(adminReplies.contains { $0.errorName == "limit-exceeded" }, "an administrator was limited")

        // The attacker's running evaluation goes on: its failure is recorded
        // although the bucket is empty (S-48), and it ends with one answer.
        let failures = try logged(daemon, .biometricFailed, uid: attackerUID)
        XCTAssertOK(try admin.request("s1 sensor uid=\(attackerUID) result=nomatch"))
        XCTAssertEqual(try attacker.next(tag: "ev")["attempt"], "2")
        XCTAssertEqual(try logged(daemon, .biometricFailed, uid: attackerUID), failures + 1)
        XCTAssertOK(try attacker.request("c1 cancel ctx=\(ctx)"))
        XCTAssertLAError(try attacker.next(tag: "ev"), -2, "userCancel")
        // Reconnecting does not refill the bucket: it is the uid's, not the connection's.
        attacker.shutDown()
        let again = try daemon.connect(asUID: attackerUID)
        let fresh = try again.request("n2 new")
        XCTAssertProtocolError(fresh, "limit-exceeded", "a new connection got a fresh budget")
        let stats = try admin.request("st stats")
        XCTAssertGreaterThan(Int(stats["rate-refusals"] ?? "") ?? 0, 0, "\(stats)")
    }

    func test_S48_aPropertySetFloodAcrossManyConnectionsIsLimitedPerUID() throws {
        let burst = 40
        let daemon = try startDaemon(configuration: configuration(log: ["UserEventRate=1", "UserEventBurst=\(burst)"]))
        var clients: [Client] = []
        var contexts: [String] = []
        for _ in 0..<4 {
            let client = try daemon.connect(asUID: attackerUID)
            contexts.append(try newContext(client))
            clients.append(client)
        }
        let setsBefore = try logged(daemon, .contextPropertySet, uid: attackerUID)
        var accepted = 0, refused = 0
        for (client, ctx) in zip(clients, contexts) {
            let title = String(repeating: "T", count: 500)
            for reply in try pipeline(client, (0..<100).map { "s\($0) set ctx=\(ctx) fallback-title=\(title)\($0 % 10)" }) {
                if reply.status == .ok { accepted += 1 } else if reply.errorName == "limit-exceeded" { refused += 1 }
            }
        }
        XCTAssertEqual(accepted + refused, 400)
        // Four contexts were made from the same budget: together a burst at most, plus the refill.
        XCTAssertLessThanOrEqual(accepted + contexts.count, burst + 20, "four connections got four budgets")
        XCTAssertEqual(try logged(daemon, .contextPropertySet, uid: attackerUID) - setsBefore, accepted)
    }

    // MARK: - Caps on stored strings

    func test_S48_oversizedPropertiesAndReasonsAreRefusedWithTheNamedLimit() throws {
        let daemon = try startDaemon()
        let user = try daemon.connect(asUID: attackerUID)
        let ctx = try newContext(user)
        let before = try logged(daemon, .contextPropertySet, uid: attackerUID)
        let big = try user.request("s1 set ctx=\(ctx) fallback-title=\(String(repeating: "x", count: 513))")
        XCTAssertProtocolError(big, "limit-exceeded")
        XCTAssertTrue(big["message"]?.contains("MaxPropertyBytes=512") == true && big["message"]?.contains("fallback-title") == true,
                      "\(big)")
        // A whole `set` is refused when one of its values is too long: nothing changes.
        XCTAssertProtocolError(try user.request("s2 set ctx=\(ctx) cancel-title=ok localized-reason=\(String(repeating: "r", count: 600))"),
                               "limit-exceeded")
        XCTAssertEqual(try user.request("g1 get ctx=\(ctx)")["cancel-title"], "Cancel")
        // 512 bytes is allowed, as is the third value that keeps the context within 1024 bytes.
        let half = String(repeating: "h", count: 500)
        XCTAssertOK(try user.request("s3 set ctx=\(ctx) fallback-title=\(half)"))
        XCTAssertOK(try user.request("s4 set ctx=\(ctx) cancel-title=\(half)"))
        let third = try user.request("s5 set ctx=\(ctx) localized-reason=\(String(repeating: "l", count: 100))")
        XCTAssertProtocolError(third, "limit-exceeded")
        XCTAssertTrue(third["message"]?.contains("MaxPropertyBytesPerContext=1024") == true && third["message"]?.contains("localized-reason") == true,
                      "\(third)")
        // Replacing a value counts its new length, not both.
        XCTAssertOK(try user.request("s6 set ctx=\(ctx) cancel-title=\(String(repeating: "c", count: 520 - 1 - 500))"))
        XCTAssertEqual(try logged(daemon, .contextPropertySet, uid: attackerUID) - before, 3)
        // evaluate's reason is a stored string too (evaluation-started carries it).
        let long = try user.request("e1 evaluate ctx=\(ctx) policy=owner reason=\(String(repeating: "w", count: 513))")
        XCTAssertProtocolError(long, "limit-exceeded")
        XCTAssertTrue(long["message"]?.contains("reason=") == true && long["message"]?.contains("MaxPropertyBytes") == true, "\(long)")
        XCTAssertEqual(try logged(daemon, .evaluationStarted, uid: attackerUID), 0)
        // Administrators get the same per-value caps (they bound snapshots and memory).
        let admin = try daemon.connect()
        let adminCtx = try newContext(admin)
        XCTAssertProtocolError(try admin.request("a1 set ctx=\(adminCtx) fallback-title=\(String(repeating: "x", count: 513))"), "limit-exceeded")
    }

    func test_S48_thePerUserPropertyCapHoldsAcrossConnectionsAndIsFreedWhenOneCloses() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: ["MaxPropertyBytesPerUser=4K"]))
        let value = String(repeating: "p", count: 450)
        func filledContext(_ client: Client) throws -> Response {
            let ctx = try newContext(client)
            return try client.request("\(tag("s")) set ctx=\(ctx) fallback-title=\(value) cancel-title=\(value)")
        }
        // 900 bytes a context: four fit in 4096 bytes, on two connections.
        let first = try daemon.connect(asUID: attackerUID)
        let second = try daemon.connect(asUID: attackerUID)
        for client in [first, first, second, second] { XCTAssertOK(try filledContext(client)) }
        let third = try daemon.connect(asUID: attackerUID)
        let over = try filledContext(third)
        XCTAssertProtocolError(over, "limit-exceeded")
        XCTAssertTrue(over["message"]?.contains("MaxPropertyBytesPerUser=4096") == true, "\(over)")
        // Another uid is not affected.
        XCTAssertOK(try filledContext(try daemon.connect(asUID: bystanderUID)))
        // The first connection closes: its contexts' bytes are the user's again.
        XCTAssertOK(try first.request("q quit"))
        _ = try first.readUntilEOF()
        XCTAssertOK(try third.request("p ping"))  // the close was handled before this request
        XCTAssertOK(try filledContext(third))
        XCTAssertOK(try filledContext(third))
        XCTAssertProtocolError(try filledContext(third), "limit-exceeded")
    }

    // MARK: - A flood on a small file system

    func test_S48_aFloodOnASmallTmpfsLeavesFailuresRecordableAndTheDaemonRestartable() throws {
        let mount = try tinyFilesystem("12m")
        let state = mount.path + "/mnt/state"
        // No event budget here, so that the flood reaches the reserve quickly.
        let daemon = try startDaemon(configuration: configuration(log: ["UserEventRate=0", "ReserveSpace=6M", "SegmentSize=1M"]),
                                     stateDirectory: state)
        let admin = try daemon.connect()
        try prepareUser(admin, uid: 0, passcode: Secrets.make("Sm4llTmpfs"))
        let victim = try daemon.connect()
        let victimCtx = try newContext(victim)
        let attacker = try daemon.connect(asUID: attackerUID)
        let ctx = try newContext(attacker)
        var refusal: Response?
        var sets = 0
        let value = String(repeating: "F", count: 500)
        flood: for round in 0..<200 {
            for reply in try pipeline(attacker, (0..<100).map { "r\(round)-\($0) set ctx=\(ctx) localized-reason=\(value)\($0 % 10)" }) {
                if reply.status == .ok { sets += 1 } else { refusal = reply; break flood }
            }
        }
        guard let refusal else { return XCTFail("\(sets) property sets filled no reserve") }
        XCTAssertProtocolError(refusal, "unavailable", "the attacker is told the disk is nearly full")
        XCTAssertTrue(refusal["message"]?.contains("nearly full") == true, "\(refusal)")
        // The reserve held: a pipelined flood with no event budget cannot run
        // far into it between two looks at the free space (a release daemon
        // once wrote all 20,000 sets between two ticks). 256 records of at
        // most ~1 KiB may land unjudged, plus one turn's lines and the next
        // segment's 1M preallocation: well under 2 MiB.
        var info = statvfs()
        XCTAssertEqual(statvfs(state, &info), 0)
        let free = Int64(info.f_bavail) * Int64(info.f_frsize)
        XCTAssertGreaterThan(free, 4 << 20, "the flood ran \((6 << 20) - free) bytes into the 6M reserve after \(sets) sets")
        // Another unprivileged user gets an answer, not silence.
        XCTAssertProtocolError(try daemon.connect(asUID: bystanderUID).request("b new"), "unavailable")
        // A failure is recorded and revealed; an admin action is recorded.
        let failures = try logged(daemon, .biometricFailed, uid: 0)
        try victim.send("ev evaluate ctx=\(victimCtx) policy=biometrics reason=after-flood")
        XCTAssertEqual(try victim.next(tag: "ev")["attempt"], "1")
        XCTAssertOK(try admin.request("s1 sensor uid=0 result=nomatch"))
        XCTAssertEqual(try victim.next(tag: "ev")["attempt"], "2")
        XCTAssertEqual(try logged(daemon, .biometricFailed, uid: 0), failures + 1)
        XCTAssertOK(try admin.request("s2 sensor uid=0 result=match"))
        XCTAssertEqual(try victim.next(tag: "ev")["method"], "biometric")
        XCTAssertOK(try admin.request("r1 reset uid=\(attackerUID)"))
        XCTAssertEqual(try logged(daemon, .userReset, uid: attackerUID), 1)
        XCTAssertEqual(try admin.request("st stats")["space-low"], "true")
        // The daemon stops and starts again on the same small file system.
        daemon.stop()
        try daemon.start()
        let after = try daemon.connect()
        XCTAssertEqual(try status(after, uid: 0)["biometric-failures"], "0", "the match reset the count")
        assertLogVerifies(state, allowTornTail: false, "after the flood and a restart")
    }

    /// F-16 (red team, 2 December): with no user budget, 64 connections of
    /// one uid, each writing its pipelined sets at once, ran a 3M file system
    /// past a 2M reserve until the log failed: one loop turn reads thousands
    /// of requests, whose records reach the file (and statvfs) only at the
    /// turn's end, in preallocated steps. The reserve is judged at admission
    /// against an estimate (free space at the last look minus what the log
    /// claimed since), so routine sets are refused before it is reached.
    func test_S48_manyConnectionsPipeliningAtOnceAreRefusedBeforeTheReserve() throws {
        let mount = try tinyFilesystem("3m")
        let state = mount.path + "/mnt/state"
        let reserve: Int64 = 2 << 20, slack: Int64 = 128 << 10
        let daemon = try startDaemon(configuration: configuration(log: ["UserEventRate=0", "ReserveSpace=2M", "SegmentSize=256K"]),
                                     stateDirectory: state)
        let admin = try daemon.connect()
        try prepareUser(admin, uid: 0, passcode: Secrets.make("R3serveHeld"), enroll: false)
        var attackers: [(Client, String)] = []
        for _ in 0..<64 {
            let attacker = try daemon.connect(asUID: attackerUID)
            attackers.append((attacker, try newContext(attacker)))
        }
        // The lowest free space seen, sampled whenever replies are read
        // (a tmpfs counts a page as used the moment it is written).
        var lowest = Int64.max
        func sample() {
            var info = statvfs()
            if statvfs(state, &info) == 0 { lowest = min(lowest, Int64(info.f_bavail) * Int64(info.f_frsize)) }
        }
        sample()
        XCTAssertGreaterThan(lowest, reserve, "the daemon started inside the reserve")
        var accepted = 0, refused = 0, other: [Response] = []
        var answered = [Int](repeating: 0, count: attackers.count)
        func read(_ index: Int) throws {
            let reply = try attackers[index].0.next()
            answered[index] += 1
            if reply.status == .ok { accepted += 1 } else if reply.errorName == "unavailable" { refused += 1 } else { other.append(reply) }
        }
        // Each connection's 300 sets in one write; replies are read as they
        // come between the writes (one connection's 300 replies, refusals
        // included, fit in its socket buffer: the daemon never waits for us).
        let value = String(repeating: "y", count: 200)
        for (index, (attacker, ctx)) in attackers.enumerated() {
            let lines = (0..<300).map { "f\(index)-\($0) set ctx=\(ctx) localized-reason=\(value)\($0 % 10)\n" }.joined()
            try attacker.sendRaw(Array(lines.utf8))
            for reader in attackers.indices { while try attackers[reader].0.hasLine() { try read(reader) } }
            sample()
        }
        for index in attackers.indices {
            while answered[index] < 300 {
                try read(index)
                sample()
            }
        }
        XCTAssertEqual(other.count, 0, "answers other than OK and unavailable: \(other.prefix(3))")
        XCTAssertEqual(accepted + refused, 64 * 300, "every set got an answer")
        XCTAssertGreaterThan(refused, 0, "19,200 sets on a 3M file system were all accepted")
        // The reserve held, within a slack of half a segment (128K). What
        // may land past the reserve by design, whatever the timing: the
        // records of the request admitted last while the estimate was above
        // it, and the preallocation step (SegmentSize/8 = 32K) they start;
        // a new segment's header and its predecessor's seal (a block each);
        // the security events this test records next. Together under 48K.
        // (The daemon of 1f70bf4, judging at ticks and every 256 records,
        // ran 316K into it on a debug build, 1.5M in CI's release run.)
        XCTAssertGreaterThanOrEqual(lowest, reserve - slack,
                                    "the flood ran \(reserve - lowest) bytes into the 2M reserve (\(accepted) sets accepted)")
        // The log did not fail: a wrong passcode is recorded and revealed...
        let ctx = try newContext(admin)
        try admin.send("ev evaluate ctx=\(ctx) policy=owner reason=after-flood")
        XCTAssertEqual(try admin.next(tag: "ev")["kind"], "passcode")
        XCTAssertOK(try admin.request("p1 passcode ctx=\(ctx) secret=\(Secrets.make("Wr0ngInReserve"))"))
        XCTAssertEqual(try admin.next(tag: "ev")["kind"], "passcode", "the wrong passcode was answered with a new prompt")
        XCTAssertEqual(try logged(daemon, .passcodeRejected, uid: 0), 1)
        XCTAssertOK(try admin.request("c1 cancel ctx=\(ctx)"))
        // ... an administrator's action too, while the attacker is still refused.
        XCTAssertOK(try admin.request("r1 reset uid=\(attackerUID)"))
        XCTAssertEqual(try logged(daemon, .userReset, uid: attackerUID), 1)
        XCTAssertProtocolError(try attackers[0].0.request("late set ctx=\(attackers[0].1) localized-reason=late"), "unavailable")
        let stats = try admin.request("st stats")
        XCTAssertEqual(stats["space-low"], "true", "\(stats)")
        XCTAssertEqual(stats["log-seq"], stats["durable-seq"], "\(stats)")
        sample()
        XCTAssertGreaterThanOrEqual(lowest, reserve - slack, "the security events after the flood")
        assertLogVerifies(state, allowTornTail: false, "after the flood")
    }

    // MARK: - Memory (item 11)

    func test_memoryOfManyContextsReturnsWhenTheirConnectionsClose() throws {
        let daemon = try startDaemon(configuration: configuration(daemon: ["MaxContextsPerConnection=64"]))
        let value = String(repeating: "m", count: 500)
        /// 32 connections × 64 contexts with 1000 bytes of properties each, then closed.
        func load() throws -> Int {
            var clients: [Client] = []
            for _ in 0..<32 {
                let client = try daemon.connect()
                var lines: [String] = []
                for _ in 0..<64 { lines.append("\(tag("n")) new") }
                let created = try pipeline(client, lines).compactMap { $0["ctx"] }
                XCTAssertEqual(created.count, 64)
                _ = try pipeline(client, created.map { "\(tag("s")) set ctx=\($0) fallback-title=\(value) cancel-title=\(value)" })
                clients.append(client)
            }
            let peak = residentKiB(daemon.pid)
            let admin = try daemon.connect()
            let releases = Int(try admin.request("\(tag("st")) stats")["memory-releases"] ?? "") ?? -1
            for client in clients {
                try client.send("q quit")
                _ = try client.readUntilEOF()
            }
            // The release runs in the tick after the closes: wait for it to be counted (a safety net, not a timing).
            try waitUntil { Int(try admin.request("\(tag("st")) stats")["memory-releases"] ?? "") ?? -1 > releases }
            return peak
        }
        let baseline = residentKiB(daemon.pid)
        let peak = try load()
        let after = residentKiB(daemon.pid)
        let peak2 = try load()
        let after2 = residentKiB(daemon.pid)
        XCTAssertEqual(try daemon.connect().request("st stats")["contexts"], "0")
        print("RSS KiB: baseline \(baseline), peak \(peak), after close \(after), peak \(peak2), after close \(after2)")
        XCTAssertGreaterThan(peak - baseline, 2048, "the load did not show in RSS: this test measures nothing")
        XCTAssertLessThan(after - baseline, (peak - baseline) / 4,
                          "memory of closed connections was not returned (baseline \(baseline), peak \(peak), after \(after) KiB)")
        XCTAssertLessThan(after2 - baseline, (peak - baseline) / 4, "a second round kept memory (\(after2) KiB)")
    }

    func residentKiB(_ pid: pid_t?) -> Int {
        guard let pid else { return 0 }
        for line in readText("/proc/\(pid)/status").split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
        }
        return 0
    }
}
