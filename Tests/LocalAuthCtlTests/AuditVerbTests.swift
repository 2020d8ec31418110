// The offline verbs (AUDIT.md) on logs made by running the daemon: `log -o
// json` lines parse and carry AUDIT.md's fields per type; live `status`
// equals `replay` for every user (S-38); `replay --until-seq`; `verify`
// passes on a clean log and fails (exit 1) on each corruption; `repair`.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class AuditVerbTests: CtlTestCase {
    /// A state directory this user cannot read is not "no event log": the
    /// offline verbs say permission denied and who can read it (found by an
    /// audit: they reported a missing log to an unprivileged user).
    func testAnUnreadableStateDirectoryIsPermissionDeniedNotMissing() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to run localauthctl as another uid") }
        try admin.ok("set-passcode secret=1234")
        for verb in ["log", "replay", "verify", "repair"] {
            let (code, _, err) = try runToCompletion(
                "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--", try ctlBinary(), verb,
                                     "-D", daemon.stateDirectory, "--no-pager"].filter { verb == "log" || $0 != "--no-pager" })
            XCTAssertEqual(code, 1, "\(verb): \(err)")
            XCTAssertTrue(err.contains("permission denied"), "\(verb): \(err)")
            XCTAssertFalse(err.contains("No event log"), "\(verb): \(err)")
        }
        let missing = try ctl(["verify", "-D", daemon.directory.path + "/no-such-state"])
        XCTAssertEqual(missing.code, 1)
        XCTAssertTrue(missing.err.contains("No event log in"), missing.err)
    }

    /// Activity for two users: enrollments, passcode changes and failures
    /// (into backoff), a biometric lockout, evaluations of every ending.
    func makeHistory() throws {
        try admin.ok("set-passcode secret=1234")
        try admin.ok("enroll uid=0")
        try admin.ok("set-passcode secret=9999 uid=1000")
        try admin.ok("enroll uid=1000 template=a")
        try admin.ok("enroll uid=1000 template=b")
        try evaluate(policy: "biometrics", readings: ["retry", "match"])
        try evaluate(policy: "biometrics", readings: ["nomatch", "nomatch", "nomatch"])
        try evaluate(policy: "owner", readings: ["nomatch", "nomatch"], passcodes: ["1234"])
        try evaluate(policy: "biometrics", readings: ["nomatch", "nomatch", "nomatch"])
        try evaluate(policy: "biometrics", readings: ["nomatch", "nomatch"])  // locked out
        // Six different wrong passcodes (S-7: a repeated one counts once): backoff (S-5).
        for wrong in 0..<6 { try admin.request("set-passcode secret=1111 old-secret=000\(wrong)") }
        try admin.ok("unlocked uid=1000")
        try admin.ok("reset uid=1000")
        let client = try Admin(daemon.socketPath)
        let ctx = try client.ok("new")["ctx"]!
        try client.ok("set ctx=\(ctx) fallback-title=\"Use it\"")
        try client.request("can-evaluate ctx=\(ctx) policy=owner")
        try client.ok("invalidate ctx=\(ctx)")
    }

    func testLiveStatusOfEveryUserEqualsReplay() throws {
        try makeHistory()
        let replay = try ctl(["replay", "-D", daemon.stateDirectory, "-o", "json"])
        XCTAssertEqual(replay.code, 0, replay.err)
        let state = jsonObject(replay.out)
        let users = state["users"] as? [String: [String: Any]] ?? [:]
        XCTAssertEqual(Set(users.keys), ["0", "1000"])
        for (uid, derived) in users {
            let result = try ctl(["status", "--uid", uid, "-o", "json"] + socket)
            XCTAssertEqual(result.code, 0, result.err)
            let live = jsonObject(result.out)
            for field in ["templates", "passcode_set", "biometric_failures", "biometry_locked_out",
                          "passcode_failures", "admin_locked"] {
                XCTAssertEqual(live[field].map { "\($0)" }, derived[field].map { "\($0)" }, "uid \(uid) \(field)")
            }
            let retryAfter = live["retry_after"] as? Int ?? -1
            XCTAssertEqual(retryAfter > 0, !(derived["passcode_retry_at"] is NSNull), "uid \(uid): backoff in both or neither")
        }
        XCTAssertEqual(users["0"]?["biometry_locked_out"] as? Bool, true)
        XCTAssertEqual(users["0"]?["passcode_failures"] as? Int, 6)
        XCTAssertEqual(users["1000"]?["templates"] as? Int, 2)
    }

    func testLogJSONLinesCarryAuditFields() throws {
        try makeHistory()
        let result = try ctl(["log", "-D", daemon.stateDirectory, "-o", "json", "--no-pager"])
        XCTAssertEqual(result.code, 0, result.err)
        // AUDIT.md's table; `uid`, `ctx`, `eval`, `pid` "when they apply".
        let required: [String: Set<String>] = [
            "daemon-started": ["version", "boot_id", "pid"], "daemon-stopped": [],
            "context-created": ["uid", "ctx", "pid"], "context-property-set": ["ctx", "name", "value"],
            "context-invalidated": ["ctx", "reason"], "policy-checked": ["ctx", "policy", "biometry", "result"],
            "evaluation-started": ["ctx", "eval", "policy", "reason"], "biometric-matched": ["uid", "ctx", "eval"],
            "biometric-failed": ["uid", "ctx", "eval"], "biometric-retry": ["uid", "ctx", "eval", "message"],
            "fallback-chosen": ["ctx", "eval"], "passcode-accepted": ["uid"], "passcode-rejected": ["uid"],
            "evaluation-succeeded": ["ctx", "eval", "method"], "evaluation-failed": ["ctx", "eval", "code", "name"],
            "enrollment-changed": ["uid", "templates", "by"], "passcode-changed": ["uid", "set", "by"],
            "device-unlocked": ["uid", "by"], "user-reset": ["uid", "by"], "log-repaired": ["first_lost_seq", "by"],
        ]
        // What the project adds beyond AUDIT.md's minimum (documented in EventFields.swift).
        let extras: [String: Set<String>] = [
            "context-created": ["caller", "service", "tty", "rhost", "passcode_prompts"],
            "context-property-set": ["uid"], "context-invalidated": ["uid"], "policy-checked": ["uid", "reason"],
            "evaluation-started": ["uid"], "evaluation-succeeded": ["uid"], "fallback-chosen": ["uid"],
            "evaluation-failed": ["uid", "message", "reason", "retry_after", "admin_locked"],
            "passcode-accepted": ["ctx", "eval"], "passcode-rejected": ["ctx", "eval", "counted"],
        ]
        let projectTypes: Set<String> = ["rules-applied", "prompt-shown", "passcode-submitted", "biometric-disconnected",
                                         "context-released"]
        var expectedSeq = 1
        var seen: Set<String> = []
        for line in result.lines {
            let object = jsonObject(line)
            XCTAssertEqual(object["seq"] as? Int, expectedSeq, "seq from 1, no gaps")
            expectedSeq += 1
            let time = object["time"] as? String ?? ""
            XCTAssertNotNil(time.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$"#, options: .regularExpression), time)
            guard let type = object["type"] as? String else { XCTFail(line); continue }
            seen.insert(type)
            let keys = Set(object.keys).subtracting(["seq", "time", "type"])
            if projectTypes.contains(type) { continue }
            guard let fields = required[type] else { XCTFail("type not in AUDIT.md: \(line)"); continue }
            XCTAssertTrue(fields.isSubset(of: keys), "\(type) lacks \(fields.subtracting(keys)): \(line)")
            XCTAssertEqual(keys.subtracting(fields).subtracting(extras[type] ?? []), [], "\(type) has unexpected fields: \(line)")
            for key in ["uid", "eval", "pid", "policy", "templates", "by", "code", "first_lost_seq"] where object[key] != nil {
                XCTAssertTrue(object[key] is Int, "\(key) is a number: \(line)")
            }
            for key in ["set"] where object[key] != nil { XCTAssertTrue(object[key] is Bool, line) }
        }
        for type in ["daemon-started", "context-created", "context-property-set", "context-invalidated", "policy-checked",
                     "evaluation-started", "biometric-matched", "biometric-failed", "biometric-retry",
                     "passcode-accepted", "passcode-rejected", "evaluation-succeeded", "evaluation-failed",
                     "enrollment-changed", "passcode-changed", "device-unlocked", "user-reset"] {
            XCTAssertTrue(seen.contains(type), "the history made a \(type) event")
        }

        // Filters: --uid, --context, time window; short and verbose say the same.
        let uid1000 = try ctl(["log", "-D", daemon.stateDirectory, "--uid", "1000", "-o", "json", "--no-pager"])
        XCTAssertFalse(uid1000.lines.isEmpty)
        XCTAssertTrue(uid1000.lines.allSatisfy { jsonObject($0)["uid"] as? Int == 1000 })
        let all = result.lines.map { jsonObject($0) }
        let context = all.first { $0["type"] as? String == "context-property-set" }?["ctx"] as? String ?? ""
        let byContext = try ctl(["log", "-D", daemon.stateDirectory, "--context", context, "-o", "json", "--no-pager"])
        let types = byContext.lines.map { jsonObject($0)["type"] as? String ?? "" }.filter { !projectTypes.contains($0) }
        XCTAssertEqual(types, ["context-created", "context-property-set", "policy-checked", "context-invalidated"])
        let short = try ctl(["log", "-D", daemon.stateDirectory, "--no-pager"])
        XCTAssertEqual(short.lines.count, result.lines.count)
        for (text, object) in zip(short.lines, all) {
            XCTAssertTrue(text.hasPrefix("\(object["time"]!) \(object["seq"]!) \(object["type"]!)"), text)
        }
        let middle = all[all.count / 2]["time"] as! String
        let since = try ctl(["log", "-D", daemon.stateDirectory, "--since", middle, "-o", "json", "--no-pager"])
        XCTAssertTrue(since.lines.allSatisfy { (jsonObject($0)["time"] as! String) >= middle })
        let until = try ctl(["log", "-D", daemon.stateDirectory, "--until", middle, "-o", "json", "--no-pager"])
        XCTAssertEqual(Set(since.lines).union(until.lines).count, all.count, "since/until are inclusive and cover all")
        XCTAssertTrue(try ctl(["log", "-D", daemon.stateDirectory, "--since", "-1h", "--no-pager"]).code == 0)
    }

    func testReplayUntilSeqIsTheStateAtThatPoint() throws {
        try admin.ok("set-passcode secret=1234")
        try admin.ok("enroll uid=0")
        try evaluate(policy: "biometrics", readings: ["nomatch", "nomatch", "nomatch"])
        let log = try ctl(["log", "-D", daemon.stateDirectory, "-o", "json", "--no-pager"]).lines.map { jsonObject($0) }
        let firstFailure = log.first { $0["type"] as? String == "biometric-failed" }!["seq"] as! Int
        let at = try ctl(["replay", "-D", daemon.stateDirectory, "--until-seq", String(firstFailure), "-o", "json"])
        XCTAssertEqual(at.code, 0, at.err)
        let state = jsonObject(at.out)
        XCTAssertEqual(state["seq"] as? Int, firstFailure)
        XCTAssertEqual((state["users"] as? [String: [String: Any]])?["0"]?["biometric_failures"] as? Int, 1)
        let before = try ctl(["replay", "-D", daemon.stateDirectory, "--until-seq", String(firstFailure - 1), "-o", "json"])
        XCTAssertEqual((jsonObject(before.out)["users"] as? [String: [String: Any]])?["0"]?["biometric_failures"] as? Int, 0)
        let time = log.first { $0["seq"] as? Int == firstFailure }!["time"] as! String
        let byTime = try ctl(["replay", "-D", daemon.stateDirectory, "--until", time, "-o", "json"])
        XCTAssertEqual((jsonObject(byTime.out)["users"] as? [String: [String: Any]])?["0"]?["biometric_failures"] as? Int, 1)
        let table = try ctl(["replay", "-D", daemon.stateDirectory])
        XCTAssertTrue(table.out.contains("BIO-FAILURES"), table.out)
        XCTAssertEqual(try ctl(["replay", "-D", daemon.stateDirectory, "--until-seq", "99999"]).code, 1)
        XCTAssertEqual(try ctl(["replay", "-D", daemon.stateDirectory, "--until-seq", "1", "--until", time]).code, 2)
    }
}

final class CorruptionTests: XCTestCase {
    /// A stopped daemon's state directory with several segments (SegmentSize=4K).
    func makeLog() throws -> DaemonProcess {
        let daemon = try DaemonProcess(configuration: "[Biometry]\nType=touchID\n[Log]\nSegmentSize=4K\n", options: .forClients)
        let admin = try Admin(daemon.socketPath)
        try admin.ok("set-passcode secret=1234")
        for i in 0..<40 {
            try admin.ok("enroll uid=\(1000 + i % 4) template=t\(i)")
            let ctx = try admin.ok("new")["ctx"]!
            try admin.request("can-evaluate ctx=\(ctx) policy=biometrics")
            try admin.ok("invalidate ctx=\(ctx)")
        }
        XCTAssertEqual(daemon.stop(), 0)
        return daemon
    }

    func segments(_ daemon: DaemonProcess) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/log").filter { $0.hasSuffix(".seg") }.sorted()
    }

    /// A fresh copy of the state directory to break.
    func copy(_ daemon: DaemonProcess, _ name: String) throws -> String {
        let target = daemon.directory.path + "/" + name
        try? FileManager.default.removeItem(atPath: target)
        try FileManager.default.copyItem(atPath: daemon.stateDirectory, toPath: target)
        return target
    }

    func testVerifyPassesOnACleanLogAndFailsOnEachCorruption() throws {
        let daemon = try makeLog()
        let names = try segments(daemon)
        XCTAssertGreaterThanOrEqual(names.count, 3, "several segments")
        let clean = try ctl(["verify", "-D", daemon.stateDirectory])
        XCTAssertEqual(clean.code, 0, clean.err)
        XCTAssertTrue(clean.out.hasPrefix("OK: "), clean.out)
        XCTAssertTrue(clean.out.contains("in \(names.count) segments"), clean.out)

        let middle = names[names.count / 2]
        let cases: [(String, (String) throws -> Void)] = [
            ("flip a byte mid-log", { dir in
                let path = dir + "/log/" + middle
                var data = try Data(contentsOf: URL(fileURLWithPath: path))
                data[data.count / 2] ^= 0x40
                try data.write(to: URL(fileURLWithPath: path))
            }),
            ("cut a middle segment", { dir in try FileManager.default.removeItem(atPath: dir + "/log/" + middle) }),
            ("truncate a middle segment", { dir in
                let path = dir + "/log/" + middle
                let data = try Data(contentsOf: URL(fileURLWithPath: path))
                try data.prefix(data.count - 10).write(to: URL(fileURLWithPath: path))
            }),
            ("flip a byte in the first segment's header", { dir in
                let path = dir + "/log/" + names[0]
                var data = try Data(contentsOf: URL(fileURLWithPath: path))
                data[20] ^= 0x01
                try data.write(to: URL(fileURLWithPath: path))
            }),
            ("swap two segments' contents", { dir in
                let a = dir + "/log/" + names[0], b = dir + "/log/" + names[1]
                let da = try Data(contentsOf: URL(fileURLWithPath: a)), db = try Data(contentsOf: URL(fileURLWithPath: b))
                try db.write(to: URL(fileURLWithPath: a))
                try da.write(to: URL(fileURLWithPath: b))
            }),
        ]
        for (index, (name, breakIt)) in cases.enumerated() {
            let dir = try copy(daemon, "case\(index)")
            try breakIt(dir)
            let result = try ctl(["verify", "-D", dir])
            XCTAssertEqual(result.code, 1, "\(name): \(result.out)\(result.err)")
            XCTAssertTrue(result.out.hasPrefix("FAILED: first bad record: segment "), "\(name): \(result.out)")
            XCTAssertTrue(result.err.contains("localauthctl repair"), "says what to do: \(result.err)")
            let log = try ctl(["log", "-D", dir, "--no-pager"])
            XCTAssertEqual(log.code, 1, "\(name): log stops at the corruption with status 1")
        }

        // repair keeps a copy, cuts, appends log-repaired; verify then passes.
        let dir = try copy(daemon, "repair")
        let path = dir + "/log/" + middle
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        data[data.count / 2] ^= 0x40
        try data.write(to: URL(fileURLWithPath: path))
        let repaired = try ctl(["repair", "-D", dir, "--socket", daemon.directory.path + "/no-daemon"])
        XCTAssertEqual(repaired.code, 0, repaired.out + repaired.err)
        XCTAssertEqual(try ctl(["verify", "-D", dir]).code, 0)
        let last = try ctl(["log", "-D", dir, "-o", "json", "--no-pager"]).lines.last.map { jsonObject($0) } ?? [:]
        XCTAssertEqual(last["type"] as? String, "log-repaired")
        XCTAssertNotNil(last["first_lost_seq"] as? Int)
        XCTAssertEqual(last["by"] as? Int, 0)
        let state = jsonObject(try ctl(["replay", "-D", dir, "-o", "json"]).out)
        for (uid, user) in state["users"] as? [String: [String: Any]] ?? [:] {
            XCTAssertEqual(user["biometry_locked_out"] as? Bool, true, "S-41: uid \(uid) locked out of biometry")
        }
    }
}
