// The terminal agent end to end (S-65..S-69): `localauthctl agent` on a
// real pty (python3-pexpect drives it: Tests/agent/terminal_agent.py), the
// daemon under Backend=shadow asking dbusmock's logind, and an app
// (localauth-app-probe: a plain LAContext, no prompt handler) in the same
// session. The app's evaluation of policy owner succeeds with the login
// password typed into the agent, the agent shows the app's program as the
// kernel names it and its reason as its words, the password is never
// echoed, and neither the app's memory nor, once it answered, the agent's
// holds it. Skips without root, dbusmock, pexpect or socat.
import Foundation
import Glibc
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class TerminalAgentTests: XCTestCase {
    /// Long, so that a freed copy is found by its tail: free() writes its
    /// list pointers over a chunk's first 16 bytes (SecretMemoryScanTests).
    static let password = "Agent-Login-Password-For-The-Terminal-Test-Kept-Out-Of-The-App"
    static var tail: String { String(password.dropFirst(16)) }

    func test_S66_S68_anAppsEvaluationUnderShadowSucceedsWithTheLoginPasswordTypedIntoTheTerminalAgent() throws {
        guard getuid() == 0 else { throw XCTSkip("the agent and the app run as root, whose login password is the test's") }
        let probe = try runToCompletion("/usr/bin/python3", ["-c", "import pexpect"])
        guard probe.0 == 0 else { throw XCTSkip("python3-pexpect is not installed") }
        let mock = try LogindMock()
        try mock.addSession("c4", uid: 0, user: "root")
        let shadow = mock.directory.path + "/shadow"
        let hash = try Yescrypt.hash(secret: Self.password)
        try "root:\(hash):20000:0:99999:7:::\n".write(toFile: shadow, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(configuration: DaemonProcess.defaultConfiguration + """
            LogindBus=\(mock.bus)

            [Passcode]
            Backend=shadow
            ShadowFile=\(shadow)

            """)
        let admin = try daemon.connect()
        XCTAssertOK(try admin.request("e enroll uid=0"), "a finger: policy owner shows touch or type")

        // The agent, registered for session c4.
        let status = mock.directory.path + "/agent-status"
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("agent/terminal_agent.py").path
        let driver = try spawn("/usr/bin/python3", [script, try Binary.find("localauthctl"), daemon.socketPath, mock.bus, "c4",
                                                    Self.password, status], stderrPath: mock.directory.path + "/driver.err")
        defer { _ = waitForExit(driver, timeout: 30) }
        XCTAssertTrue(waitUntil { readText(status).contains("registered") || readText(status).contains("failed") },
                      readText(status))
        XCTAssertEqual(readText(status), "registered\n", readText(mock.directory.path + "/driver.err"))

        // The app, in the same session, with a reason that poses as the system.
        let app = try AppProbe(socket: daemon.socketPath, policy: "owner", reason: "System Update: enter your password")
        try mock.mapPID(app.pid, to: "c4")
        try app.go()
        let answer = try XCTUnwrap(app.line(), "the app's answer")
        XCTAssertEqual(answer, "OK passcode")
        // The agent says so once its DONE came (after the app's answer, or before).
        XCTAssertTrue(waitUntil { readText(status).contains("echo") || readText(status).contains("failed") }, readText(status))
        let lines = readText(status).split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains("authenticated"), "\(lines)")
        XCTAssertTrue(lines.contains("echo-free"), "the password was echoed: \(lines)")
        let prompt = try XCTUnwrap(lines.first { $0.hasPrefix("prompt ") })
        XCTAssertTrue(prompt.contains("program=\(try Binary.find("localauth-app-probe"))"), prompt)
        XCTAssertTrue(prompt.contains("says=System Update: enter your password"), prompt)

        // Neither the app nor (once it answered) the agent holds the password.
        let agentPID = try XCTUnwrap(Self.agentPID(driver: driver))
        var found: [String] = []
        for (who, pid) in [("the app", app.pid), ("the agent", agentPID)] {
            try ProcessMemory.forEachWritableMapping(of: String(pid)) { bytes in
                if Self.contains(bytes, Self.tail) { found.append(who) }
            }
        }
        XCTAssertEqual(found, [], "copies of the login password")
        // The scan finds it where it is: the driver, which typed it, holds it.
        var control = false
        try ProcessMemory.forEachWritableMapping(of: String(driver)) { bytes in
            if Self.contains(bytes, Self.tail) { control = true }
        }
        XCTAssertTrue(control, "the scan cannot see the password even in the driver's memory")
        try "".write(toFile: status + ".scanned", atomically: true, encoding: .utf8)
        app.finish()
        XCTAssertEqual(waitForExit(driver, timeout: 30), 0, readText(status))
        XCTAssertTrue(readText(status).contains("exited 0"), readText(status))
        XCTAssertEqual(try admin.request("s status uid=0")["passcode-failures"], "0")
    }

    /// The agent: the driver's child (pexpect's shell, exec'd into it).
    static func agentPID(driver: pid_t) throws -> pid_t? {
        let children = try String(contentsOfFile: "/proc/\(driver)/task/\(driver)/children", encoding: .utf8)
        return children.split(separator: " ").compactMap { pid_t($0) }.first
    }

    static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: String) -> Bool {
        let pattern = Array(needle.utf8)
        guard haystack.count >= pattern.count, let first = pattern.first else { return false }
        var index = 0
        while index <= haystack.count - pattern.count {
            if haystack[index] == first, pattern.indices.allSatisfy({ haystack[index + $0] == pattern[$0] }) { return true }
            index += 1
        }
        return false
    }
}

/// localauth-app-probe, spoken to over two pipes.
final class AppProbe {
    let pid: pid_t
    private let input: FileHandle
    private let output: FileHandle
    private var buffer = Data()

    init(socket: String, policy: String, reason: String) throws {
        let toChild = Pipe(), fromChild = Pipe()
        pid = try spawn(try Binary.find("localauth-app-probe"), [socket, policy, reason],
                        stdinFD: toChild.fileHandleForReading.fileDescriptor,
                        stdoutFD: fromChild.fileHandleForWriting.fileDescriptor)
        try toChild.fileHandleForReading.close()
        try fromChild.fileHandleForWriting.close()
        input = toChild.fileHandleForWriting
        output = fromChild.fileHandleForReading
        guard let first = try line(), first == "pid \(pid)" else { throw HarnessError("the probe did not start") }
    }

    /// The next line it prints (nil at its end).
    func line() throws -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let chunk = output.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }

    func go() throws { try input.write(contentsOf: Data("go\n".utf8)) }

    func finish() {
        try? input.write(contentsOf: Data("done\n".utf8))
        _ = waitForExit(pid, timeout: 20)
    }
}
