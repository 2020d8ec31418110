// Apple's `LAAuthenticationRequirement` and `LABiometryFallbackRequirement`
// (iOS 16 / macOS 13): what authorizing an LARight asks of the user. Each
// maps to one requirement name of the wire (PROTOCOL.md v1.1) and to the
// policy its authorization evaluates:
//   .default                           default                     owner (biometry, then passcode)
//   .biometry, .biometry(fallback: .default)
//                                      biometry                    biometrics
//   .biometry(fallback: .devicePasscode)
//                                      biometry-passcode-fallback  owner
//   .biometryCurrentSet                biometry-current-set        biometrics, and the secret
//                                                                  only while the enrolled set
//                                                                  is the one of the save

import Foundation

@available(macOS 13.0, iOS 16.0, *)
public final class LABiometryFallbackRequirement: NSObject, @unchecked Sendable {
    let allowsPasscode: Bool

    private init(allowsPasscode: Bool) {
        self.allowsPasscode = allowsPasscode
    }

    /// No fallback beyond what biometry itself offers.
    public static var `default`: LABiometryFallbackRequirement { LABiometryFallbackRequirement(allowsPasscode: false) }
    /// The device passcode when biometry fails or is unavailable.
    public static var devicePasscode: LABiometryFallbackRequirement { LABiometryFallbackRequirement(allowsPasscode: true) }
}

@available(macOS 13.0, iOS 16.0, *)
public final class LAAuthenticationRequirement: NSObject, @unchecked Sendable {
    /// The wire name (`requirement=`).
    let wireName: String

    init(wireName: String) {
        self.wireName = wireName
    }

    /// Biometry or the device passcode.
    public static var `default`: LAAuthenticationRequirement { LAAuthenticationRequirement(wireName: "default") }
    /// Biometry only.
    public static var biometry: LAAuthenticationRequirement { LAAuthenticationRequirement(wireName: "biometry") }
    /// Biometry, and only with the enrolled set of the moment the right was saved.
    public static var biometryCurrentSet: LAAuthenticationRequirement {
        LAAuthenticationRequirement(wireName: "biometry-current-set")
    }

    /// Biometry with the given fallback.
    public static func biometry(fallback: LABiometryFallbackRequirement) -> LAAuthenticationRequirement {
        LAAuthenticationRequirement(wireName: fallback.allowsPasscode ? "biometry-passcode-fallback" : "biometry")
    }

    /// The policy an authorization evaluates.
    var policy: LAPolicy {
        wireName == "default" || wireName == "biometry-passcode-fallback"
            ? .deviceOwnerAuthentication : .deviceOwnerAuthenticationWithBiometrics
    }

    public override func isEqual(_ object: Any?) -> Bool {
        (object as? LAAuthenticationRequirement)?.wireName == wireName
    }

    public override var hash: Int { wireName.hashValue }
}
