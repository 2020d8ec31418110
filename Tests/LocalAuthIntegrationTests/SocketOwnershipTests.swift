// The socket belongs to one daemon: a second one started on a live socket
// stops before it touches its state directory (it must never take the first
// one's clients to another state, other lockouts); a clean stop removes the
// socket file; a stale file left by a killed daemon is replaced.
import Foundation
import Glibc
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class SocketOwnershipTests: IntegrationTestCase {
    func testASecondDaemonOnALiveSocketRefusesAndTheFirstKeepsItsClients() throws {
        let first = try startDaemon()
        let client = try first.connect()
        XCTAssertOK(try client.request("p1 ping"))

        let other = TemporaryDirectory()
        let secondState = other.path + "/state"
        let (code, _, stderr) = try runToCompletion(
            first.binary, ["--config", first.configPath, "--socket", first.socketPath, "--state-dir", secondState],
            timeout: 30)
        XCTAssertNotEqual(code, 0, "the second daemon must not start")
        XCTAssertTrue(stderr.contains("\(first.socketPath) is in use"), stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: secondState), "it stopped before creating its state directory")

        // The first daemon still owns the socket: old and new clients reach it.
        XCTAssertOK(try client.request("p2 ping"))
        let late = try first.connect()
        XCTAssertOK(try late.request("p3 ping"))
    }

    func testACleanStopRemovesTheSocketFile() throws {
        let daemon = try startDaemon()
        XCTAssertTrue(FileManager.default.fileExists(atPath: daemon.socketPath))
        XCTAssertEqual(daemon.stop(), 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: daemon.socketPath), "removed at a clean exit")
    }

    func testAStaleSocketFileFromAKilledDaemonIsReplaced() throws {
        let daemon = try startDaemon()
        daemon.kill()
        var info = stat()
        XCTAssertEqual(lstat(daemon.socketPath, &info), 0, "SIGKILL leaves the file behind")
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFSOCK)
        try daemon.start()
        XCTAssertOK(try daemon.connect().request("p ping"))
    }

    func testANonSocketFileAtThePathIsNeverDeleted() throws {
        let daemon = try startDaemon()
        XCTAssertEqual(daemon.stop(), 0)
        try "not a socket".write(toFile: daemon.socketPath, atomically: false, encoding: .utf8)
        let (code, _) = daemon.startExpectingFailure()
        XCTAssertNotEqual(code, 0)
        XCTAssertTrue(daemon.stderr.contains(daemon.socketPath), daemon.stderr)
        XCTAssertEqual(try String(contentsOfFile: daemon.socketPath, encoding: .utf8), "not a socket")
    }
}
