// The policy of a can-evaluate answered in place: `CanEvaluateLine` (the
// protocol layer) matches the short names itself and hands the server
// Apple's number, which `UsualCanEvaluate` turns into a `Policy` with
// `Policy(rawValue:)`; every other line's policy is read by the core's
// `Policy(wireName:)`. The two readings live in two modules, so this checks
// they agree on every spelling the core knows and on near misses: a line
// the fast path takes names the policy the general path would find.
import LocalAuthCore
import LocalAuthProtocol
import XCTest


final class InPlacePolicyTests: XCTestCase {
    func testEveryPolicysWireNameAndNumberAreTakenInPlaceAsThatPolicy() {
        for policy in Policy.allCases {
            for name in [policy.wireName, String(policy.rawValue)] {
                XCTAssertEqual(number(name), policy.rawValue, name)
                XCTAssertEqual(Policy(wireName: name), policy, name)
            }
        }
    }

    func testASpellingTakenInPlaceNamesThePolicyTheGeneralPathFinds() {
        let long = ["deviceOwnerAuthenticationWithBiometrics", "LAPolicyDeviceOwnerAuthenticationWithBiometrics",
                    "deviceOwnerAuthentication", "LAPolicyDeviceOwnerAuthentication", "deviceOwnerAuthenticationWithCompanion",
                    "deviceOwnerAuthenticationWithWatch", "deviceOwnerAuthenticationWithBiometricsOrCompanion",
                    "deviceOwnerAuthenticationWithBiometricsOrWatch", "deviceOwnerAuthenticationWithWristDetection"]
        let nearMisses = ["0", "6", "Owner", "owners", "biometric", "biometricz", "companio", "wrisT", "biometrics-or-companio"]
        var taken = 0
        for name in long + nearMisses + Policy.allCases.map(\.wireName) {
            guard let number = number(name) else {
                // Left to the scanner: `canEvaluate(_:_:)` reads it as the core does.
                continue
            }
            taken += 1
            XCTAssertEqual(Policy(rawValue: number), Policy(wireName: name), name)
        }
        XCTAssertEqual(taken, Policy.allCases.count, "only the short names are taken in place")
    }

    private func number(_ policy: String) -> Int? {
        Array("t can-evaluate ctx=0123456789abcdef0123456789abcdef policy=\(policy)".utf8).withUnsafeBufferPointer {
            CanEvaluateLine($0)?.policyNumber
        }
    }
}
