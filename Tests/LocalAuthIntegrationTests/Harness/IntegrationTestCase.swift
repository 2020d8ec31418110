// The base of every integration test: daemons started here are stopped in
// tearDown with SIGTERM, and every one of them must exit 0 (a clean stop is
// thereby checked after each scenario, whatever it did to the daemon).
import LocalAuthProtocol
import LocalAuthTestSupport
import XCTest

class IntegrationTestCase: XCTestCase {
    private var daemons: [DaemonProcess] = []
    private var tagCounter = 0

    /// A daemon on a fresh state directory, already listening.
    func startDaemon(configuration: String = DaemonProcess.defaultConfiguration,
                     extraArguments: [String] = []) throws -> DaemonProcess {
        let daemon = try DaemonProcess(configuration: configuration, options: .init(extraArguments: extraArguments))
        daemons.append(daemon)
        return daemon
    }

    /// A configuration with the touchID sensor and extra lines per section.
    func configuration(daemon: [String] = [], biometry: [String] = [], passcode: [String] = []) -> String {
        var text = "[Daemon]\n" + daemon.map { $0 + "\n" }.joined()
        text += "[Biometry]\nType=touchID\n" + biometry.map { $0 + "\n" }.joined()
        if !biometry.contains(where: { $0.hasPrefix("PromptTimeoutSec=") }) { text += "PromptTimeoutSec=60\n" }
        text += "[Passcode]\n" + passcode.map { $0 + "\n" }.joined()
        return text
    }

    override func tearDown() {
        for daemon in daemons where daemon.isRunning {
            daemon.stop()
        }
        daemons.removeAll()
        super.tearDown()
    }

    /// A fresh tag, unique within the test.
    func tag(_ prefix: String = "t") -> String {
        tagCounter += 1
        return "\(prefix)\(tagCounter)"
    }

    // MARK: - Common steps

    /// `new` -> the context id.
    func newContext(_ client: Client, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let reply = try client.request("\(tag("n")) new")
        XCTAssertOK(reply, file: file, line: line)
        guard let ctx = reply["ctx"] else { throw HarnessError("new without ctx: \(reply)") }
        XCTAssertTrue(isHexToken(ctx), "a context id is 128 random bits in hex: \(ctx)", file: file, line: line)
        return ctx
    }

    /// Sets uid 0's passcode and (optionally) enrolls one template, as the
    /// administrator the test process is. Returns the domain state.
    @discardableResult
    func prepareOwner(_ client: Client, passcode: String = "1234", enroll: Bool = true,
                      file: StaticString = #filePath, line: UInt = #line) throws -> String? {
        XCTAssertOK(try client.request("\(tag("p")) set-passcode secret=\(passcode)"), file: file, line: line)
        guard enroll else { return nil }
        let enrolled = try client.request("\(tag("en")) enroll uid=0")
        XCTAssertOK(enrolled, file: file, line: line)
        XCTAssertEqual(enrolled["templates"], "1", file: file, line: line)
        XCTAssertTrue(isHexToken(enrolled["domain-state"]), "\(enrolled)", file: file, line: line)
        return enrolled["domain-state"]
    }

    /// Sends `evaluate` and returns its first reply (normally a PROMPT).
    func evaluate(_ client: Client, ctx: String, policy: String, tag evalTag: String,
                  reason: String = "\"unlock your notes\"") throws -> Response {
        try client.send("\(evalTag) evaluate ctx=\(ctx) policy=\(policy) reason=\(reason)")
        return try client.next(tag: evalTag)
    }

    /// Feeds one simulated sensor reading for uid 0 (admin verb).
    func sensor(_ client: Client, _ result: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertOK(try client.request("\(tag("s")) sensor uid=0 result=\(result)"), file: file, line: line)
    }

    func assertBiometricPrompt(_ reply: Response, attempt: Int, fallback: String?, biometry: String = "touchID",
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(reply.status, .prompt, "expected a biometric PROMPT, got \(reply)", file: file, line: line)
        XCTAssertEqual(reply["kind"], "biometric", "\(reply)", file: file, line: line)
        XCTAssertEqual(reply["attempt"], String(attempt), "\(reply)", file: file, line: line)
        XCTAssertEqual(reply["biometry"], biometry, "\(reply)", file: file, line: line)
        XCTAssertEqual(reply["cancel"], "Cancel", "\(reply)", file: file, line: line)
        XCTAssertNotNil(reply["reason"], "\(reply)", file: file, line: line)
        XCTAssertEqual(reply["fallback"], fallback, "\(reply)", file: file, line: line)
    }

    func assertPasscodePrompt(_ reply: Response, attemptsLeft: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(reply.status, .prompt, "expected a passcode PROMPT, got \(reply)", file: file, line: line)
        XCTAssertEqual(reply["kind"], "passcode", "\(reply)", file: file, line: line)
        XCTAssertEqual(reply["attempts-left"], String(attemptsLeft), "\(reply)", file: file, line: line)
        XCTAssertEqual(reply["cancel"], "Cancel", "\(reply)", file: file, line: line)
    }
}
