// What is not an LAError is not shown as one: a protocol error from the
// daemon (S-18 step 2: policy 5 is `bad-argument`) reached through the
// LocalAuthentication module is reported as the daemon refusing the request,
// exit 3 as for every refusal; and impossible calendar dates are usage errors.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class RefusalTests: CtlTestCase {
    func testAProtocolRefusalIsReportedAsSuchNotAsAnLAError() throws {
        try admin.ok("set-passcode secret=1234")
        var result = try ctl(["can-evaluate", "--policy", "wrist"] + socket)
        XCTAssertEqual(result.code, 3, result.out + result.err)
        XCTAssertEqual(result.out, "")
        XCTAssertTrue(result.err.hasPrefix("localauthctl: localauthd refused the request: "), result.err)
        XCTAssertTrue(result.err.contains("(bad-argument)"), result.err)
        XCTAssertFalse(result.err.contains("systemCancel"), result.err)
        XCTAssertEqual(result.err.split(separator: "\n").count, 1, "one line: \(result.err)")

        result = try ctl(["can-evaluate", "--policy", "wrist", "-o", "json"] + socket)
        XCTAssertEqual(result.code, 3, result.out + result.err)
        let json = jsonObject(result.out)
        XCTAssertEqual(json["error"] as? String, "bad-argument")
        XCTAssertEqual(json["domain"] as? String, "protocol")
        XCTAssertEqual(json["policy"] as? String, "wrist")
        XCTAssertFalse((json["message"] as? String ?? "").isEmpty, result.out)
        XCTAssertNil(json["result"], "no LAError result: \(result.out)")
        XCTAssertNil(json["code"], "no LAError code: \(result.out)")

        result = try ctl(["evaluate", "--policy", "wrist"] + socket)
        XCTAssertEqual(result.code, 3, result.out + result.err)
        XCTAssertTrue(result.err.hasPrefix("localauthctl: localauthd refused the request: "), result.err)
        XCTAssertTrue(result.err.contains("(bad-argument)"), result.err)
        XCTAssertFalse(result.err.contains("systemCancel"), result.err)

        // LAErrors stay LAErrors.
        result = try ctl(["can-evaluate", "--policy", "companion", "-o", "json"] + socket)
        XCTAssertEqual(result.code, 1, result.out + result.err)
        XCTAssertEqual(jsonObject(result.out)["result"] as? String, "companionNotAvailable")
    }

    func testImpossibleCalendarDatesAreUsageErrors() throws {
        let missing = daemon.directory.path + "/no-such-state"
        for date in ["2026-02-30T00:00:00Z", "2026-02-29", "2026-04-31T12:00:00+02:00", "2100-02-29T00:00:00Z"] {
            for option in ["--since", "--until"] {
                let result = try ctl(["log", "-D", missing, option, date, "--no-pager"])
                XCTAssertEqual(result.code, 2, "\(option) \(date): \(result.err)")
                XCTAssertTrue(result.err.contains("invalid time '\(date)'"), result.err)
            }
        }
        for date in ["2028-02-29T00:00:00Z", "2000-02-29", "2026-12-31T23:59:59Z", "2026-04-30"] {
            let result = try ctl(["log", "-D", missing, "--since", date, "--no-pager"])
            XCTAssertEqual(result.code, 1, "\(date) is a date; only the state directory is missing: \(result.err)")
        }
    }
}
