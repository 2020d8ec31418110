// examples/python/ (issue 32 item 4) run against the daemon on a private
// system bus: the seed articles' three questions — can this device use
// biometrics and which kind, authenticate with a reason, has the enrolled
// set changed — answered by the example's own script.
import Foundation
import LocalAuthTestSupport
import XCTest

final class PythonExampleTests: BusTestCase {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples/python/biometry-check").path

    private func run(_ arguments: [String]) throws -> (Int32, String, String) {
        try runToCompletion(PythonExampleTests.script, arguments, environment: bus.environment)
    }

    func test_example_theSeedHelpersThreeQuestionsAreAnswered() throws {
        try startDaemon()
        _ = try client()  // skips without python3-gi
        let admin = try admin()
        XCTAssertEqual(try run([]).1, "biometry: touchID, passcodeNotSet\n")
        try admin.ok("set-passcode secret=1234")
        let notEnrolled = try run([])
        XCTAssertEqual(notEnrolled.0, 1)
        XCTAssertEqual(notEnrolled.1, "biometry: touchID, notEnrolled\n")
        try admin.ok("enroll uid=0")
        let available = try run([])
        XCTAssertEqual(available.0, 0, available.2)
        XCTAssertEqual(available.1, "biometry: touchID, available\n")

        let state = bus.directory.path + "/state"
        XCTAssertEqual(try run(["--save-state", state]).0, 0)
        XCTAssertEqual(try run(["--changed", state]).1, "the enrolled set is unchanged\n")
        try admin.ok("enroll uid=0 template=second")
        let changed = try run(["--changed", state])
        XCTAssertEqual(changed.0, 0)
        XCTAssertEqual(changed.1, "the enrolled set changed\n")
    }

    func test_example_authenticatesByTheSensorAndByThePasscode() throws {
        try startDaemon()
        _ = try client()
        let admin = try admin()
        try admin.ok("set-passcode secret=1234")
        try admin.ok("enroll uid=0")
        // The sensor: the script says so, the administrator feeds a match.
        let byFinger = try Client(running: PythonExampleTests.script, ["--authenticate", "open the notes"], environment: bus.environment,
                                  stderrPath: bus.directory.path + "/example.err")
        XCTAssertEqual(try byFinger.nextLine(), "Touch the sensor (attempt 1): open the notes")
        try admin.ok("sensor uid=0 result=match")
        XCTAssertEqual(try byFinger.nextLine(), "authenticated by biometric")
        // A miss, then the passcode typed at the script's prompt.
        let byPasscode = try Client(running: PythonExampleTests.script, ["--authenticate", "open the notes"],
                                    environment: bus.environment, stderrPath: bus.directory.path + "/example.err")
        try missThrice(byPasscode, admin)
        try byPasscode.send("1234")
        XCTAssertEqual(try byPasscode.nextLine(), "authenticated by passcode")
        // Cancelled: an empty answer.
        let cancelled = try Client(running: PythonExampleTests.script, ["--authenticate", "no"], environment: bus.environment,
                                   stderrPath: bus.directory.path + "/example.err")
        try missThrice(cancelled, admin)
        try cancelled.send("")
        XCTAssertEqual(try cancelled.nextLine()?.hasPrefix("failed: userCancel (-2)"), true)
    }

    /// Three misses, each fed once the script asked for the finger, until it asks for the password.
    private func missThrice(_ script: Client, _ admin: Admin) throws {
        for attempt in 1...3 {
            var line = try script.nextLine()
            while let text = line, !text.hasPrefix("Touch the sensor (attempt \(attempt))") { line = try script.nextLine() }
            try admin.ok("sensor uid=0 result=nomatch")
        }
        var line = try script.nextLine()
        while let text = line, !text.hasPrefix("Password for") { line = try script.nextLine() }
        XCTAssertNotNil(line, "the script asks for the password")
    }
}
