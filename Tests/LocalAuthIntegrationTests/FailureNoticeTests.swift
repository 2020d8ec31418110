// S-64 over the socket: the failures since the last sign-in on the success
// reply that asked for them, in status, and the same in replay.
import Foundation
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

final class FailureNoticeTests: IntegrationTestCase {
    func test_S64_theSuccessCarriesTheFailuresSinceThePreviousSignIn_statusAndReplayAgree() throws {
        // An on-behalf context on the simulated sensor: the test-only switch (S-52).
        let daemon = try startDaemon(configuration: DaemonProcess.onBehalfTestConfiguration)
        let client = try daemon.connect()
        try prepareOwner(client)
        let ctx = try newContext(client)
        try client.send("e1 evaluate ctx=\(ctx) policy=owner reason=x notice=failures")
        XCTAssertEqual(try client.next(tag: "e1").status, .prompt)
        try sensor(client, "nomatch")
        _ = try client.next(tag: "e1")
        try sensor(client, "nomatch")
        _ = try client.next(tag: "e1")
        XCTAssertOK(try client.request("f fallback ctx=\(ctx)"))
        _ = try client.next(tag: "e1")
        XCTAssertOK(try client.request("p passcode ctx=\(ctx) secret=9999"))
        _ = try client.next(tag: "e1")
        let pending = try client.request("s status")
        XCTAssertEqual(pending["failed-attempts"], "3", "\(pending)")
        XCTAssertEqual(pending["failed-biometric"], "2")
        XCTAssertEqual(pending["failed-passcode"], "1")
        XCTAssertNotNil(pending["last-failed-at"])
        XCTAssertOK(try client.request("p passcode ctx=\(ctx) secret=1234"))
        let done = try client.next(tag: "e1")
        XCTAssertEqual(done["method"], "passcode")
        XCTAssertEqual(done["failed-attempts"], "3", "\(done)")
        XCTAssertEqual(done["failed-biometric"], "2")
        XCTAssertEqual(done["failed-passcode"], "1")
        XCTAssertEqual(done["refused-passcode"], "0")
        XCTAssertEqual(done["last-failed-at"], pending["last-failed-at"])
        XCTAssertEqual(try client.request("s status")["failed-attempts"], "0", "a new tally")
        // A caller that did not ask sees none of it (v1's reply).
        let other = try newContext(client)
        try client.send("e2 evaluate ctx=\(other) policy=biometrics reason=x")
        _ = try client.next(tag: "e2")
        try sensor(client, "nomatch")
        _ = try client.next(tag: "e2")
        try sensor(client, "match")
        let plain = try client.next(tag: "e2")
        XCTAssertEqual(plain["method"], "biometric")
        XCTAssertNil(plain["failed-attempts"], "\(plain)")
        // One failure after that sign-in, from an on-behalf context: status and replay agree.
        let sudo = try client.request("n new uid=0 service=sudo tty=/dev/pts/2")
        let onBehalf = try XCTUnwrap(sudo["ctx"])
        try client.send("e3 evaluate ctx=\(onBehalf) policy=biometrics reason=x")
        _ = try client.next(tag: "e3")
        try sensor(client, "nomatch")
        _ = try client.next(tag: "e3")
        let status = try client.request("s status")
        XCTAssertEqual(status["failed-attempts"], "1")
        XCTAssertEqual(status["last-failed-service"], "sudo")
        XCTAssertEqual(status["last-failed-tty"], "/dev/pts/2")
        let (code, out, err) = try runToCompletion(try Binary.find("localauthctl"),
                                                   ["replay", "-D", daemon.stateDirectory, "-o", "json"])
        XCTAssertEqual(code, 0, err)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
        let user = try XCTUnwrap((json["users"] as? [String: Any])?["0"] as? [String: Any])
        let tally = try XCTUnwrap(user["failures_since_sign_in"] as? [String: Any])
        XCTAssertEqual(tally["biometric"] as? Int, 1)
        XCTAssertEqual(tally["passcode"] as? Int, 0)
        XCTAssertEqual(tally["last_service"] as? String, "sudo")
        XCTAssertEqual(tally["last_tty"] as? String, "/dev/pts/2")
        XCTAssertNotNil(user["last_sign_in"] as? String, "replay: \(user)")
    }
}
