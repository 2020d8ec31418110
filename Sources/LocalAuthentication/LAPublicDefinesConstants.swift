// The `#define`s of Apple's LAPublicDefines.h, as Swift imports them: each
// macro is a global `Int32` (`kLAErrorDomain` a `String`), with the SDK's
// values (iOS 18 / macOS 15 header; the companion-vision constant is the
// newer SDKs'). Code written against the C constants, such as
// `case Int(kLAErrorUserCancel):`, compiles and means the same here. The
// typed enums (LAPolicy, LAError.Code, LABiometryType, LACompanionType,
// LACredentialType, LAAccessControlOperation) carry the same numbers, and
// APIShapeTests checks every pair.

// Policies
public let kLAPolicyDeviceOwnerAuthenticationWithBiometrics: Int32 = 1
public let kLAPolicyDeviceOwnerAuthentication: Int32 = 2
public let kLAPolicyDeviceOwnerAuthenticationWithWatch: Int32 = 3
public let kLAPolicyDeviceOwnerAuthenticationWithCompanion: Int32 = kLAPolicyDeviceOwnerAuthenticationWithWatch
public let kLAPolicyDeviceOwnerAuthenticationWithBiometricsOrWatch: Int32 = 4
public let kLAPolicyDeviceOwnerAuthenticationWithBiometricsOrCompanion: Int32 =
    kLAPolicyDeviceOwnerAuthenticationWithBiometricsOrWatch
public let kLAPolicyDeviceOwnerAuthenticationWithWristDetection: Int32 = 5

// Options
public let kLAOptionUserFallback: Int32 = 1
public let kLAOptionAuthenticationReason: Int32 = 2

// Credential types
public let kLACredentialTypePasscode: Int32 = -1
public let kLACredentialTypePassphrase: Int32 = -2
public let kLACredentialCTKPIN: Int32 = -3
public let kLACredentialSmartCardPIN: Int32 = -3
public let kLACredentialTypeApplicationPassword: Int32 = 0

// Access control operations
public let kLAAccessControlOperationCreateItem: Int32 = 0
public let kLAAccessControlOperationUseItem: Int32 = 1
public let kLAAccessControlOperationCreateKey: Int32 = 2
public let kLAAccessControlOperationUseKeySign: Int32 = 3
public let kLAAccessControlOperationUseKeyDecrypt: Int32 = 4
public let kLAAccessControlOperationUseKeyKeyExchange: Int32 = 5

// Error codes
public let kLAErrorAuthenticationFailed: Int32 = -1
public let kLAErrorUserCancel: Int32 = -2
public let kLAErrorUserFallback: Int32 = -3
public let kLAErrorSystemCancel: Int32 = -4
public let kLAErrorPasscodeNotSet: Int32 = -5
public let kLAErrorTouchIDNotAvailable: Int32 = -6
public let kLAErrorTouchIDNotEnrolled: Int32 = -7
public let kLAErrorTouchIDLockout: Int32 = -8
public let kLAErrorAppCancel: Int32 = -9
public let kLAErrorInvalidContext: Int32 = -10
public let kLAErrorWatchNotAvailable: Int32 = -11
public let kLAErrorBiometryNotPaired: Int32 = -12
public let kLAErrorBiometryDisconnected: Int32 = -13
public let kLAErrorInvalidDimensions: Int32 = -14
public let kLAErrorNotInteractive: Int32 = -1004
public let kLAErrorBiometryNotAvailable: Int32 = kLAErrorTouchIDNotAvailable
public let kLAErrorBiometryNotEnrolled: Int32 = kLAErrorTouchIDNotEnrolled
public let kLAErrorBiometryLockout: Int32 = kLAErrorTouchIDLockout
public let kLAErrorCompanionNotAvailable: Int32 = kLAErrorWatchNotAvailable

// Error domain
public let kLAErrorDomain = "com.apple.LocalAuthentication"

// Biometry types
public let kLABiometryTypeNone: Int32 = 0
public let kLABiometryTypeTouchID: Int32 = 1 << 0
public let kLABiometryTypeFaceID: Int32 = 1 << 1
public let kLABiometryTypeOpticID: Int32 = 1 << 2

// Companion types
public let kLACompanionTypeNone: Int32 = 0
public let kLACompanionTypeWatch: Int32 = 1 << 0
public let kLACompanionTypeMac: Int32 = 1 << 1
public let kLACompanionTypeVision: Int32 = 1 << 2

/// Apple's `LAAccessControlOperation` (LAContext.h). Keychain access control
/// (`evaluateAccessControl`) needs the Security framework, which Linux lacks:
/// the type is here so that code naming it compiles.
public enum LAAccessControlOperation: Int, Sendable, Hashable, CaseIterable {
    case createItem = 0
    case useItem = 1
    case createKey = 2
    case useKeySign = 3
    case useKeyDecrypt = 4
    case useKeyKeyExchange = 5
}
