// Every live verb of localauthctl as a whole command line against a real
// daemon, its output compared field by field with what the daemon says over
// the raw protocol; exit codes 0 (done), 1 (LA failure), 2 (usage), 3
// (refused), 4 (unreachable).
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

class CtlTestCase: XCTestCase {
    var daemon: DaemonProcess!
    var admin: Admin!
    var socket: [String] { ["--socket", daemon.socketPath] }

    override func setUpWithError() throws {
        daemon = try DaemonProcess(options: .forClients)
        admin = try Admin(daemon.socketPath)
    }

    override func tearDown() {
        admin = nil
        if let daemon, daemon.isRunning { XCTAssertEqual(daemon.stop(), 0, daemon.stderr) }
        daemon = nil
        super.tearDown()
    }

    /// Feeds one sensor reading once uid 0 has a biometric prompt waiting
    /// (`bad-state` until then: the evaluation is still starting).
    func feedSensor(_ result: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let fed = try waitUntil {
            let reply = try admin.request("sensor uid=0 result=\(result)")
            if reply["status"] == "OK" { return true }
            XCTAssertEqual(reply["name"], "bad-state", "\(reply)", file: file, line: line)
            return false
        }
        XCTAssertTrue(fed, "no biometric prompt came (safety net)", file: file, line: line)
    }

    /// One biometric evaluation of uid 0 over the raw protocol, fed `readings`; returns the final reply.
    @discardableResult
    func evaluate(policy: String, readings: [String], passcodes: [String] = []) throws -> [String: String] {
        let client = try Admin(daemon.socketPath)
        let ctx = try client.ok("new")["ctx"]!
        let tag = client.send("evaluate ctx=\(ctx) policy=\(policy) reason=test")
        for reading in readings { try feedSensor(reading) }
        for passcode in passcodes {
            try waitUntil { try client.request("passcode ctx=\(ctx) secret=\(passcode)")["status"] == "OK" }
        }
        return try client.final(tag)
    }
}

final class LiveVerbTests: CtlTestCase {
    func testPasscodeEnrollStatusAndCanEvaluate() throws {
        var result = try ctl(["can-evaluate"] + socket)
        XCTAssertEqual(result.code, 1)
        XCTAssertEqual(result.out, "No: Passcode not set. (passcodeNotSet, code -5; biometry touchID).\n")

        result = try ctl(["passcode", "set", "--secret-stdin"] + socket, input: "1234\n")
        XCTAssertEqual(result.code, 0, result.err)
        XCTAssertEqual(result.out, "Passcode set for uid 0.\n")
        // Changing it needs the current one (line 2), checked as an attempt (S-36).
        result = try ctl(["passcode", "set", "--secret-stdin"] + socket, input: "5678\n0000\n")
        XCTAssertEqual(result.code, 1)
        XCTAssertEqual(try admin.ok("status")["passcode-failures"], "1")
        result = try ctl(["set-passcode", "--secret-stdin"] + socket, input: "1234\n1234\n")
        XCTAssertEqual(result.code, 0, "the old spelling still works: \(result.err)")

        result = try ctl(["can-evaluate", "--policy", "biometrics", "-o", "json"] + socket)
        XCTAssertEqual(result.code, 1)
        let notEnrolled = jsonObject(result.out)
        XCTAssertEqual(notEnrolled["result"] as? String, "biometryNotEnrolled")
        XCTAssertEqual(notEnrolled["code"] as? Int, -7)
        XCTAssertEqual(notEnrolled["biometry"] as? String, "touchID")
        XCTAssertEqual(notEnrolled["policy"] as? String, "biometrics", "the policy's name, not its number")

        result = try ctl(["enroll", "--uid", "0", "--template", "right-index", "-o", "json"] + socket)
        XCTAssertEqual(result.code, 0, result.err)
        let enrolled = jsonObject(result.out)
        XCTAssertEqual(enrolled["uid"] as? Int, 0)
        XCTAssertEqual(enrolled["templates"] as? Int, 1)
        let token = enrolled["domain_state"] as? String
        XCTAssertEqual(token?.count, 32)
        result = try ctl(["enroll", "--uid", "0", "--template", "left-index"] + socket)
        XCTAssertTrue(result.out.hasPrefix("Enrolled: uid 0 has 2 template(s); domain state "), result.out)

        result = try ctl(["can-evaluate", "--policy", "biometrics", "-o", "json"] + socket)
        XCTAssertEqual(result.code, 0)
        let ok = jsonObject(result.out)
        XCTAssertEqual(ok["result"] as? String, "ok")
        let raw = try Admin(daemon.socketPath)
        let ctx = try raw.ok("new")["ctx"]!
        XCTAssertEqual(ok["domain_state"] as? String, try raw.ok("can-evaluate ctx=\(ctx) policy=biometrics")["domain-state"])

        // status: every field as the daemon's own `status` reply.
        result = try ctl(["status", "-o", "json"] + socket)
        XCTAssertEqual(result.code, 0, result.err)
        let status = jsonObject(result.out)
        let wire = try admin.ok("status uid=0")
        let names = ["uid": "uid", "biometry": "biometry", "enrolled": "templates", "passcode-set": "passcode_set",
                     "biometric-failures": "biometric_failures", "locked-out": "biometry_locked_out",
                     "passcode-failures": "passcode_failures", "retry-after": "retry_after",
                     "admin-locked": "admin_locked", "contexts": "contexts",
                     "backend": "backend", "reader": "reader", "reader-present": "reader_present",
                     "sensor-inaccessible": "sensor_inaccessible", "failed-attempts": "failed_attempts",
                     "failed-biometric": "failed_biometric", "failed-passcode": "failed_passcode",
                     "refused-passcode": "refused_passcode", "last-failed-at": "last_failed_at",
                     "last-failed-service": "last_failed_service", "last-failed-tty": "last_failed_tty",
                     "last-failed-rhost": "last_failed_rhost"]
        for (key, value) in wire where key != "status" {
            guard let json = names[key] else { XCTFail("status has an unmapped field \(key)"); continue }
            XCTAssertEqual(status[json].map { "\($0)" }, Self.jsonText(value), "status field \(key)")
        }
        XCTAssertEqual(Set(status.keys), Set(wire.map(\.key).filter { $0 != "status" }.compactMap { names[$0] }))
        result = try ctl(["status"] + socket)
        XCTAssertTrue(result.lines.contains("        Passcode set: true"), result.out)
        XCTAssertTrue(result.lines.contains("  Enrolled templates: 2"), result.out)

        result = try ctl(["unenroll", "--uid", "0", "--template", "left-index"] + socket)
        XCTAssertEqual(result.out, "Unenrolled: uid 0 has 1 template(s) left.\n")
        result = try ctl(["passcode", "clear", "--uid", "0", "-o", "json"] + socket)
        XCTAssertEqual(result.code, 0, result.err)
        XCTAssertEqual(jsonObject(result.out)["uid"] as? Int, 0)
        XCTAssertEqual(try admin.ok("status")["passcode-set"], "false")
    }

    /// `true` -> "1"-style text of what JSONSerialization gives back.
    static func jsonText(_ wire: String) -> String {
        switch wire {
        case "true": return "1"
        case "false": return "0"
        default: return wire
        }
    }

    func testEvaluateSensorUnlockedAndReset() throws {
        try admin.ok("set-passcode secret=1234")
        try admin.ok("enroll uid=0")
        // A sensor reading with no prompt waiting is the daemon refusing: exit 3.
        var result = try ctl(["sensor", "--uid", "0", "match"] + socket)
        XCTAssertEqual(result.code, 3)
        XCTAssertTrue(result.err.hasPrefix("localauthctl: "), result.err)
        XCTAssertEqual(result.err.split(separator: "\n").count, 1, "one line: \(result.err)")

        // evaluate: the whole command line, with the sensor fed from here.
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("ctl-eval-\(getpid())").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ctlBinary())
        process.arguments = ["evaluate", "--policy", "biometrics", "--reason", "unlock your notes"] + socket
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardOutput = handle
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try feedSensor("nomatch")
        result = try ctl(["sensor", "--uid", "0", "match"] + socket)
        try waitUntil {
            if result.code == 0 { return true }
            result = try ctl(["sensor", "--uid", "0", "match"] + socket)
            return result.code == 0
        }
        XCTAssertEqual(result.out, "Sensor reading 'match' delivered for uid 0.\n")
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), "Authenticated (biometric)\n")
        try? FileManager.default.removeItem(atPath: out)
        XCTAssertEqual(try admin.ok("status")["biometric-failures"], "0", "S-3: the match reset the count")

        result = try ctl(["unlocked", "--uid", "0", "-o", "json"] + socket)
        XCTAssertEqual(result.code, 0, result.err)
        XCTAssertEqual(result.out, "{\"uid\":0}\n")

        try evaluate(policy: "biometrics", readings: ["nomatch", "nomatch", "nomatch"])
        try evaluate(policy: "biometrics", readings: ["nomatch", "nomatch"])
        XCTAssertEqual(try admin.ok("status")["locked-out"], "true")
        result = try ctl(["can-evaluate", "--policy", "biometrics"] + socket)
        XCTAssertEqual(result.code, 1)
        XCTAssertTrue(result.out.contains("(biometryLockout, code -8;"), result.out)
        result = try ctl(["reset", "--uid", "0"] + socket)
        XCTAssertEqual(result.out, "Reset uid 0.\n")
        XCTAssertEqual(try admin.ok("status")["locked-out"], "false")
        XCTAssertEqual(try ctl(["can-evaluate", "--policy", "biometrics"] + socket).code, 0)

        // An evaluation that needs a passcode, without a terminal, ends at once
        // with notInteractive (exit 1), exactly as the library does for apps.
        try admin.ok("unenroll uid=0")
        result = try ctl(["evaluate", "--policy", "owner"] + socket)
        XCTAssertEqual(result.code, 1)
        XCTAssertTrue(result.err.contains("notInteractive, code -1004"), result.err)
        XCTAssertEqual(result.err.split(separator: "\n").count, 1, "one line: \(result.err)")
    }

    /// `evaluate` on a real terminal (util-linux `script` gives it a pty as its
    /// controlling terminal): the passcode prompt is answered through the
    /// library's terminal handler, a wrong passcode prompts again.
    func testEvaluateReadsThePasscodeFromTheTerminal() throws {
        guard access("/usr/bin/script", X_OK) == 0 else { throw XCTSkip("util-linux script is not installed") }
        _ = try admin.ok("set-passcode secret=2468")
        let command = "\(try ctlBinary()) evaluate --policy owner --reason 'unlock your notes' --socket \(daemon.socketPath)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Typed ahead: the terminal keeps it until the handler reads (nothing
        // is flushed when echo is turned off), one line per passcode prompt.
        input.fileHandleForWriting.write(Data("1357\n2468\n".utf8))
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try? input.fileHandleForWriting.close()
        XCTAssertEqual(process.terminationStatus, 0, text)
        XCTAssertTrue(text.contains("Passcode (6 attempts left"), text)
        XCTAssertTrue(text.contains("Wrong passcode."), text)
        XCTAssertTrue(text.contains("Authenticated (passcode)"), text)
        let status = try admin.ok("status")
        XCTAssertEqual(status["passcode-failures"], "0", "the right passcode reset the count (S-4)")
    }

    func testUsageErrorsExitTwoAndUnreachableDaemonExitsFour() throws {
        for arguments in [["status", "--bogus"], ["passcode"], ["passcode", "frob"], ["sensor", "--uid", "0"],
                          ["enroll"], ["can-evaluate", "--policy", "nonsense"], ["nonsense"], [],
                          ["passcode", "clear", "--uid", "0", "--secret-stdin"], ["status", "-o", "yaml"]] {
            let result = try ctl(arguments + socket)
            XCTAssertEqual(result.code, 2, "\(arguments): \(result.err)")
            XCTAssertTrue(result.err.contains("--help"), "says what to do: \(result.err)")
        }
        for verb in ["status", "can-evaluate", "enroll --uid 0", "reset --uid 0"] {
            let result = try ctl(verb.split(separator: " ").map(String.init) + ["--socket", "/nonexistent/socket"])
            XCTAssertEqual(result.code, 4, "\(verb)")
            XCTAssertTrue(result.err.contains("/nonexistent/socket"), result.err)
            XCTAssertEqual(result.err.split(separator: "\n").count, 1, "one line: \(result.err)")
        }
    }

    func testHelpListsOnlyWorkingVerbsAndEveryVerbHasHelp() throws {
        let help = try ctl(["--help"])
        XCTAssertEqual(help.code, 0)
        let verbs = help.lines.filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }.compactMap { $0.split(separator: " ").first.map(String.init) }
        XCTAssertEqual(Set(verbs), ["status", "can-evaluate", "evaluate", "passcode", "set-passcode", "clear-passcode",
                                    "enroll", "unenroll", "sensor", "unlocked", "reset", "right", "keyring", "call", "agent",
                                    "log", "replay", "verify", "repair"])
        for verb in verbs {
            let result = try ctl([verb, "--help"])
            XCTAssertEqual(result.code, 0, verb)
            XCTAssertTrue(result.out.hasPrefix("Usage: localauthctl \(verb)"), result.out)
            XCTAssertTrue(result.out.contains("-h, --help"), result.out)
            // A listed verb is a working verb: it parses its options (an unknown one is exit 2, not "unknown command").
            let bogus = try ctl([verb, "--no-such-option"])
            XCTAssertEqual(bogus.code, 2, verb)
            XCTAssertTrue(bogus.err.hasPrefix("localauthctl \(verb): unknown option"), bogus.err)
        }
        XCTAssertTrue(try ctl(["passcode", "--help"]).out.contains("set|clear"))
    }
}
