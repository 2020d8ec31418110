// examples/ (issue 32 item 4) run against the daemon on a private system
// bus: the seed articles' three questions — can this device use biometrics
// and which kind, authenticate with a reason, has the enrolled set changed —
// answered by each example's own program, in Python (Gio), C (sd-bus) and
// JavaScript (GJS); and, as LAContext, each asks for the system's prompt, so
// a session's agent asks instead of the program (S-66). The three print the
// same lines, so one scenario checks them all.
import Foundation
import LocalAuthTestSupport
import XCTest

final class ExampleTests: BusTestCase {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples").path
    private var built: TemporaryDirectory?

    /// The example's command line: its script, or its program built here.
    private func example(_ language: String) throws -> String {
        switch language {
        case "python":
            _ = try client()  // skips without python3-gi
            return Self.examples + "/python/biometry-check"
        case "c":
            let directory = TemporaryDirectory(prefix: "localauth-example-")
            built = directory
            let make = try runToCompletion("/usr/bin/make", ["-s", "-C", Self.examples + "/c", "BUILD=" + directory.path])
            XCTAssertEqual(make.0, 0, "the C example builds warning-free (libsystemd-dev): \(make.1)\(make.2)")
            return directory.path + "/biometry-check"
        default:
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gjs") else {
                throw XCTSkip("gjs is not installed (scripts/install-deps installs it)")
            }
            return Self.examples + "/javascript/biometry-check.js"
        }
    }

    func test_python_theSeedHelpersThreeQuestionsAreAnswered() throws { try threeQuestions("python") }
    func test_python_authenticatesByTheSensorAndByThePasscode() throws { try authenticates("python") }
    func test_c_theSeedHelpersThreeQuestionsAreAnswered() throws { try threeQuestions("c") }
    func test_c_authenticatesByTheSensorAndByThePasscode() throws { try authenticates("c") }
    func test_javascript_theSeedHelpersThreeQuestionsAreAnswered() throws { try threeQuestions("javascript") }
    func test_javascript_authenticatesByTheSensorAndByThePasscode() throws { try authenticates("javascript") }

    func test_python_theSessionsAgentAsksAndTheProgramNeverSeesThePassword() throws { try agentAsks("python") }
    func test_c_theSessionsAgentAsksAndTheProgramNeverSeesThePassword() throws { try agentAsks("c") }
    func test_javascript_theSessionsAgentAsksAndTheProgramNeverSeesThePassword() throws { try agentAsks("javascript") }

    /// S-66: each example asks for the system's prompt, as LAContext does; in
    /// a session with an agent the agent is asked, and the program is told
    /// only that it asks, then the answer.
    private func agentAsks(_ language: String) throws {
        let mock = try LogindMock()
        try mock.addSession("c1", uid: 0, user: "root", pid: getpid())
        try startDaemon("[Biometry]\nLogindBus=\(mock.bus)\n")
        let program = try example(language)
        let admin = try admin()
        try admin.ok("set-passcode secret=1234")
        try admin.ok("enroll uid=0")
        let agent = try daemon.connect()
        XCTAssertEqual(try agent.request("a register-agent").status, .ok)
        // Held until its pid is in the agent's session (logind is asked at its evaluation).
        let app = try Client(running: "/bin/sh", ["-c", "read go; exec \"$0\" \"$@\"", program, "--authenticate", "open the notes"],
                             environment: bus.environment, stderrPath: bus.directory.path + "/example.err")
        try mock.mapPID(try XCTUnwrap(app.programPID), to: "c1")
        try app.send("go")
        XCTAssertEqual(try app.nextLine(), "Your session's dialog asks.", readText(bus.directory.path + "/example.err"))
        let prompt = try agent.next(tag: "a")
        XCTAssertEqual(prompt["kind"], "biometric-or-passcode")
        XCTAssertEqual(prompt["reason"], "open the notes")
        XCTAssertEqual(prompt["app-pid"], String(try XCTUnwrap(app.programPID)), "the program, as the bus names it")
        XCTAssertOK(try agent.request("p passcode request=\(try XCTUnwrap(prompt["request"])) secret=1234"))
        XCTAssertEqual(try app.nextLine(), "authenticated by passcode")
    }

    private func threeQuestions(_ language: String) throws {
        try startDaemon()
        let program = try example(language)
        let run = { (arguments: [String]) in try runToCompletion(program, arguments, environment: self.bus.environment) }
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
        let usage = try run(["--no-such-option"])
        XCTAssertEqual(usage.0, 2, "a wrong command line is status 2: \(usage.2)")
    }

    private func authenticates(_ language: String) throws {
        try startDaemon()
        let program = try example(language)
        let admin = try admin()
        try admin.ok("set-passcode secret=1234")
        try admin.ok("enroll uid=0")
        let start = { (reason: String) in
            try Client(running: program, ["--authenticate", reason], environment: self.bus.environment,
                       stderrPath: self.bus.directory.path + "/example.err")
        }
        // The sensor: the program says so, the administrator feeds a match.
        let byFinger = try start("open the notes")
        XCTAssertEqual(try byFinger.nextLine(), "Touch the sensor (attempt 1): open the notes", readText(bus.directory.path + "/example.err"))
        try admin.ok("sensor uid=0 result=match")
        XCTAssertEqual(try byFinger.nextLine(), "authenticated by biometric")
        // A miss, then the passcode typed at the program's prompt.
        let byPasscode = try start("open the notes")
        try missThrice(byPasscode, admin)
        try byPasscode.send("1234")
        XCTAssertEqual(try byPasscode.nextLine(), "authenticated by passcode")
        // A wrong passcode is a prompt again (S-28), then cancelled: an empty answer.
        let cancelled = try start("no")
        try missThrice(cancelled, admin)
        try cancelled.send("4321")
        var line = try cancelled.nextLine()
        while let text = line, !text.hasPrefix("Password for") { line = try cancelled.nextLine() }
        XCTAssertNotNil(line, "a wrong passcode is asked for again")
        try cancelled.send("")
        XCTAssertEqual(try cancelled.nextLine()?.hasPrefix("failed: userCancel (-2)"), true)
        // What the daemon recorded is the scenario's, whatever the language.
        let kinds = try events().compactMap { $0["type"] as? String }
        XCTAssertEqual(kinds.filter { $0 == "evaluation-succeeded" }.count, 2, "\(kinds)")
        XCTAssertEqual(kinds.filter { $0 == "passcode-rejected" }.count, 1, "\(kinds)")
        XCTAssertEqual(kinds.filter { $0 == "biometric-failed" }.count, 6, "\(kinds)")
    }

    /// Three misses, each fed once the program asked for the finger, until it asks for the password.
    private func missThrice(_ program: Client, _ admin: Admin) throws {
        for attempt in 1...3 {
            var line = try program.nextLine()
            while let text = line, !text.hasPrefix("Touch the sensor (attempt \(attempt))") { line = try program.nextLine() }
            XCTAssertNotNil(line, "attempt \(attempt) asks for the finger")
            try admin.ok("sensor uid=0 result=nomatch")
        }
        var line = try program.nextLine()
        while let text = line, !text.hasPrefix("Password for") { line = try program.nextLine() }
        XCTAssertNotNil(line, "the program asks for the password")
    }
}
