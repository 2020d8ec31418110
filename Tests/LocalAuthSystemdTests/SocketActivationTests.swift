// Socket activation without systemd: systemd-socket-activate binds the
// socket, passes it as fd 3 with LISTEN_FDS/LISTEN_PID/LISTEN_FDNAMES, and
// execs the daemon, which must serve on it and never bind its own.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class SocketActivationTests: XCTestCase {
    func testServesThePassedSocketWithoutBinding() throws {
        guard let activate = Paths.tool("systemd-socket-activate") else {
            throw XCTSkip("systemd-socket-activate is not installed")
        }
        let scratch = TemporaryDirectory()
        let notify = try NotifyReceiver(path: scratch.path + "/notify")
        let passed = scratch.path + "/passed.sock"
        let configured = scratch.path + "/configured.sock"
        let config = try scratch.write("localauthd.conf", "[Biometry]\nType=touchID\n")
        let output = scratch.path + "/output"
        let pid = try spawn(activate, [
            "-l", passed, "--fdname=localauthd.socket", "-E", "NOTIFY_SOCKET=\(notify.path)",
            try Binary.localauthd(), "--config", config, "--socket", configured, "--state-dir", scratch.path + "/state",
        ], stdoutPath: output, stderrPath: output, appendOutput: true)
        var exitCode: Int32?
        defer {
            if exitCode == nil {
                kill(pid, SIGKILL)
                _ = waitForExit(pid, timeout: 20)
            }
        }
        // systemd-socket-activate execs the daemon on the first connection;
        // the socket exists (and queues) before that.
        let client = try connectWhenBound(passed, pid: pid, output: output)
        XCTAssertTrue(try client.requestLine("h1 hello").hasPrefix("h1 OK protocol=1"))
        let ready = try XCTUnwrap(notify.waitFor("READY=1") { $0 == "READY=1" })
        XCTAssertTrue(ready.contains("MAINPID=\(pid)"), "exec keeps the pid: \(ready)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: configured),
                       "the daemon bound its own socket although one was passed")

        // A second connection on the same passed socket.
        let second = try Client(socketPath: passed)
        XCTAssertEqual(try second.requestLine("p1 ping"), "p1 OK")

        kill(pid, SIGTERM)
        notify.waitFor("STOPPING=1") { $0 == "STOPPING=1" }
        exitCode = waitForExit(pid, timeout: 20)
        XCTAssertEqual(exitCode, 0, readText(output))
        let text = readText(output)
        XCTAssertFalse(text.contains("LISTEN"), text)
        XCTAssertTrue(text.contains("listening on \(passed) (from systemd)"), "names the socket it serves: \(text)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: passed), "systemd's socket file is not the daemon's to remove")
    }
}

/// A client of `path` once it accepts (safety net 20 s); fails if `pid` exited first.
private func connectWhenBound(_ path: String, pid: pid_t, output: String) throws -> Client {
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline {
        if let client = try? Client(socketPath: path) { return client }
        if let code = waitForExit(pid, timeout: 0) {
            throw HarnessError("exited with \(code); output:\n\(readText(output))")
        }
        // Nothing to wait on: the socket appears when systemd-socket-activate binds it.
        usleep(10_000)
    }
    throw HarnessError("\(path) never accepted a connection")
}
