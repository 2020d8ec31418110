// The iOS 18 API surface, symbol by symbol: LAPublicDefines.h's constants
// (name, imported type Int32 or String, value), the typed enums that carry
// the same numbers, and the shapes of the iOS 16..18 classes. This one file
// is compiled twice: here in Swift 6 mode, and through a symlink in
// LocalAuthenticationSwift5Tests in Swift 5 mode, so both language modes
// see every symbol as Apple's module declares it. Availability: the symbols
// carry Apple's platform attributes, which Linux ignores; that they are used
// here without `#available` shows they are usable on Linux.
import Foundation
import LocalAuthentication
import XCTest

final class APIShapeV18Tests: XCTestCase {
    func assertInt32(_ value: Int32, _ expected: Int32, _ name: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(value, expected, name, file: file, line: line)
    }

    func testPolicyConstants() {
        assertInt32(kLAPolicyDeviceOwnerAuthenticationWithBiometrics, 1, "kLAPolicyDeviceOwnerAuthenticationWithBiometrics")
        assertInt32(kLAPolicyDeviceOwnerAuthentication, 2, "kLAPolicyDeviceOwnerAuthentication")
        assertInt32(kLAPolicyDeviceOwnerAuthenticationWithWatch, 3, "kLAPolicyDeviceOwnerAuthenticationWithWatch")
        assertInt32(kLAPolicyDeviceOwnerAuthenticationWithCompanion, 3, "kLAPolicyDeviceOwnerAuthenticationWithCompanion")
        assertInt32(kLAPolicyDeviceOwnerAuthenticationWithBiometricsOrWatch, 4, "kLAPolicyDeviceOwnerAuthenticationWithBiometricsOrWatch")
        assertInt32(kLAPolicyDeviceOwnerAuthenticationWithBiometricsOrCompanion, 4,
                    "kLAPolicyDeviceOwnerAuthenticationWithBiometricsOrCompanion")
        assertInt32(kLAPolicyDeviceOwnerAuthenticationWithWristDetection, 5, "kLAPolicyDeviceOwnerAuthenticationWithWristDetection")
        for policy in LAPolicy.allCases {
            XCTAssertNotNil([kLAPolicyDeviceOwnerAuthenticationWithBiometrics, kLAPolicyDeviceOwnerAuthentication,
                             kLAPolicyDeviceOwnerAuthenticationWithCompanion, kLAPolicyDeviceOwnerAuthenticationWithBiometricsOrCompanion,
                             kLAPolicyDeviceOwnerAuthenticationWithWristDetection].firstIndex(of: Int32(policy.rawValue)))
        }
    }

    func testOptionAndCredentialConstants() {
        assertInt32(kLAOptionUserFallback, 1, "kLAOptionUserFallback")
        assertInt32(kLAOptionAuthenticationReason, 2, "kLAOptionAuthenticationReason")
        assertInt32(kLACredentialTypePasscode, -1, "kLACredentialTypePasscode")
        assertInt32(kLACredentialTypePassphrase, -2, "kLACredentialTypePassphrase")
        assertInt32(kLACredentialCTKPIN, -3, "kLACredentialCTKPIN")
        assertInt32(kLACredentialSmartCardPIN, -3, "kLACredentialSmartCardPIN")
        assertInt32(kLACredentialTypeApplicationPassword, 0, "kLACredentialTypeApplicationPassword")
        XCTAssertEqual(LACredentialType.applicationPassword.rawValue, Int(kLACredentialTypeApplicationPassword))
        XCTAssertEqual(LACredentialType.smartCardPIN.rawValue, Int(kLACredentialSmartCardPIN))
        XCTAssertEqual(LACredentialType.allCases.count, 2)
    }

    func testAccessControlOperationConstants() {
        assertInt32(kLAAccessControlOperationCreateItem, 0, "kLAAccessControlOperationCreateItem")
        assertInt32(kLAAccessControlOperationUseItem, 1, "kLAAccessControlOperationUseItem")
        assertInt32(kLAAccessControlOperationCreateKey, 2, "kLAAccessControlOperationCreateKey")
        assertInt32(kLAAccessControlOperationUseKeySign, 3, "kLAAccessControlOperationUseKeySign")
        assertInt32(kLAAccessControlOperationUseKeyDecrypt, 4, "kLAAccessControlOperationUseKeyDecrypt")
        assertInt32(kLAAccessControlOperationUseKeyKeyExchange, 5, "kLAAccessControlOperationUseKeyKeyExchange")
        XCTAssertEqual(LAAccessControlOperation.allCases.map(\.rawValue), [0, 1, 2, 3, 4, 5])
        XCTAssertEqual(LAAccessControlOperation.useKeyKeyExchange.rawValue, Int(kLAAccessControlOperationUseKeyKeyExchange))
    }

    func testErrorConstantsMatchLAErrorCodes() {
        let pairs: [(Int32, LAError.Code, String)] = [
            (kLAErrorAuthenticationFailed, .authenticationFailed, "kLAErrorAuthenticationFailed"),
            (kLAErrorUserCancel, .userCancel, "kLAErrorUserCancel"),
            (kLAErrorUserFallback, .userFallback, "kLAErrorUserFallback"),
            (kLAErrorSystemCancel, .systemCancel, "kLAErrorSystemCancel"),
            (kLAErrorPasscodeNotSet, .passcodeNotSet, "kLAErrorPasscodeNotSet"),
            (kLAErrorTouchIDNotAvailable, .biometryNotAvailable, "kLAErrorTouchIDNotAvailable"),
            (kLAErrorTouchIDNotEnrolled, .biometryNotEnrolled, "kLAErrorTouchIDNotEnrolled"),
            (kLAErrorTouchIDLockout, .biometryLockout, "kLAErrorTouchIDLockout"),
            (kLAErrorAppCancel, .appCancel, "kLAErrorAppCancel"),
            (kLAErrorInvalidContext, .invalidContext, "kLAErrorInvalidContext"),
            (kLAErrorWatchNotAvailable, .companionNotAvailable, "kLAErrorWatchNotAvailable"),
            (kLAErrorBiometryNotPaired, .biometryNotPaired, "kLAErrorBiometryNotPaired"),
            (kLAErrorBiometryDisconnected, .biometryDisconnected, "kLAErrorBiometryDisconnected"),
            (kLAErrorInvalidDimensions, .invalidDimensions, "kLAErrorInvalidDimensions"),
            (kLAErrorNotInteractive, .notInteractive, "kLAErrorNotInteractive"),
            (kLAErrorBiometryNotAvailable, .biometryNotAvailable, "kLAErrorBiometryNotAvailable"),
            (kLAErrorBiometryNotEnrolled, .biometryNotEnrolled, "kLAErrorBiometryNotEnrolled"),
            (kLAErrorBiometryLockout, .biometryLockout, "kLAErrorBiometryLockout"),
            (kLAErrorCompanionNotAvailable, .companionNotAvailable, "kLAErrorCompanionNotAvailable"),
        ]
        let raw: [Int32] = [-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -1004, -6, -7, -8, -11]
        for ((constant, code, name), value) in zip(pairs, raw) {
            assertInt32(constant, value, name)
            XCTAssertEqual(Int(constant), code.rawValue, name)
        }
        XCTAssertEqual(kLAErrorDomain, "com.apple.LocalAuthentication")
        XCTAssertEqual(kLAErrorDomain, LAErrorDomain)
        // The wrapper-library idiom: switching an NSError's code over the C constants.
        let error = NSError(domain: kLAErrorDomain, code: Int(kLAErrorUserCancel))
        switch Int32(error.code) {
        case kLAErrorUserCancel: break
        default: XCTFail("kLAErrorUserCancel")
        }
    }

    func testBiometryAndCompanionConstants() {
        assertInt32(kLABiometryTypeNone, 0, "kLABiometryTypeNone")
        assertInt32(kLABiometryTypeTouchID, 1, "kLABiometryTypeTouchID")
        assertInt32(kLABiometryTypeFaceID, 2, "kLABiometryTypeFaceID")
        assertInt32(kLABiometryTypeOpticID, 4, "kLABiometryTypeOpticID")
        XCTAssertEqual(LABiometryType.allCases.map { Int32($0.rawValue) },
                       [kLABiometryTypeNone, kLABiometryTypeTouchID, kLABiometryTypeFaceID, kLABiometryTypeOpticID])
        assertInt32(kLACompanionTypeNone, 0, "kLACompanionTypeNone")
        assertInt32(kLACompanionTypeWatch, 1, "kLACompanionTypeWatch")
        assertInt32(kLACompanionTypeMac, 2, "kLACompanionTypeMac")
        assertInt32(kLACompanionTypeVision, 4, "kLACompanionTypeVision")
        XCTAssertEqual(LACompanionType.watch.rawValue, Int(kLACompanionTypeWatch))
        XCTAssertEqual(LACompanionType.mac.rawValue, Int(kLACompanionTypeMac))
        XCTAssertEqual(LACompanionType(rawValue: 2), .mac)
    }

    func testContextSignaturesAreTheImportedOnes() {
        let context = LAContext(socketPath: "/nonexistent/localauthd.socket")
        // @discardableResult: a bare call compiles without a warning.
        context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: nil)
        context.setCredential(nil, type: .applicationPassword)
        let domainState: LADomainState = context.domainState
        let hash: Data? = domainState.stateHash
        XCTAssertNil(hash)
        let biometryHash: Data? = domainState.biometry.stateHash
        XCTAssertNil(biometryHash)
        let types: Set<LACompanionType> = domainState.companion.availableCompanionTypes
        XCTAssertTrue(types.isEmpty)
        let failures: NSNumber? = context.maxBiometryFailures
        XCTAssertNil(failures, "no daemon there")
        let credentialSet: Bool = context.isCredentialSet(.applicationPassword)
        XCTAssertFalse(credentialSet)
        // The reply type is Apple's `@Sendable (Bool, Error?) -> Void`.
        let reply: @Sendable (Bool, (any Error)?) -> Void = { _, _ in }
        context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "shape", reply: reply)
    }

    func testEnvironmentShapes() {
        let environment: LAEnvironment = LAEnvironment.currentUser
        _ = environment
        let state: LAEnvironment.State? = nil
        let biometry: LAEnvironment.MechanismBiometry? = state?.biometry
        let type: LABiometryType? = biometry?.biometryType
        let flags: [Bool?] = [biometry?.isUsable, biometry?.isEnrolled, biometry?.isLockedOut, biometry?.builtInSensorInaccessible,
                              state?.userPassword?.isUsable, state?.userPassword?.isSet]
        let hash: Data? = biometry?.stateHash
        let companions: [LAEnvironment.MechanismCompanion]? = state?.companions
        let all: [LAEnvironment.Mechanism]? = state?.allMechanisms
        XCTAssertNil(type)
        XCTAssertEqual(flags.compactMap { $0 }, [])
        XCTAssertNil(hash)
        XCTAssertNil(companions)
        XCTAssertNil(all)
    }

    func testRightFamilyShapes() {
        // LARight.State raw values (LARight.h).
        XCTAssertEqual(LARight.State.allCases.map(\.rawValue), [0, 1, 2, 3])
        XCTAssertEqual(LARight.State.notAuthorized.rawValue, 3)
        // Requirements: Apple's spellings, in both forms of biometry.
        let requirements: [LAAuthenticationRequirement] = [
            .default, .biometry, .biometryCurrentSet, .biometry(fallback: .default), .biometry(fallback: .devicePasscode),
        ]
        XCTAssertEqual(requirements.count, 5)
        XCTAssertEqual(LAAuthenticationRequirement.biometry(fallback: .default), LAAuthenticationRequirement.biometry)
        XCTAssertNotEqual(LAAuthenticationRequirement.biometry(fallback: .devicePasscode), LAAuthenticationRequirement.biometry)
        let fallbacks: [LABiometryFallbackRequirement] = [.default, .devicePasscode]
        XCTAssertEqual(fallbacks.count, 2)

        let right = LARight()
        let withRequirement = LARight(requirement: .biometryCurrentSet)
        XCTAssertEqual(right.state, .unknown)
        XCTAssertEqual(withRequirement.tag, 0)
        // The completion forms (as imported from Objective-C) and the async forms.
        let authorize: (String, @escaping @Sendable ((any Error)?) -> Void) -> Void = right.authorize(localizedReason:completion:)
        let check: (@escaping @Sendable ((any Error)?) -> Void) -> Void = right.checkCanAuthorize(completion:)
        let deauthorize: (@escaping @Sendable () -> Void) -> Void = right.deauthorize(completion:)
        let authorizeAsync: (String) async throws -> Void = right.authorize(localizedReason:)
        let checkAsync: () async throws -> Void = right.checkCanAuthorize
        let deauthorizeAsync: () async -> Void = right.deauthorize
        _ = (authorize, check, deauthorize, authorizeAsync, checkAsync, deauthorizeAsync)

        let store: LARightStore = .shared
        let fetch: (String, @escaping @Sendable (LAPersistedRight?, (any Error)?) -> Void) -> Void = store.right(forIdentifier:completion:)
        let save: (LARight, String, @escaping @Sendable (LAPersistedRight?, (any Error)?) -> Void) -> Void =
            store.saveRight(_:identifier:completion:)
        let saveSecret: (LARight, String, Data, @escaping @Sendable (LAPersistedRight?, (any Error)?) -> Void) -> Void =
            store.saveRight(_:identifier:secret:completion:)
        let remove: (LAPersistedRight, @escaping @Sendable ((any Error)?) -> Void) -> Void = store.removeRight(_:completion:)
        let removeByIdentifier: (String, @escaping @Sendable ((any Error)?) -> Void) -> Void = store.removeRight(forIdentifier:completion:)
        let removeAll: (@escaping @Sendable ((any Error)?) -> Void) -> Void = store.removeAllRights(completion:)
        let fetchAsync: (String) async throws -> LAPersistedRight = store.right(forIdentifier:)
        let saveAsync: (LARight, String) async throws -> LAPersistedRight = store.saveRight(_:identifier:)
        let saveSecretAsync: (LARight, String, Data) async throws -> LAPersistedRight = store.saveRight(_:identifier:secret:)
        let removeAsync: (LAPersistedRight) async throws -> Void = store.removeRight(_:)
        let removeByIdentifierAsync: (String) async throws -> Void = store.removeRight(forIdentifier:)
        let removeAllAsync: () async throws -> Void = store.removeAllRights
        _ = (fetch, save, saveSecret, remove, removeByIdentifier, removeAll)
        _ = (fetchAsync, saveAsync, saveSecretAsync, removeAsync, removeByIdentifierAsync, removeAllAsync)
    }

    func testSecretShapes() {
        // LAPersistedRight is an LARight; its secret loads in both forms.
        func shapes(_ persisted: LAPersistedRight) {
            let asRight: LARight = persisted
            let secret: LASecret = persisted.secret
            let load: (@escaping @Sendable (Data?, (any Error)?) -> Void) -> Void = secret.loadData(completion:)
            let loadAsync: () async throws -> Data = secret.loadData
            _ = (asRight, load, loadAsync)
        }
        _ = shapes
        func rawData(_ secret: LASecret) async throws -> Data { try await secret.rawData }
        _ = rawData
    }
}
