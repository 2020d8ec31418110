// iOS code written from Apple's documentation pages compiles here unchanged
// (issue 33 item 1): a probe that uses LAEnvironment's Swift names exactly as
// developer.apple.com spells them (`LAEnvironment.Observer` and its
// `environment(_:stateDidChangeFromOldState:)`, `LAEnvironment.State`,
// `LAEnvironment.Mechanism`, `.MechanismBiometry`, `.MechanismUserPassword`,
// `.MechanismCompanion` and each of their properties) is type-checked against
// the built module in Swift 5 and Swift 6 mode with no diagnostic at all; the
// Objective-C names, which Apple's Swift overlay renames, give Apple's
// "has been renamed" error.
import Foundation
import LocalAuthTestSupport
import XCTest

final class AppleNamesProbeTests: XCTestCase {
    static let environmentProbe = """
        import Foundation
        import LocalAuthentication

        final class EnrollmentWatcher: NSObject, LAEnvironment.Observer {
            var changes = 0
            func environment(_ environment: LAEnvironment, stateDidChangeFromOldState oldState: LAEnvironment.State) {
                changes += 1
                let state: LAEnvironment.State = environment.state
                let all: [LAEnvironment.Mechanism] = state.allMechanisms
                for mechanism in all {
                    let _: (Bool, String, String) = (mechanism.isUsable, mechanism.localizedName, mechanism.iconSystemName)
                }
                if let biometry: LAEnvironment.MechanismBiometry = state.biometry {
                    let _: LABiometryType = biometry.biometryType
                    let _: (Bool, Bool, Bool) = (biometry.isEnrolled, biometry.isLockedOut, biometry.builtInSensorInaccessible)
                    let _: Data = biometry.stateHash
                    if biometry.stateHash != oldState.biometry?.stateHash { print("enrollment changed") }
                }
                if let password: LAEnvironment.MechanismUserPassword = state.userPassword {
                    let _: Bool = password.isSet
                }
                let companions: [LAEnvironment.MechanismCompanion] = state.companions
                for companion in companions {
                    let _: LACompanionType = companion.type
                    let _: Data? = companion.stateHash
                }
            }
        }

        /// The method is optional in Apple's protocol: an observer may leave it out.
        final class SilentObserver: NSObject, LAEnvironment.Observer {}

        func watch() {
            let environment: LAEnvironment = LAEnvironment.currentUser
            let watcher = EnrollmentWatcher()
            environment.addObserver(watcher)
            environment.removeObserver(watcher)
            environment.addObserver(SilentObserver())
        }
        """

    /// The rest of the module's surface as developer.apple.com declares it
    /// (issue 33 item 1's audit): each method as an unbound reference of
    /// the exact type Apple's page gives (labels, optionality, @Sendable
    /// handlers), the async forms Swift makes of the completion handlers,
    /// property types, LAError's Swift form, and the iOS 16 keys:
    /// LAPersistedRight.key, LAPrivateKey, LAPublicKey, SecKeyAlgorithm.
    static let surfaceProbe = """
        import Foundation
        import LocalAuthentication

        typealias DataHandler = @Sendable (Data?, (any Error)?) -> Void
        typealias ErrorHandler = @Sendable ((any Error)?) -> Void
        typealias RightHandler = @Sendable (LAPersistedRight?, (any Error)?) -> Void

        func contextSurface() async throws {
            let context = LAContext()
            var error: NSError?
            let _: Bool = context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error)
            context.canEvaluatePolicy(.deviceOwnerAuthentication, error: nil)
            let evaluate: (LAContext) -> (LAPolicy, String, @escaping @Sendable (Bool, (any Error)?) -> Void) -> Void =
                LAContext.evaluatePolicy(_:localizedReason:reply:)
            let evaluateAsync: (LAContext) -> (LAPolicy, String) async throws -> Bool = LAContext.evaluatePolicy(_:localizedReason:)
            _ = (evaluate, evaluateAsync)
            let _: Bool = try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "Unlock")
            context.localizedFallbackTitle = nil
            context.localizedCancelTitle = "Not now"
            context.localizedReason = "Unlock your notes"
            context.touchIDAuthenticationAllowableReuseDuration = LATouchIDAuthenticationMaximumAllowableReuseDuration
            context.interactionNotAllowed = false
            let _: LABiometryType = context.biometryType
            let _: Data? = context.evaluatedPolicyDomainState
            let domain: LADomainState = context.domainState
            let _: (LABiometryType, Data?) = (domain.biometry.biometryType, domain.biometry.stateHash)
            let _: Set<LACompanionType> = domain.companion.availableCompanionTypes
            let _: (Data?, Data?, Data?) = (domain.companion.stateHash, domain.companion.stateHash(for: .watch), domain.stateHash)
            let _: Bool = context.setCredential(Data("pw".utf8), type: .applicationPassword)
            let _: Bool = context.isCredentialSet(.applicationPassword)
            context.invalidate()
            let _: [LAPolicy] = [.deviceOwnerAuthenticationWithBiometrics, .deviceOwnerAuthentication,
                                 .deviceOwnerAuthenticationWithCompanion, .deviceOwnerAuthenticationWithBiometricsOrCompanion,
                                 .deviceOwnerAuthenticationWithWristDetection]
            let _: [LABiometryType] = [.none, .touchID, .faceID, .opticID]
            let _: [LAAccessControlOperation] = [.createItem, .useItem, .createKey, .useKeySign, .useKeyDecrypt, .useKeyKeyExchange]
            let _: [LACompanionType] = [.watch, .mac]
        }

        func errorSurface(_ error: any Error) {
            let made = LAError(.userCancel)
            let _: LAError.Code = made.code
            let _: String = LAError.errorDomain
            let _: String = LAErrorDomain
            let _: [LAError.Code] = [.authenticationFailed, .userCancel, .userFallback, .systemCancel, .passcodeNotSet,
                                     .biometryNotAvailable, .biometryNotEnrolled, .biometryLockout, .appCancel, .invalidContext,
                                     .companionNotAvailable, .biometryNotPaired, .biometryDisconnected, .invalidDimensions,
                                     .notInteractive]
            if let laError = error as? LAError, laError.code == .biometryLockout { print(laError.localizedDescription) }
            if (error as NSError).code == Int(kLAErrorUserCancel) { print("cancelled") }
            do { throw made } catch LAError.userCancel { print("userCancel") } catch { print(error) }
        }

        func rightSurface() async throws {
            let right = LARight(requirement: .biometry(fallback: .devicePasscode))
            let _: [LAAuthenticationRequirement] = [.default, .biometry, .biometryCurrentSet]
            let _: LABiometryFallbackRequirement = .default
            right.tag = 7
            if right.state == .authorized || right.state == .notAuthorized || right.state == .authorizing || right.state == .unknown {}
            let authorize: (LARight) -> (String, @escaping ErrorHandler) -> Void = LARight.authorize(localizedReason:completion:)
            let check: (LARight) -> (@escaping ErrorHandler) -> Void = LARight.checkCanAuthorize(completion:)
            let deauthorize: (LARight) -> (@escaping @Sendable () -> Void) -> Void = LARight.deauthorize(completion:)
            _ = (authorize, check, deauthorize)
            try await right.authorize(localizedReason: "Sign in")
            try await right.checkCanAuthorize()
            await right.deauthorize()

            let store: LARightStore = LARightStore.shared
            let fetch: (LARightStore) -> (String, @escaping RightHandler) -> Void = LARightStore.right(forIdentifier:completion:)
            let save: (LARightStore) -> (LARight, String, @escaping RightHandler) -> Void = LARightStore.saveRight(_:identifier:completion:)
            let saveSecret: (LARightStore) -> (LARight, String, Data, @escaping RightHandler) -> Void =
                LARightStore.saveRight(_:identifier:secret:completion:)
            let remove: (LARightStore) -> (LAPersistedRight, @escaping ErrorHandler) -> Void = LARightStore.removeRight(_:completion:)
            let removeNamed: (LARightStore) -> (String, @escaping ErrorHandler) -> Void = LARightStore.removeRight(forIdentifier:completion:)
            let removeAll: (LARightStore) -> (@escaping ErrorHandler) -> Void = LARightStore.removeAllRights(completion:)
            _ = (fetch, save, saveSecret, remove, removeNamed, removeAll)
            let persisted: LAPersistedRight = try await store.saveRight(right, identifier: "com.example.login", secret: Data([1]))
            let _: LAPersistedRight = try await store.saveRight(LARight(), identifier: "com.example.other")
            let _: LAPersistedRight = try await store.right(forIdentifier: "com.example.login")
            try await store.removeRight(persisted)
            try await store.removeRight(forIdentifier: "com.example.other")
            try await store.removeAllRights()

            let secret: LASecret = persisted.secret
            let load: (LASecret) -> (@escaping DataHandler) -> Void = LASecret.loadData(completion:)
            _ = load
            let _: Data = try await secret.loadData()

            let key: LAPrivateKey = persisted.key
            let publicKey: LAPublicKey = key.publicKey
            let sign: (LAPrivateKey) -> (Data, SecKeyAlgorithm, @escaping DataHandler) -> Void = LAPrivateKey.sign(_:algorithm:completion:)
            let decrypt: (LAPrivateKey) -> (Data, SecKeyAlgorithm, @escaping DataHandler) -> Void = LAPrivateKey.decrypt(_:algorithm:completion:)
            let exchange: (LAPrivateKey) -> (Data, SecKeyAlgorithm, [AnyHashable: Any], @escaping DataHandler) -> Void =
                LAPrivateKey.exchangeKeys(publicKey:algorithm:parameters:completion:)
            let signAsync: (LAPrivateKey) -> (Data, SecKeyAlgorithm) async throws -> Data = LAPrivateKey.sign(_:algorithm:)
            let can: (LAPrivateKey) -> (SecKeyAlgorithm) -> Bool = LAPrivateKey.canSign(using:)
            let export: (LAPublicKey) -> (@escaping DataHandler) -> Void = LAPublicKey.exportBytes(completion:)
            let encrypt: (LAPublicKey) -> (Data, SecKeyAlgorithm, @escaping DataHandler) -> Void = LAPublicKey.encrypt(_:algorithm:completion:)
            let verify: (LAPublicKey) -> (Data, Data, SecKeyAlgorithm, @escaping ErrorHandler) -> Void =
                LAPublicKey.verify(_:signature:algorithm:completion:)
            _ = (sign, decrypt, exchange, signAsync, can, export, encrypt, verify)
            let challenge = Data("nonce".utf8)
            let signature: Data = try await key.sign(challenge, algorithm: .ecdsaSignatureMessageX962SHA256)
            try await publicKey.verify(challenge, signature: signature, algorithm: .ecdsaSignatureMessageX962SHA256)
            let sealed: Data = try await publicKey.encrypt(challenge, algorithm: .eciesEncryptionCofactorVariableIVX963SHA256AESGCM)
            let _: Data = try await key.decrypt(sealed, algorithm: .eciesEncryptionCofactorVariableIVX963SHA256AESGCM)
            let exported: Data = try await publicKey.exportBytes()
            let _: Data = try await key.exchangeKeys(publicKey: exported, algorithm: .ecdhKeyExchangeStandard, parameters: [:])
            let _: Data = try await key.exchangeKeys(publicKey: exported, algorithm: .ecdhKeyExchangeCofactorX963SHA256,
                                                     parameters: [SecKeyKeyExchangeParameter.requestedSize: 32,
                                                                  SecKeyKeyExchangeParameter.sharedInfo: Data()])
            let _: Bool = key.canSign(using: .ecdsaSignatureDigestX962SHA256) && key.canDecrypt(using: .eciesEncryptionStandardX963SHA256AESGCM)
                && key.canExchangeKeys(using: .ecdhKeyExchangeStandard) && publicKey.canEncrypt(using: .eciesEncryptionCofactorX963SHA256AESGCM)
                && publicKey.canVerify(using: .ecdsaSignatureMessageX962SHA256)
            let _: [SecKeyAlgorithm] = [.rsaSignatureMessagePSSSHA256, .rsaEncryptionOAEPSHA256AESGCM, .ecdsaSignatureRFC4754,
                                        .eciesEncryptionStandardVariableIVX963SHA256AESGCM, .ecdhKeyExchangeCofactor]
        }
        """

    /// Each Objective-C name and the Swift name Apple's overlay gives it.
    static let renamed = [
        ("LAEnvironmentObserver", "LAEnvironment.Observer"),
        ("LAEnvironmentState", "LAEnvironment.State"),
        ("LAEnvironmentMechanism", "LAEnvironment.Mechanism"),
        ("LAEnvironmentMechanismBiometry", "LAEnvironment.MechanismBiometry"),
        ("LAEnvironmentMechanismUserPassword", "LAEnvironment.MechanismUserPassword"),
        ("LAEnvironmentMechanismCompanion", "LAEnvironment.MechanismCompanion"),
    ]

    func test_the_probe_written_from_Apples_pages_compiles_with_no_diagnostic() throws {
        for mode in ["5", "6"] {
            let (status, diagnostics) = try typecheck(Self.environmentProbe, mode: mode)
            XCTAssertEqual(status, 0, "Swift \(mode): \(diagnostics)")
            XCTAssertEqual(diagnostics, [], "Swift \(mode)")
        }
    }

    func test_the_rest_of_the_surface_written_from_Apples_pages_compiles_with_no_diagnostic() throws {
        for mode in ["5", "6"] {
            let (status, diagnostics) = try typecheck(Self.surfaceProbe, mode: mode)
            XCTAssertEqual(status, 0, "Swift \(mode): \(diagnostics)")
            XCTAssertEqual(diagnostics, [], "Swift \(mode)")
        }
    }

    func test_the_Objective_C_names_are_renamed_as_in_Apples_overlay() throws {
        for (objectiveC, swift) in Self.renamed {
            let (status, diagnostics) = try typecheck("import LocalAuthentication\nlet x: \(objectiveC)? = nil\n", mode: "5")
            XCTAssertNotEqual(status, 0, objectiveC)
            XCTAssertTrue(diagnostics.contains { $0.contains("'\(objectiveC)' has been renamed to '\(swift)'") },
                          "\(objectiveC): \(diagnostics)")
        }
    }

    /// swiftc's exit status and its warning and error lines for `source`.
    private func typecheck(_ source: String, mode: String) throws -> (Int32, [String]) {
        let directory = TemporaryDirectory()
        let file = directory.path + "/probe.swift"
        try source.write(toFile: file, atomically: true, encoding: .utf8)
        let (status, output) = try SeedVerbatimTests.typecheck(file, mode: mode, moduleName: "probe")
        let diagnostics = output.split(separator: "\n").map(String.init)
            .filter { $0.hasPrefix(file) && ($0.contains(": warning:") || $0.contains(": error:")) }
        return (status, diagnostics)
    }
}
