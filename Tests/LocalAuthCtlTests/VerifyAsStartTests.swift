// Issue 27 item 11: `localauthctl verify` said OK on an emptied `log/` next
// to a passcode store that holds passcodes, a directory the daemon refuses
// to start on (S-49). verify now applies the daemon's own judgement
// (LocalAuthLog's RollbackEvidence), with or without --journal.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class VerifyAsStartTests: XCTestCase {
    func test_item11_verifyFailsWhereTheDaemonRefusesAnEmptiedLog() throws {
        let daemon = try DaemonProcess(options: .forClients)
        let admin = try Admin(daemon.socketPath)
        try admin.ok("set-passcode secret=1234 uid=1000")
        XCTAssertEqual(daemon.stop(), 0, daemon.stderr)
        let state = daemon.stateDirectory
        let before = try ctl(["verify", "-D", state])
        XCTAssertEqual(before.code, 0, before.out + before.err)
        // The attack: the log emptied, the passcode store left.
        for name in try FileManager.default.contentsOfDirectory(atPath: state + "/log") {
            try FileManager.default.removeItem(atPath: state + "/log/" + name)
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: state + "/snapshots") {
            try FileManager.default.removeItem(atPath: state + "/snapshots/" + name)
        }
        for arguments in [["verify", "-D", state], ["verify", "-D", state, "--journal"]] {
            let result = try ctl(arguments)
            XCTAssertEqual(result.code, 1, "\(arguments): \(result.out)\(result.err)")
            XCTAssertTrue(result.out.contains("FAILED: the event log is empty but the passcode store holds 1 passcode"), result.out)
            XCTAssertTrue(result.err.contains("--accept-log-rollback"), result.err)
        }
        // The daemon refuses the same directory, with the same words.
        let refused = daemon.startExpectingFailure()
        XCTAssertNotNil(refused.code, "the daemon refuses to start")
        XCTAssertTrue(daemon.stderr.contains("the event log is empty but the passcode store holds 1 passcode"), daemon.stderr)
    }
}
