// Swift 5 language mode, as most iOS code still is: an LAContext subclass
// used as a test mock (the common iOS pattern) and a non-Sendable reply
// closure compile without warnings, because the signatures are the
// imported ones (`@discardableResult`, `@preconcurrency` with a `@Sendable`
// reply). The build's zero-warning rule is the assertion for the compile
// half; the test runs the mock as its iOS author would.
import Foundation
import LocalAuthentication
import XCTest

class MockLAContext: LAContext {
    var canEvaluate = true
    var evaluateResult: (Bool, Error?) = (true, nil)
    var evaluatedPolicies: [LAPolicy] = []

    override func canEvaluatePolicy(_ policy: LAPolicy, error: NSErrorPointer) -> Bool {
        if !canEvaluate {
            error?.pointee = NSError(domain: LAErrorDomain, code: LAError.biometryNotEnrolled.rawValue)
        }
        return canEvaluate
    }

    override func evaluatePolicy(_ policy: LAPolicy, localizedReason: String, reply: @escaping (Bool, Error?) -> Void) {
        evaluatedPolicies.append(policy)
        reply(evaluateResult.0, evaluateResult.1)
    }

    override var biometryType: LABiometryType { .faceID }
}

/// A non-Sendable class captured by the reply, as in most iOS view models.
class LoginViewModel {
    var unlocked = false
    var message = ""

    func unlock(with context: LAContext) {
        context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: nil)
        context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "Unlock") { success, error in
            self.unlocked = success
            self.message = error?.localizedDescription ?? ""
        }
    }
}

final class MockContextTests: XCTestCase {
    func testASubclassMockStandsInForTheContext() {
        let mock = MockLAContext()
        let model = LoginViewModel()
        model.unlock(with: mock)
        XCTAssertTrue(model.unlocked)
        XCTAssertEqual(mock.evaluatedPolicies, [.deviceOwnerAuthenticationWithBiometrics])
        XCTAssertEqual(mock.biometryType, .faceID)

        mock.canEvaluate = false
        var error: NSError?
        XCTAssertFalse(mock.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error))
        XCTAssertEqual((error as? LAError)?.code, .biometryNotEnrolled)

        mock.evaluateResult = (false, LAError(_nsError: NSError(domain: LAErrorDomain, code: -2)))
        model.unlock(with: mock)
        XCTAssertFalse(model.unlocked)
    }
}
