// S-52: administrators are not root. Given who asks, about whom, and the
// daemon's backends, when an administrator's act or an on-behalf context
// is asked for, then it is allowed or refused as the rule says.

import XCTest
@testable import LocalAuthCore

final class RootOnlyRuleTests: XCTestCase {
    let member: UserID = 65534

    func test_S52_givenAnAdministratorWhoIsNotRoot_whenTheSubjectIsRoot_thenTheActIsRefused() {
        for verb in ["enroll", "unenroll", "sensor", "unlocked", "reset", "clear-passcode", "set-passcode"] {
            let why = RootOnly.refusal(verb: verb, subject: 0, caller: member)
            XCTAssertNotNil(why, verb)
            XCTAssertTrue(why?.hasPrefix(verb) == true, why ?? "")
        }
        // The daemon's own uid is an administrator (S-35), not root.
        XCTAssertNotNil(RootOnly.refusal(verb: "reset", subject: 0, caller: 105))
    }

    func test_S52_givenRoot_whenItActsOnAnyone_thenNothingIsRefused() {
        XCTAssertNil(RootOnly.refusal(verb: "enroll", subject: 0, caller: 0))
        XCTAssertNil(RootOnly.refusal(verb: "sensor", subject: 0, caller: 0, reachesOnBehalfPrompt: true))
        XCTAssertNil(RootOnly.refusal(verb: "sensor", subject: alice, caller: 0, reachesOnBehalfPrompt: true))
    }

    func test_S52_givenAnAdministratorWhoIsNotRoot_whenAReadingWouldAnswerAPAMPrompt_thenItIsRefused() {
        XCTAssertNotNil(RootOnly.refusal(verb: "sensor", subject: alice, caller: member, reachesOnBehalfPrompt: true))
        XCTAssertNil(RootOnly.refusal(verb: "sensor", subject: alice, caller: member, reachesOnBehalfPrompt: false),
                     "a user's own prompt is fed by any administrator (S-34)")
        XCTAssertNil(RootOnly.refusal(verb: "reset", subject: alice, caller: member))
    }

    func test_S52_givenBackendsAnAdministratorControls_whenAnOnBehalfContextIsAsked_thenItIsRefused() {
        func refusal(_ biometry: BiometryType, simulated: Bool, builtin: Bool, tests: Bool = false) -> String? {
            RootOnly.onBehalfRefusal(biometry: biometry, sensorIsSimulated: simulated, passcodesAreBuiltin: builtin,
                                     allowedForTests: tests)
        }
        XCTAssertNotNil(refusal(.touchID, simulated: true, builtin: false))
        XCTAssertNotNil(refusal(.touchID, simulated: false, builtin: true))
        XCTAssertNotNil(refusal(.none, simulated: true, builtin: true), "builtin passcodes alone are enough")
        XCTAssertTrue(refusal(.faceID, simulated: true, builtin: true)?.contains("simulated sensor and builtin passcodes") == true)
        // Real backends: fprintd (or no sensor at all) and login passwords.
        XCTAssertNil(refusal(.touchID, simulated: false, builtin: false))
        XCTAssertNil(refusal(.none, simulated: true, builtin: false), "Type=none shows no prompt to feed")
        // The test-only switch.
        XCTAssertNil(refusal(.touchID, simulated: true, builtin: true, tests: true))
    }
}
