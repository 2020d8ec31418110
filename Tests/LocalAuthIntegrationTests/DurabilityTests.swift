// When the daemon's events reach the log (SyncPolicy.onDemand, S-40): the
// loop writes each turn's events before that turn's replies leave, so a reply
// followed at once by SIGKILL still finds its event after the restart; the
// OK of an admin action and every output after a security failure wait until
// that event is durable (`stats`: durable-seq); everything else becomes
// durable with the 100 ms tick without anybody asking.
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class DurabilityTests: IntegrationTestCase {
    // MARK: Helpers

    /// `stats` (admin): (log-seq, durable-seq).
    private func seqs(_ client: Client, file: StaticString = #filePath, line: UInt = #line) throws -> (log: UInt64, durable: UInt64) {
        let reply = try client.request("\(tag("st")) stats")
        XCTAssertOK(reply, file: file, line: line)
        guard let log = reply["log-seq"].flatMap(UInt64.init), let durable = reply["durable-seq"].flatMap(UInt64.init) else {
            throw HarnessError("stats without log-seq/durable-seq: \(reply)")
        }
        XCTAssertLessThanOrEqual(durable, log, "durable-seq never passes log-seq", file: file, line: line)
        return (log, durable)
    }

    /// The log's events as `localauthctl log -o json` prints them (read-only,
    /// the daemon may be running or dead).
    private func events(_ daemon: DaemonProcess, file: StaticString = #filePath, line: UInt = #line) throws -> [[String: Any]] {
        let (code, out, err) = try runToCompletion(try Binary.find("localauthctl"),
                                                   ["log", "-D", daemon.stateDirectory, "-o", "json", "--no-pager"])
        XCTAssertEqual(code, 0, "localauthctl log: \(err)", file: file, line: line)
        return try out.split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw HarnessError("not a JSON object: \(line)")
            }
            return object
        }
    }

    private func events(_ daemon: DaemonProcess, type: String, ctx: String) throws -> [[String: Any]] {
        try events(daemon).filter { $0["type"] as? String == type && $0["ctx"] as? String == ctx }
    }

    private func seq(_ event: [String: Any]) -> UInt64 { UInt64(event["seq"] as? Int ?? 0) }

    /// The checks policy-checked lines stand for: one each, or their
    /// `count` when repeats were recorded as one event (S-48).
    private func checks(_ events: [[String: Any]]) -> Int { events.reduce(0) { $0 + ($1["count"] as? Int ?? 1) } }

    // MARK: A reply, then SIGKILL

    func testACanEvaluateAnsweredJustBeforeSIGKILLIsInTheLogAfterTheRestart() throws {
        let daemon = try startDaemon()
        var client = try daemon.connect()
        try prepareOwner(client)
        for round in 0..<3 {
            let ctx = try newContext(client)
            // One request, then a pipelined burst (several per loop turn).
            let count = round == 0 ? 1 : 25
            let tags = (0..<count).map { "c\(round)x\($0)" }
            try client.sendRaw(Array(tags.map { "\($0) can-evaluate ctx=\(ctx) policy=biometrics\n" }.joined().utf8))
            for tag in tags { XCTAssertOK(try client.next(tag: tag), "round \(round)") }
            daemon.kill()  // at once: no tick, no clean stop, no fdatasync asked for

            // What the kill left, read before any recovery.
            let left = try events(daemon, type: "policy-checked", ctx: ctx)
            XCTAssertEqual(checks(left), count, "round \(round): every answered can-evaluate is in the log after SIGKILL")
            for event in left {
                XCTAssertEqual(event["result"] as? String, "ok", "round \(round): \(event)")
                XCTAssertEqual(event["uid"] as? Int, 0, "round \(round): \(event)")
            }

            try daemon.start()
            client = try daemon.connect()
            let kept = try events(daemon, type: "policy-checked", ctx: ctx)
            XCTAssertEqual(kept.map(seq), left.map(seq), "round \(round): the restart's recovery kept them")
            let (log, _) = try seqs(client)
            XCTAssertGreaterThan(log, kept.map(seq).max() ?? 0, "round \(round): the restarted daemon goes on after them")
        }
        let report = try runToCompletion(try Binary.find("localauthctl"), ["verify", "-D", daemon.stateDirectory])
        XCTAssertEqual(report.0, 0, "verify after three kills: \(report.1) \(report.2)")
    }

    /// S-48 with S-19 and S-38: identical checks pipelined in one write are
    /// answered in one turn and recorded as few events with counts; a
    /// SIGKILL right after the last reply loses none of them, the restart
    /// keeps every record, and `verify` and `replay` accept the log.
    func test_S48_pipelinedIdenticalChecksAreRecordedWithTheirCountAndSurviveSIGKILL() throws {
        let daemon = try startDaemon()
        var client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        let tags = (0..<200).map { "r\($0)" }
        try client.sendRaw(Array(tags.map { "\($0) can-evaluate ctx=\(ctx) policy=biometrics\n" }.joined().utf8))
        for tag in tags { XCTAssertOK(try client.next(tag: tag)) }
        daemon.kill()

        let left = try events(daemon, type: "policy-checked", ctx: ctx)
        XCTAssertEqual(checks(left), 200, "every answered check is in the log after SIGKILL")
        XCTAssertLessThan(left.count, 200, "repeats in one turn were counted into one event: \(left.count) events")
        for event in left where event["count"] != nil {
            XCTAssertGreaterThanOrEqual(event["count"] as? Int ?? 0, 2, "\(event)")
            let first = try XCTUnwrap(event["first"] as? String), last = try XCTUnwrap(event["last"] as? String)
            XCTAssertEqual(event["time"] as? String, last, "the event's time is its last check's")
            XCTAssertLessThanOrEqual(first, last, "\(event)")
            XCTAssertEqual(event["result"] as? String, "ok")
        }
        try daemon.start()
        client = try daemon.connect()
        XCTAssertEqual(try events(daemon, type: "policy-checked", ctx: ctx).map(seq), left.map(seq), "the restart kept them")
        XCTAssertGreaterThan(try seqs(client).log, left.map(seq).max() ?? 0, "the restarted daemon goes on after them")
        let verify = try runToCompletion(try Binary.find("localauthctl"), ["verify", "-D", daemon.stateDirectory])
        XCTAssertEqual(verify.0, 0, "verify: \(verify.1) \(verify.2)")
    }

    /// F-18: a client that half-closes right after its checks. The read
    /// that finds EOF ends the connection's contexts and writes the replies
    /// at once (the peer is gone: nothing more to read); they must not leave
    /// before the records of those checks reach the log's file, or a SIGKILL
    /// in the same loop turn loses checks that were answered. The checks fill
    /// exactly one 64 KiB read, so the EOF is read in the same turn; other
    /// connections' pings, written while the daemon is stopped, keep that
    /// turn busy after the replies left.
    func test_S48_checksAnsweredToAHalfClosingClientSurviveSIGKILL() throws {
        let daemon = try startDaemon()
        try prepareOwner(try daemon.connect())
        // Three rounds: the kill must land before the busy turn ends, which
        // the old daemon lost to the scheduler about one round in four.
        for round in 0..<3 {
            if round > 0 { try daemon.start() }
            let client = try daemon.connect()
            let ctx = try newContext(client)
            let busy = try (0..<32).map { _ in try daemon.connect() }
            let count = 100
            var batch = (0..<count).map { "c\($0) can-evaluate ctx=\(ctx) policy=biometrics\n" }.joined()
            var pad = 0
            while batch.utf8.count < 65536 {
                let prefix = "p\(pad) ping k="
                pad += 1
                // Lines of at most ~4000 bytes; the last one fills the read exactly.
                let filler = 65536 - batch.utf8.count - prefix.utf8.count - 1
                batch += prefix + String(repeating: "z", count: filler > 4040 ? 4000 : max(filler, 1)) + "\n"
            }
            XCTAssertEqual(batch.utf8.count, 65536, "the batch fills one read")
            let pings = Array(String(repeating: "q ping\n", count: 25000).utf8)
            let pid = try XCTUnwrap(daemon.pid)
            Glibc.kill(pid, SIGSTOP)
            // SIGSTOP is delivered asynchronously: wait until it is stopped (5 s is a safety net).
            _ = waitUntil(safetyNet: 5) {
                let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
                let state = stat.split(separator: ")").last?.split(separator: " ").first
                return state == "T" || state == "t"
            }
            try client.sendRaw(Array(batch.utf8))
            shutdown(client.writeFD, Int32(SHUT_WR))
            for other in busy { try other.sendRaw(pings) }
            Glibc.kill(pid, SIGCONT)
            let replies = try client.readUntilEOF().map(Client.parse)
            daemon.kill()

            let answered = replies.filter { $0.tag.hasPrefix("c") && $0.status == .ok }.count
            XCTAssertEqual(answered, count, "round \(round): every check was answered before the close")
            let left = try events(daemon, type: "policy-checked", ctx: ctx)
            XCTAssertEqual(checks(left), answered, "round \(round): every check answered before SIGKILL is in the log: \(left)")
            let invalidated = try events(daemon, type: "context-invalidated", ctx: ctx)
            XCTAssertEqual(invalidated.count, 1, "round \(round): the half-close ended the context before the close")
            for other in busy { other.shutDown() }
        }
        try daemon.start()
        let verify = try runToCompletion(try Binary.find("localauthctl"), ["verify", "-D", daemon.stateDirectory])
        XCTAssertEqual(verify.0, 0, "verify after three kills: \(verify.1) \(verify.2)")
    }

    // MARK: Admin actions

    func testTheOKOfAnAdminActionComesOnlyOnceItIsDurable() throws {
        let daemon = try startDaemon()
        let admin = try daemon.connect()
        let actions = [
            "set-passcode secret=1234", "enroll uid=0", "enroll uid=0 template=second", "unlocked uid=0",
            "unenroll uid=0 template=second", "reset uid=0", "set-passcode secret=9999 uid=1000", "clear-passcode uid=1000",
        ]
        var previous = try seqs(admin).log
        for action in actions {
            XCTAssertOK(try admin.request("\(tag("a")) \(action)"), action)
            let (log, durable) = try seqs(admin)
            XCTAssertGreaterThan(log, previous, "\(action) recorded an event")
            XCTAssertEqual(durable, log, "\(action): its OK was held until its event was durable")
            previous = log
        }
    }

    // MARK: Events nobody waits for

    func testPlainCanEvaluateEventsBecomeDurableWithTheTick() throws {
        let daemon = try startDaemon()
        let admin = try daemon.connect()
        try prepareOwner(admin)
        let before = try seqs(admin)
        let client = try daemon.connect()
        let ctx = try newContext(client)
        for index in 0..<20 { XCTAssertOK(try client.request("c\(index) can-evaluate ctx=\(ctx) policy=biometrics")) }
        var now = try seqs(admin)
        XCTAssertGreaterThanOrEqual(now.log, before.log + 21, "context-created and 20 policy-checked")
        let target = now.log
        // Nothing else happens: the tick alone makes them durable (5 s is a safety net).
        try waitUntil(safetyNet: 5) {
            now = try seqs(admin)
            return now.durable >= target
        }
        XCTAssertGreaterThanOrEqual(now.durable, target, "the events of plain requests became durable without anybody asking")
        XCTAssertEqual(now.log, target, "stats records nothing")
    }

    // MARK: Security failures

    func testAFailedBiometricAttemptIsDurableBeforeItsPromptOrAnswerIsSeen() throws {
        let daemon = try startDaemon()
        let admin = try daemon.connect()
        try prepareOwner(admin)
        let observer = try daemon.connect()
        let user = try daemon.connect()
        let ctx = try newContext(user)
        let first = try evaluate(user, ctx: ctx, policy: "biometrics", tag: "e1")
        assertBiometricPrompt(first, attempt: 1, fallback: nil)
        var seen: [(attempt: Int, durable: UInt64, logBefore: UInt64)] = []
        for attempt in 1...3 {
            let before = try seqs(observer)
            try admin.send("s\(attempt) sensor uid=0 result=nomatch")
            // What reveals the failure: the next PROMPT, or the final answer.
            let revealed = try user.next(tag: "e1")
            let after = try seqs(observer)
            if attempt < 3 {
                XCTAssertEqual(revealed.status, .prompt, "\(revealed)")
                XCTAssertEqual(revealed["attempt"], String(attempt + 1), "\(revealed)")
            } else {
                XCTAssertLAError(revealed, -1, "authenticationFailed")
            }
            XCTAssertOK(try admin.next(tag: "s\(attempt)"))
            seen.append((attempt, after.durable, before.log))
        }
        let failures = try events(daemon, type: "biometric-failed", ctx: ctx).map(seq)
        XCTAssertEqual(failures.count, 3, "\(failures)")
        for (index, failure) in failures.enumerated() where index < seen.count {
            let (attempt, durable, logBefore) = seen[index]
            XCTAssertGreaterThan(failure, logBefore, "attempt \(attempt): the failure is the one fed then")
            XCTAssertGreaterThanOrEqual(durable, failure,
                                        "attempt \(attempt): the failure was durable when what revealed it was seen")
        }
    }
}
