// S-19 with S-48: `localauthctl log` shows every check, also when the daemon
// recorded repeated identical checks as one event (kind 33): as AUDIT.md's
// `policy-checked`, with `count` and the time range (`first`, `last`) in
// JSON, `×N FIRST..LAST` in the short format, and the same through the
// per-context index; `replay` and `verify` read such a log.
import Foundation
import LocalAuthTestSupport
import XCTest

final class RepeatedChecksLogTests: CtlTestCase {
    /// 120 identical checks pipelined in one write (one turn), then a
    /// clean stop; returns the context.
    private func pipelinedChecks(_ count: Int) throws -> String {
        try admin.ok("set-passcode secret=1234")
        try admin.ok("enroll uid=0")
        let client = try Client(socketPath: daemon.socketPath)
        let ctx = try XCTUnwrap(try client.request("n new")["ctx"])
        let tags = (0..<count).map { "c\($0)" }
        try client.sendRaw(Array(tags.map { "\($0) can-evaluate ctx=\(ctx) policy=owner\n" }.joined().utf8))
        for tag in tags { XCTAssertEqual(try client.next(tag: tag).status, .ok, tag) }
        XCTAssertEqual(daemon.stop(), 0, daemon.stderr)
        return ctx
    }

    private func checkLines(_ out: String, ctx: String) -> [[String: Any]] {
        out.split(separator: "\n").map { jsonObject(String($0)) }
            .filter { $0["type"] as? String == "policy-checked" && $0["ctx"] as? String == ctx }
    }

    func test_S19_everyCoalescedCheckIsShownWithItsCountAndTimeRange() throws {
        let ctx = try pipelinedChecks(120)
        let json = try ctl(["log", "-D", daemon.stateDirectory, "-o", "json", "--no-pager"])
        XCTAssertEqual(json.code, 0, json.err)
        let lines = checkLines(json.out, ctx: ctx)
        XCTAssertEqual(lines.reduce(0) { $0 + ($1["count"] as? Int ?? 1) }, 120, json.out)
        let counted = lines.filter { $0["count"] != nil }
        XCTAssertFalse(counted.isEmpty, "one turn's repeats were counted: \(json.out)")
        XCTAssertFalse(json.out.contains("policy-checked-repeatedly"), "shown as AUDIT.md's type")
        for line in counted {
            XCTAssertGreaterThanOrEqual(line["count"] as? Int ?? 0, 2)
            XCTAssertEqual(line["time"] as? String, line["last"] as? String)
            XCTAssertNotNil(line["first"] as? String)
            // AUDIT.md's policy-checked fields, all there.
            XCTAssertEqual(line["policy"] as? Int, 2)
            XCTAssertEqual(line["biometry"] as? String, "touchID")
            XCTAssertEqual(line["result"] as? String, "ok")
            XCTAssertEqual(line["uid"] as? Int, 0)
        }

        // The same records through the per-context index.
        let indexed = try ctl(["log", "-D", daemon.stateDirectory, "--context", ctx, "-o", "json", "--no-pager"])
        XCTAssertEqual(indexed.code, 0, indexed.err)
        XCTAssertEqual(checkLines(indexed.out, ctx: ctx).map { $0["seq"] as? Int }, lines.map { $0["seq"] as? Int })

        // Short: one line each, `×N FIRST..LAST`, no count= field.
        let short = try ctl(["log", "-D", daemon.stateDirectory, "--context", ctx, "--no-pager"])
        XCTAssertEqual(short.code, 0, short.err)
        let shortChecks = short.out.split(separator: "\n").filter { $0.contains(" policy-checked ") }
        XCTAssertEqual(shortChecks.count, lines.count, short.out)
        for (text, line) in zip(shortChecks, lines) {
            if let count = line["count"] as? Int, let first = line["first"] as? String, let last = line["last"] as? String {
                XCTAssertTrue(text.hasSuffix(" \u{00D7}\(count) \(first)..\(last)"), String(text))
                XCTAssertFalse(text.contains("count="), String(text))
            } else {
                XCTAssertFalse(text.contains("\u{00D7}"), String(text))
            }
            XCTAssertTrue(text.contains(" policy=owner biometry=touchID result=ok"), String(text))
        }
        // Verbose: the fields one per line.
        let verbose = try ctl(["log", "-D", daemon.stateDirectory, "--context", ctx, "-o", "verbose", "--no-pager"])
        XCTAssertEqual(verbose.code, 0, verbose.err)
        if let count = counted.first?["count"] as? Int { XCTAssertTrue(verbose.out.contains("    count=\(count)\n"), verbose.out) }

        // The tools that fold the log take the records as their counts.
        let verify = try ctl(["verify", "-D", daemon.stateDirectory])
        XCTAssertEqual(verify.code, 0, verify.out + verify.err)
        let seq = try XCTUnwrap(counted.last?["seq"] as? Int)
        let replay = try ctl(["replay", "-D", daemon.stateDirectory, "--until-seq", "\(seq)", "-o", "json"])
        XCTAssertEqual(replay.code, 0, replay.err)
        let contexts = jsonObject(replay.out)["contexts"] as? [String: [String: Any]] ?? [:]
        XCTAssertEqual(jsonObject(replay.out)["seq"] as? Int, seq, "records are seqs: the run is one")
        XCTAssertEqual(contexts[ctx]?["biometry"] as? String, "touchID", "S-17 from the coalesced checks: \(replay.out)")
    }
}
