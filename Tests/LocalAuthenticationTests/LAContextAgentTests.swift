// LAContext and the session's authentication agent (S-66): with no prompt
// handler of its own, an evaluation asks for the system's prompt, as on iOS,
// and the agent of the process's logind session shows it; a context (or a
// program) with its own handler draws its prompts as before. Against the
// real daemon and dbusmock's logind; skips without dbusmock.
import Foundation
import Glibc
import LocalAuthentication
import LocalAuthTestSupport
import XCTest

final class LAContextAgentTests: XCTestCase {
    var mock: LogindMock!
    var daemon: DaemonProcess!
    var agent: Client!

    override func setUpWithError() throws {
        mock = try LogindMock()
        try mock.addSession("c3", uid: 0, user: "root", pid: getpid())
        daemon = try DaemonProcess(configuration: DaemonProcess.defaultConfiguration + "LogindBus=\(mock.bus)\n")
        let admin = try daemon.connect()
        XCTAssertOK(try admin.request("p set-passcode secret=1234"))
        XCTAssertOK(try admin.request("e enroll uid=0"))
        agent = try daemon.connect()
        XCTAssertEqual(try agent.request("a register-agent").status, .ok)
        LAContext.defaultPromptHandler = LATerminalPromptHandler()
    }

    override func tearDown() {
        agent = nil
        if let daemon { _ = daemon.stop() }
        daemon = nil
        mock = nil
        LAContext.defaultPromptHandler = LATerminalPromptHandler()
        super.tearDown()
    }

    func match() throws {
        let admin = try daemon.connect()
        XCTAssertOK(try admin.request("f sensor uid=0 result=match"))
    }

    func test_S66_aContextWithoutAHandlerIsPromptedByTheSessionsAgentAsOnIOS() throws {
        let context = LAContext(socketPath: daemon.socketPath)
        let box = ReplyBox()
        context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "open the vault", reply: box.reply)
        let prompt = try agent.next(tag: "a")
        XCTAssertEqual(prompt["kind"], "biometric")
        XCTAssertEqual(prompt["reason"], "open the vault")
        XCTAssertEqual(prompt["app-pid"], String(getpid()))
        try match()
        XCTAssertEqual(try agent.nextLine(tag: "a"), "a DONE request=1 result=success")
        XCTAssertTrue(box.wait().success)
        XCTAssertEqual(context.evaluatedMethod, "biometric")
    }

    func test_S66_aContextWithItsOwnHandlerOrAProgramsDefaultDrawsItsPrompts() throws {
        for own in [true, false] {
            let handler = ScriptedHandler()
            let context = LAContext(socketPath: daemon.socketPath)
            if own { context.promptHandler = handler } else { LAContext.defaultPromptHandler = handler }
            let box = ReplyBox()
            context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "mine", reply: box.reply)
            XCTAssertEqual(handler.nextPrompt(), "biometric", own ? "its own handler" : "the program's default")
            try match()
            XCTAssertTrue(box.wait().success)
            LAContext.defaultPromptHandler = LATerminalPromptHandler()
        }
        XCTAssertEqual(try agent.request("z ping").status, .ok)
        XCTAssertEqual(agent.stashedLines(tag: "a"), [], "the agent was sent nothing")
    }
}
