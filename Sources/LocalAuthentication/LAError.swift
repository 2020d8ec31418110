// Apple's `LAError` (LAError.h): a struct wrapping an NSError of the domain
// `com.apple.LocalAuthentication`, with `LAError.Code` holding the SDK's raw
// values and the deprecated touchID*/watch* spellings as aliases.
//
// Bridging (RECIPES.md, "Apple's error bridging on Linux"): conforming to
// `_BridgedStoredNSError` *and* `_ObjectiveCBridgeable` with NSError as the
// Objective-C type is what makes `error as? LAError`, `catch LAError.userCancel`
// and `(error as NSError).code` behave on Linux as they do on iOS.
//
// The deprecated aliases carry Apple-platform `@available` attributes only:
// iOS code that still names them compiles here without warnings, exactly as
// it compiled for its iOS deployment target.

import Foundation
internal import LocalAuthCore

/// Apple's `LAErrorDomain`.
public let LAErrorDomain = "com.apple.LocalAuthentication"

/// Linux extra: the `userInfo` key holding the seconds until passcode entry
/// is allowed again (the daemon's `retry-after=`), as an `Int`.
public let LAErrorRetryAfterKey = "LARetryAfter"
/// Linux extra: the `userInfo` key holding the daemon's `reason=` (for example
/// `timeout`, `passcode-required`, `daemon-unreachable`), as a `String`.
public let LAErrorReasonKey = "LAReason"

public struct LAError: _BridgedStoredNSError, _ObjectiveCBridgeable, Hashable, Sendable {
    public let _nsError: NSError

    public init(_nsError error: NSError) {
        precondition(error.domain == LAErrorDomain, "LAError wraps only \(LAErrorDomain) errors")
        _nsError = error
    }

    public static var errorDomain: String { LAErrorDomain }
    public static var _nsErrorDomain: String { LAErrorDomain }

    /// The code; an unknown raw value (a newer daemon) reads as `.authenticationFailed`.
    public var code: Code { Code(rawValue: _nsError.code) ?? .authenticationFailed }

    public enum Code: Int, _ErrorCodeProtocol, Sendable, Hashable, CaseIterable {
        public typealias _ErrorType = LAError

        case authenticationFailed = -1
        case userCancel = -2
        case userFallback = -3
        case systemCancel = -4
        case passcodeNotSet = -5
        case biometryNotAvailable = -6
        case biometryNotEnrolled = -7
        case biometryLockout = -8
        case appCancel = -9
        case invalidContext = -10
        case companionNotAvailable = -11
        case biometryNotPaired = -12
        case biometryDisconnected = -13
        case invalidDimensions = -14
        case notInteractive = -1004

        @available(iOS, introduced: 8.0, deprecated: 11.0, renamed: "biometryNotAvailable")
        @available(macOS, introduced: 10.10, deprecated: 10.13, renamed: "biometryNotAvailable")
        public static var touchIDNotAvailable: Code { .biometryNotAvailable }
        @available(iOS, introduced: 8.0, deprecated: 11.0, renamed: "biometryNotEnrolled")
        @available(macOS, introduced: 10.10, deprecated: 10.13, renamed: "biometryNotEnrolled")
        public static var touchIDNotEnrolled: Code { .biometryNotEnrolled }
        @available(iOS, introduced: 9.0, deprecated: 11.0, renamed: "biometryLockout")
        @available(macOS, introduced: 10.11, deprecated: 10.13, renamed: "biometryLockout")
        public static var touchIDLockout: Code { .biometryLockout }
        @available(macOS, introduced: 10.15, deprecated: 15.0, renamed: "companionNotAvailable")
        public static var watchNotAvailable: Code { .companionNotAvailable }

        /// The modern name, as on the wire (`biometryLockout`, never `touchIDLockout`):
        /// the core's one table of names, so the client and the daemon cannot disagree.
        public var name: String { LAErrorCode(rawValue: rawValue)?.wireName ?? String(rawValue) }
    }

    // Apple's static members: `LAError.userCancel` is an `LAError.Code`, so
    // `catch LAError.userCancel` and `LAError.userCancel.rawValue` both work.
    public static var authenticationFailed: Code { .authenticationFailed }
    public static var userCancel: Code { .userCancel }
    public static var userFallback: Code { .userFallback }
    public static var systemCancel: Code { .systemCancel }
    public static var passcodeNotSet: Code { .passcodeNotSet }
    public static var biometryNotAvailable: Code { .biometryNotAvailable }
    public static var biometryNotEnrolled: Code { .biometryNotEnrolled }
    public static var biometryLockout: Code { .biometryLockout }
    public static var appCancel: Code { .appCancel }
    public static var invalidContext: Code { .invalidContext }
    public static var companionNotAvailable: Code { .companionNotAvailable }
    public static var biometryNotPaired: Code { .biometryNotPaired }
    public static var biometryDisconnected: Code { .biometryDisconnected }
    public static var invalidDimensions: Code { .invalidDimensions }
    public static var notInteractive: Code { .notInteractive }

    @available(iOS, introduced: 8.0, deprecated: 11.0, renamed: "biometryNotAvailable")
    @available(macOS, introduced: 10.10, deprecated: 10.13, renamed: "biometryNotAvailable")
    public static var touchIDNotAvailable: Code { .biometryNotAvailable }
    @available(iOS, introduced: 8.0, deprecated: 11.0, renamed: "biometryNotEnrolled")
    @available(macOS, introduced: 10.10, deprecated: 10.13, renamed: "biometryNotEnrolled")
    public static var touchIDNotEnrolled: Code { .biometryNotEnrolled }
    @available(iOS, introduced: 9.0, deprecated: 11.0, renamed: "biometryLockout")
    @available(macOS, introduced: 10.11, deprecated: 10.13, renamed: "biometryLockout")
    public static var touchIDLockout: Code { .biometryLockout }
    @available(macOS, introduced: 10.15, deprecated: 15.0, renamed: "companionNotAvailable")
    public static var watchNotAvailable: Code { .companionNotAvailable }

    // MARK: Bridging to and from NSError

    public typealias _ObjectiveCType = NSError

    public func _bridgeToObjectiveC() -> NSError { _nsError }

    public static func _forceBridgeFromObjectiveC(_ source: NSError, result: inout LAError?) {
        guard _conditionallyBridgeFromObjectiveC(source, result: &result) else {
            fatalError("cannot bridge an NSError of domain \(source.domain) to LAError")
        }
    }

    public static func _conditionallyBridgeFromObjectiveC(_ source: NSError, result: inout LAError?) -> Bool {
        guard source.domain == LAErrorDomain else { return false }
        result = LAError(_nsError: source)
        return true
    }

    public static func _unconditionallyBridgeFromObjectiveC(_ source: NSError?) -> LAError {
        var result: LAError?
        _forceBridgeFromObjectiveC(source!, result: &result)
        return result!
    }
}

extension LAError {
    /// An LAError with the daemon's message as `localizedDescription`.
    init(_ code: Code, _ message: String, retryAfter: Int? = nil, reason: String? = nil, underlying: NSError? = nil) {
        var userInfo: [String: Any] = [NSLocalizedDescriptionKey: message]
        if let retryAfter { userInfo[LAErrorRetryAfterKey] = retryAfter }
        if let reason { userInfo[LAErrorReasonKey] = reason }
        if let underlying { userInfo[NSUnderlyingErrorKey] = underlying }
        self.init(_nsError: NSError(domain: LAErrorDomain, code: code.rawValue, userInfo: userInfo))
    }

    /// Linux extra: the seconds until passcode entry is allowed again, when
    /// the daemon said so (`retry-after=`).
    public var retryAfter: Int? { _nsError.userInfo[LAErrorRetryAfterKey] as? Int }
    /// Linux extra: the daemon's `reason=` (`timeout`, `passcode-required`, ...).
    public var reason: String? { _nsError.userInfo[LAErrorReasonKey] as? String }
}
