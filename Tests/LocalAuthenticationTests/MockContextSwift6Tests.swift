// Swift 6 language mode: an LAContext subclass as a test mock compiles
// without warnings (LAContext is not Sendable, as Apple's is not, so the
// subclass restates nothing), with the reply as Apple's `@Sendable` type.
import Foundation
import LocalAuthentication
import XCTest

final class Swift6MockContext: LAContext {
    var answer = true

    override func canEvaluatePolicy(_ policy: LAPolicy, error: NSErrorPointer) -> Bool { answer }

    override func evaluatePolicy(_ policy: LAPolicy, localizedReason: String,
                                 reply: @escaping @Sendable (Bool, (any Error)?) -> Void) {
        reply(answer, answer ? nil : LAError(_nsError: NSError(domain: LAErrorDomain, code: -2)))
    }

    override var biometryType: LABiometryType { .opticID }
}

final class MockContextSwift6Tests: XCTestCase {
    func testASubclassMockStandsInForTheContext() async throws {
        let mock = Swift6MockContext()
        XCTAssertTrue(mock.canEvaluatePolicy(.deviceOwnerAuthentication, error: nil))
        XCTAssertEqual(mock.biometryType, .opticID)
        let success = try await mock.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "mock")
        XCTAssertTrue(success)
        mock.answer = false
        do {
            _ = try await mock.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "mock")
            XCTFail("the mock refused")
        } catch LAError.userCancel {}
    }
}
