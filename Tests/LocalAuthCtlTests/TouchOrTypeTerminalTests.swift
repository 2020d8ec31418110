// `localauthctl evaluate` on a real terminal shows both at once (S-60,
// LATerminalPromptHandler): "Touch the sensor or type your passcode", a
// match with no key pressed, a passcode typed across a miss kept whole and
// never echoed. python3-pexpect holds the pty (Tests/terminal/); skips
// without it.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class TouchOrTypeTerminalTests: CtlTestCase {
    func test_S60_evaluateOnATerminalShowsTouchOrType_andEitherOneCompletesIt() throws {
        let probe = try runToCompletion("/usr/bin/python3", ["-c", "import pexpect"])
        guard probe.0 == 0 else { throw XCTSkip("python3-pexpect is not installed") }
        _ = try admin.request("set-passcode secret=2468")
        _ = try admin.request("enroll uid=0")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("terminal/evaluate_touch_or_type.py").path
        let (code, out, err) = try runToCompletion("/usr/bin/python3", [script, try ctlBinary(), daemon.socketPath, "2468"],
                                                   timeout: 120)
        let lines = out.split(separator: "\n").map(String.init)
        XCTAssertEqual(code, 0, err)
        XCTAssertEqual(lines.filter { $0.hasPrefix("ok - ") }.count, 4, out + err)
        for line in lines where line.hasPrefix("not ok") { XCTFail(line) }
    }
}
