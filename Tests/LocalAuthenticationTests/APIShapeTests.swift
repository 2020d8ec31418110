// Apple's API shapes and constants, without a daemon: raw values from the
// SDK headers, the deprecated aliases, and NSError bridging as iOS code uses it.
import Foundation
import LocalAuthentication
import XCTest

final class APIShapeTests: XCTestCase {
    func testPolicyRawValuesAreApples() {
        XCTAssertEqual(LAPolicy.deviceOwnerAuthenticationWithBiometrics.rawValue, 1)
        XCTAssertEqual(LAPolicy.deviceOwnerAuthentication.rawValue, 2)
        XCTAssertEqual(LAPolicy.deviceOwnerAuthenticationWithCompanion.rawValue, 3)
        XCTAssertEqual(LAPolicy.deviceOwnerAuthenticationWithWatch, .deviceOwnerAuthenticationWithCompanion)
        XCTAssertEqual(LAPolicy.deviceOwnerAuthenticationWithBiometricsOrCompanion.rawValue, 4)
        XCTAssertEqual(LAPolicy.deviceOwnerAuthenticationWithBiometricsOrWatch.rawValue, 4)
        XCTAssertEqual(LAPolicy.deviceOwnerAuthenticationWithWristDetection.rawValue, 5)
    }

    func testBiometryTypeRawValuesAreApples() {
        XCTAssertEqual(LABiometryType.none.rawValue, 0)
        XCTAssertEqual(LABiometryType.LABiometryNone, LABiometryType.none)
        XCTAssertEqual(LABiometryType.touchID.rawValue, 1)
        XCTAssertEqual(LABiometryType.faceID.rawValue, 2)
        XCTAssertEqual(LABiometryType.opticID.rawValue, 4)
        XCTAssertEqual(LATouchIDAuthenticationMaximumAllowableReuseDuration, 300)
    }

    func testErrorCodesAreApplesIncludingTheDeprecatedNames() {
        let expected: [(LAError.Code, Int)] = [
            (.authenticationFailed, -1), (.userCancel, -2), (.userFallback, -3), (.systemCancel, -4),
            (.passcodeNotSet, -5), (.biometryNotAvailable, -6), (.biometryNotEnrolled, -7), (.biometryLockout, -8),
            (.appCancel, -9), (.invalidContext, -10), (.companionNotAvailable, -11), (.biometryNotPaired, -12),
            (.biometryDisconnected, -13), (.invalidDimensions, -14), (.notInteractive, -1004),
            (.touchIDNotAvailable, -6), (.touchIDNotEnrolled, -7), (.touchIDLockout, -8), (.watchNotAvailable, -11),
        ]
        for (code, raw) in expected { XCTAssertEqual(code.rawValue, raw, "\(code)") }
        XCTAssertEqual(LAError.Code.allCases.count, 15)
        // Static members on LAError itself are codes (`LAError.userCancel.rawValue`).
        XCTAssertEqual(LAError.userCancel, LAError.Code.userCancel)
        XCTAssertEqual(LAError.authenticationFailed.rawValue, -1)
        XCTAssertEqual(LAError.touchIDLockout.rawValue, LAError.biometryLockout.rawValue)
        XCTAssertEqual(LAError.notInteractive.rawValue, -1004)
        XCTAssertEqual(LAError.errorDomain, "com.apple.LocalAuthentication")
        XCTAssertEqual(LAErrorDomain, LAError.errorDomain)
    }

    func testNSErrorsOfTheDomainBridgeToLAErrorAndBack() {
        let nsError = NSError(domain: LAErrorDomain, code: -7,
                              userInfo: [NSLocalizedDescriptionKey: "No fingers are enrolled with Touch ID."])
        let error: any Error = nsError
        guard let laError = error as? LAError else { return XCTFail("error as? LAError failed") }
        XCTAssertEqual(laError.code, .biometryNotEnrolled)
        XCTAssertEqual(laError.localizedDescription, "No fingers are enrolled with Touch ID.")
        switch laError.code {
        case .biometryNotEnrolled, .touchIDNotEnrolled: break
        default: XCTFail("switch on the code")
        }
        XCTAssertEqual((laError as NSError).code, -7)
        XCTAssertEqual((laError as NSError).domain, LAErrorDomain)
        XCTAssertEqual((error as NSError).code, -7)
        // Another domain does not bridge.
        XCTAssertNil(NSError(domain: NSPOSIXErrorDomain, code: 2) as Error as? LAError)
    }

    func testCatchByCodeMatchesThrownNSErrors() {
        func fail(_ code: Int) throws { throw NSError(domain: LAErrorDomain, code: code) }
        var caught = ""
        do { try fail(-2) } catch LAError.userCancel { caught = "userCancel" } catch { caught = "other" }
        XCTAssertEqual(caught, "userCancel")
        do { try fail(-8) } catch LAError.userCancel { caught = "userCancel" } catch LAError.touchIDLockout {
            caught = "lockout"
        } catch { caught = "other" }
        XCTAssertEqual(caught, "lockout")
        do { try fail(-3) } catch let error as LAError where error.code == .userFallback { caught = "fallback" } catch {
            caught = "other"
        }
        XCTAssertEqual(caught, "fallback")
    }

    func testCanEvaluateAcceptsANilErrorPointer() throws {
        // Seed 004's `canEvaluatePolicy:... error:nil`, against no daemon at all.
        let context = LAContext(socketPath: "/nonexistent/localauthd.socket")
        XCTAssertFalse(context.canEvaluatePolicy(.deviceOwnerAuthentication, error: nil))
        XCTAssertEqual(context.biometryType, .none)
    }
}
