// The constants of Apple's LAPublicDefines.h / LAContext.h with the raw
// values of the SDK (SEMANTICS.md §2): what iOS code writes compiles here
// and means the same on the wire. Apple-platform-only names are declared too,
// so that code written for macOS or watchOS compiles; the daemon answers them
// as SEMANTICS.md S-18 says (companion: companionNotAvailable; wrist: an error).

// On Apple platforms `import LocalAuthentication` brings Foundation (NSError,
// DispatchQueue) with it; iOS files often import nothing else.
@_exported import Foundation
internal import LocalAuthCore

/// Foundation on Linux has no `NSErrorPointer`; this one lets iOS callers
/// write `var error: NSError?; context.canEvaluatePolicy(p, error: &error)`
/// (or `error: nil`) unchanged.
public typealias NSErrorPointer = UnsafeMutablePointer<NSError?>?

/// Apple's `LATouchIDAuthenticationMaximumAllowableReuseDuration`: 5 minutes.
public let LATouchIDAuthenticationMaximumAllowableReuseDuration: TimeInterval = 300

/// Apple's `LAPolicy` (raw values of LAPublicDefines.h).
public enum LAPolicy: Int, Sendable, Hashable, CaseIterable {
    /// Biometry only; fails when biometry is unavailable, unenrolled or locked out.
    case deviceOwnerAuthenticationWithBiometrics = 1
    /// Biometry first when usable, then the device passcode.
    case deviceOwnerAuthentication = 2
    /// A paired companion device (macOS). No companions exist here.
    case deviceOwnerAuthenticationWithCompanion = 3
    /// Biometry or a companion (macOS); behaves as biometrics here.
    case deviceOwnerAuthenticationWithBiometricsOrCompanion = 4
    /// Wrist detection (watchOS); refused by the daemon.
    case deviceOwnerAuthenticationWithWristDetection = 5

    @available(macOS, introduced: 10.15, deprecated: 15.0, renamed: "deviceOwnerAuthenticationWithCompanion")
    public static var deviceOwnerAuthenticationWithWatch: LAPolicy { .deviceOwnerAuthenticationWithCompanion }

    @available(macOS, introduced: 10.15, deprecated: 15.0, renamed: "deviceOwnerAuthenticationWithBiometricsOrCompanion")
    public static var deviceOwnerAuthenticationWithBiometricsOrWatch: LAPolicy {
        .deviceOwnerAuthenticationWithBiometricsOrCompanion
    }

    /// The number PROTOCOL.md accepts for `policy=`.
    var wireValue: String { String(rawValue) }
}

/// Apple's `LABiometryType` (raw values of LAContext.h).
public enum LABiometryType: Int, Sendable, Hashable, CaseIterable {
    case none = 0
    case touchID = 1
    case faceID = 2
    case opticID = 4

    /// Apple's first spelling of `.none` (iOS 11.0), deprecated in 11.2.
    @available(iOS, introduced: 11.0, deprecated: 11.2, renamed: "none")
    @available(macOS, introduced: 10.13.2, deprecated: 10.13.2, renamed: "none")
    public static var LABiometryNone: LABiometryType { .none }

    /// `none`, `touchID`, `faceID`, `opticID` as on the wire; unknown names are `.none`.
    init(wireName: String?) {
        let type = wireName.flatMap { BiometryType(wireName: $0) } ?? .none
        self = LABiometryType(rawValue: type.rawValue) ?? .none
    }
}
