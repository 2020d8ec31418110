// Socket activation without systemd: systemd-socket-activate binds the
// socket, passes it as fd 3 with LISTEN_FDS/LISTEN_PID/LISTEN_FDNAMES, and
// execs the daemon, which must serve on it and never bind its own.
import Foundation
import Glibc
import XCTest

final class SocketActivationTests: XCTestCase {
    func testServesThePassedSocketWithoutBinding() throws {
        guard let activate = Paths.tool("systemd-socket-activate") else {
            throw XCTSkip("systemd-socket-activate is not installed")
        }
        let scratch = try Scratch()
        let notify = try NotifyReceiver(path: scratch.path + "/notify")
        let passed = scratch.path + "/passed.sock"
        let configured = scratch.path + "/configured.sock"
        let config = try scratch.write("localauthd.conf", "[Biometry]\nType=touchID\n")
        let output = scratch.path + "/output"
        let child = try Child(activate, [
            "-l", passed, "--fdname=localauthd.socket", "-E", "NOTIFY_SOCKET=\(notify.path)",
            try Paths.localauthd(), "--config", config, "--socket", configured, "--state-dir", scratch.path + "/state",
        ], environment: [:], stderrPath: output)
        // systemd-socket-activate execs the daemon on the first connection;
        // the socket exists (and queues) before that.
        try waitUntilConnectable(passed, child: child, stderrPath: output)
        let client = try LineClient(socketPath: passed)
        XCTAssertTrue(try client.request("h1 hello").hasPrefix("h1 OK protocol=1"))
        let ready = try XCTUnwrap(notify.waitFor("READY=1") { $0 == "READY=1" })
        XCTAssertTrue(ready.contains("MAINPID=\(child.pid)"), "exec keeps the pid: \(ready)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: configured),
                       "the daemon bound its own socket although one was passed")

        // A second connection on the same passed socket.
        let second = try LineClient(socketPath: passed)
        XCTAssertEqual(try second.request("p1 ping"), "p1 OK")

        child.signal(SIGTERM)
        notify.waitFor("STOPPING=1") { $0 == "STOPPING=1" }
        XCTAssertEqual(child.wait(), 0, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        XCTAssertFalse(text.contains("LISTEN"), text)
        XCTAssertTrue(text.contains("listening on \(passed) (from systemd)"), "names the socket it serves: \(text)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: passed), "systemd's socket file is not the daemon's to remove")
    }
}
