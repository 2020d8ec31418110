// S-83 (issue 34 item 2): a socket-activated daemon with nothing to do
// exits with status 0 after ExitOnIdleSec=, having said STOPPING=1 and
// anchored its head; the socket's next client starts it again, and what the
// log holds (a lockout, a passcode delay) holds across the gap. The test
// plays systemd: it owns the listening socket for the whole test and hands
// it to each daemon it starts as fd 3 (LISTEN_FDS=1, LISTEN_PID of the
// daemon), so a client that connects while no daemon runs waits in its
// backlog. Nothing is timed: the daemon's exit and notifications are
// waited for, and "not yet exited" is judged over watchdog pings.
import Foundation
import Glibc
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class IdleExitTests: XCTestCase {
    /// Biometry locked out after two misses, a passcode delay after one
    /// wrong passcode (an hour: it cannot end during the test), exit after 1 s idle.
    private static let configuration = """
        [Daemon]
        ExitOnIdleSec=1
        [Biometry]
        Type=touchID
        LockoutThreshold=2
        AttemptsPerEvaluation=3
        [Passcode]
        DelayAfterFailures=1
        BackoffSec=3600
        [DBus]
        Serve=no

        """

    func test_S83_anIdleSocketActivatedDaemonExitsCleanly_theNextClientStartsIt_stateHolds() throws {
        let scratch = TemporaryDirectory()
        let socketPath = scratch.path + "/socket"
        let listener = try UnixSocket.listen(path: socketPath)
        defer { try? listener.close() }
        let config = try scratch.write("localauthd.conf", Self.configuration)
        let anchors = scratch.path + "/anchors"
        let notify = try NotifyReceiver(path: scratch.path + "/notify")
        var first = try ActivatedDaemon(listener: listener, config: config, scratch: scratch, notify: notify, anchors: anchors)
        defer { first.kill() }

        // Given a daemon started by its socket, serving a client that
        // leaves uid 0 locked out of biometry and in a passcode delay,
        let client = try Client(socketPath: socketPath)
        notify.waitFor("READY=1") { $0 == "READY=1" }
        XCTAssertTrue(try client.requestLine("s1 set-passcode secret=4321").hasPrefix("s1 OK"))
        XCTAssertTrue(try client.requestLine("e1 enroll uid=0").hasPrefix("e1 OK"))
        let ctx = try contextID(client.requestLine("c1 new"))
        XCTAssertTrue(try client.requestLine("v1 evaluate ctx=\(ctx) policy=owner reason=test").hasPrefix("v1 PROMPT"))
        XCTAssertTrue(try client.requestLine("n1 sensor uid=0 result=nomatch").hasPrefix("n1 OK"))
        XCTAssertTrue(try client.requestLine("n2 sensor uid=0 result=nomatch").hasPrefix("n2 OK"))
        let wrong = try client.requestLine("p1 passcode ctx=\(ctx) secret=0000")
        XCTAssertTrue(wrong.hasPrefix("p1 "), wrong)
        // (the check's verdict, once the worker answered: the evaluation
        // ends, the misses' prompts before it)
        var final = try client.nextLine(tag: "v1")
        while final.hasPrefix("v1 PROMPT") { final = try client.nextLine(tag: "v1") }
        XCTAssertTrue(final.hasPrefix("v1 ERR") && final.contains("retry-after="), final)
        let before = try Status(client.requestLine("u1 status uid=0"))
        XCTAssertEqual(before["locked-out"], "true", before.line)
        XCTAssertEqual(before["passcode-failures"], "1", before.line)
        XCTAssertGreaterThan(Int(before["retry-after"] ?? "") ?? 0, 0, before.line)

        // when the client stays connected over several pings (2 s, twice
        // ExitOnIdleSec=), the daemon keeps serving it;
        for ping in 1...4 { notify.waitFor("WATCHDOG=1 #\(ping)") { $0 == "WATCHDOG=1" } }
        XCTAssertNil(waitForExit(first.pid, timeout: 0), "exited with a client connected: \(first.output)")
        XCTAssertEqual(try client.requestLine("p2 ping"), "p2 OK")

        // when it leaves, the daemon exits on its own with status 0, after
        // STOPPING=1, with its head anchored at the stop;
        client.shutDown()
        let code = first.awaitExit()
        XCTAssertEqual(code, 0, first.output)
        notify.waitFor("STOPPING=1") { $0.hasPrefix("STOPPING=1") }
        XCTAssertTrue(first.output.contains("Nothing to do for 1 s (ExitOnIdleSec=): exiting"), first.output)
        let anchored = (try? String(contentsOfFile: anchors, encoding: .utf8)) ?? ""
        XCTAssertTrue(anchored.split(separator: "\n").last?.hasSuffix("\tstop") ?? false, anchored)

        // and a client that connects while none runs waits in the socket's
        // backlog; the daemon started for it answers, with the same state.
        let next = try Client(socketPath: socketPath)
        var second = try ActivatedDaemon(listener: listener, config: config, scratch: scratch, notify: notify, anchors: anchors)
        defer { second.kill() }
        let after = try Status(next.requestLine("u2 status uid=0"))
        XCTAssertEqual(after["locked-out"], "true", after.line)
        XCTAssertEqual(after["passcode-failures"], "1", after.line)
        XCTAssertEqual(after["biometric-failures"], before["biometric-failures"], after.line)
        let left = Int(after["retry-after"] ?? "") ?? 0
        XCTAssertTrue(left > 0 && left <= Int(before["retry-after"]!)!, "the delay holds across the gap: \(before.line) / \(after.line)")
        XCTAssertFalse(second.output.contains("Refusing"), second.output)
    }

    private func contextID(_ line: String) throws -> String {
        try XCTUnwrap(line.split(separator: " ").first { $0.hasPrefix("ctx=") }.map { String($0.dropFirst(4)) }, line)
    }
}

/// A `status` reply's fields.
private struct Status {
    let line: String
    let fields: [String: String]
    init(_ line: String) {
        self.line = line
        var fields: [String: String] = [:]
        for word in line.split(separator: " ") {
            guard let equals = word.firstIndex(of: "=") else { continue }
            fields[String(word[..<equals])] = String(word[word.index(after: equals)...])
        }
        self.fields = fields
    }
    subscript(_ key: String) -> String? { fields[key] }
}

/// localauthd on a socket the test owns, as systemd passes one: fd 3,
/// LISTEN_FDS=1, LISTEN_PID its own pid (a shell sets it, then execs).
private struct ActivatedDaemon {
    let pid: pid_t
    let outputPath: String
    private var exited = false

    init(listener: FileDescriptor, config: String, scratch: TemporaryDirectory, notify: NotifyReceiver,
         anchors: String) throws {
        outputPath = scratch.path + "/output"
        pid = try spawn("/bin/sh", [
            "-c", "exec 3<&0 0</dev/null; LISTEN_PID=$$ exec \"$@\"", "sh",
            try Binary.localauthd(), "--config", config, "--state-dir", scratch.path + "/state",
        ], stdinFD: listener.rawValue, stdoutPath: outputPath, stderrPath: outputPath, appendOutput: true,
           environment: ["LISTEN_FDS": "1", "LISTEN_FDNAMES": "localauthd.socket", "NOTIFY_SOCKET": notify.path,
                         "WATCHDOG_USEC": "1000000", "LOCALAUTHD_ANCHOR_FILE": anchors])
    }

    var output: String { readText(outputPath) }

    /// Its exit code (a safety net of 60 s, not a measure).
    mutating func awaitExit() -> Int32? {
        let code = waitForExit(pid, timeout: 60)
        exited = code != nil
        return code
    }

    mutating func kill() {
        guard !exited else { return }
        Glibc.kill(pid, SIGKILL)
        _ = waitForExit(pid, timeout: 20)
        exited = true
    }
}
