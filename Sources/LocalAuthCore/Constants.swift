// The constants of SEMANTICS §2, with Apple's raw values from LAPublicDefines.h
// and LAError.h. Every value that reaches the wire or the log has exactly one
// name (the modern one) and a round trip through it is tested.

/// Apple's `LAPolicy`.
public enum Policy: Int, Sendable, CaseIterable, Hashable {
    case biometrics = 1
    case owner = 2
    case companion = 3
    case biometricsOrCompanion = 4
    case wrist = 5

    /// The short wire name (`policy=owner`).
    public var wireName: String {
        switch self {
        case .biometrics: return "biometrics"
        case .owner: return "owner"
        case .companion: return "companion"
        case .biometricsOrCompanion: return "biometrics-or-companion"
        case .wrist: return "wrist"
        }
    }

    /// Accepts the wire name, the number, or Apple's long Swift/ObjC names.
    public init?(wireName: String) {
        var name = wireName
        guard let policy = name.withUTF8(Policy.named) else { return nil }
        self = policy
    }

    /// The same, from UTF-8 bytes (a request's `policy=` read in place).
    public init?(wireName utf8: UnsafeBufferPointer<UInt8>) {
        guard let policy = Policy.named(utf8) else { return nil }
        self = policy
    }

    /// Every accepted spelling with its policy.
    static let spellings: [(String, Policy)] = [
        ("biometrics", .biometrics), ("1", .biometrics), ("deviceOwnerAuthenticationWithBiometrics", .biometrics),
        ("LAPolicyDeviceOwnerAuthenticationWithBiometrics", .biometrics),
        ("owner", .owner), ("2", .owner), ("deviceOwnerAuthentication", .owner),
        ("LAPolicyDeviceOwnerAuthentication", .owner),
        ("companion", .companion), ("3", .companion), ("deviceOwnerAuthenticationWithCompanion", .companion),
        ("deviceOwnerAuthenticationWithWatch", .companion),
        ("biometrics-or-companion", .biometricsOrCompanion), ("4", .biometricsOrCompanion),
        ("deviceOwnerAuthenticationWithBiometricsOrCompanion", .biometricsOrCompanion),
        ("deviceOwnerAuthenticationWithBiometricsOrWatch", .biometricsOrCompanion),
        ("wrist", .wrist), ("5", .wrist), ("deviceOwnerAuthenticationWithWristDetection", .wrist),
    ]

    /// The spellings packed into one byte array, with (start, count,
    /// policy) entries: a lookup compares lengths, then bytes, without a
    /// String or a retain (every can-evaluate names its policy).
    private static let packed: (bytes: [UInt8], entries: [(start: Int, count: Int, policy: Policy)]) = {
        var bytes: [UInt8] = []
        var entries: [(start: Int, count: Int, policy: Policy)] = []
        for (name, policy) in spellings {
            entries.append((bytes.count, name.utf8.count, policy))
            bytes += Array(name.utf8)
        }
        return (bytes, entries)
    }()

    private static func named(_ utf8: UnsafeBufferPointer<UInt8>) -> Policy? {
        // The short wire names (what clients send) first, without the table:
        // a static `let` is reached through a lazy-initialization check and
        // retained, and the scan compares up to 19 entries.
        if let base = utf8.baseAddress {
            switch utf8.count {
            case 1:
                switch base[0] {
                case UInt8(ascii: "1"): return .biometrics
                case UInt8(ascii: "2"): return .owner
                case UInt8(ascii: "3"): return .companion
                case UInt8(ascii: "4"): return .biometricsOrCompanion
                case UInt8(ascii: "5"): return .wrist
                default: return nil
                }
            case 5:
                if matches(base, "owner") { return .owner }
                if matches(base, "wrist") { return .wrist }
            case 9:
                if matches(base, "companion") { return .companion }
            case 10:
                if matches(base, "biometrics") { return .biometrics }
            default:
                break
            }
        }
        return packed.bytes.withUnsafeBufferPointer { all in
            for entry in packed.entries where entry.count == utf8.count {
                var index = 0
                while index < entry.count, all[entry.start + index] == utf8[index] { index += 1 }
                if index == entry.count { return entry.policy }
            }
            return nil
        }
    }

    /// Whether the bytes at `base` are `name` (the caller checked the length).
    @inline(__always)
    private static func matches(_ base: UnsafePointer<UInt8>, _ name: StaticString) -> Bool {
        memcmpEqual(base, name.utf8Start, name.utf8CodeUnitCount)
    }
}

@inline(__always)
private func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    var index = 0
    while index < count, a[index] == b[index] { index += 1 }
    return index == count
}

/// Apple's `LABiometryType`.
public enum BiometryType: Int, Sendable, CaseIterable, Hashable {
    case none = 0
    case touchID = 1
    case faceID = 2
    case opticID = 4

    public var wireName: String {
        switch self {
        case .none: return "none"
        case .touchID: return "touchID"
        case .faceID: return "faceID"
        case .opticID: return "opticID"
        }
    }

    public init?(wireName: String) {
        guard let match = BiometryType.allCases.first(where: { $0.wireName == wireName }) else { return nil }
        self = match
    }
}

/// Apple's `LAError.Code`. Deprecated aliases share a raw value with their
/// modern name; the wire and the log always use the modern name.
public enum LAErrorCode: Int, Sendable, CaseIterable, Hashable {
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

    public static let touchIDNotAvailable = LAErrorCode.biometryNotAvailable
    public static let touchIDNotEnrolled = LAErrorCode.biometryNotEnrolled
    public static let touchIDLockout = LAErrorCode.biometryLockout
    public static let watchNotAvailable = LAErrorCode.companionNotAvailable

    public var wireName: String {
        switch self {
        case .authenticationFailed: return "authenticationFailed"
        case .userCancel: return "userCancel"
        case .userFallback: return "userFallback"
        case .systemCancel: return "systemCancel"
        case .passcodeNotSet: return "passcodeNotSet"
        case .biometryNotAvailable: return "biometryNotAvailable"
        case .biometryNotEnrolled: return "biometryNotEnrolled"
        case .biometryLockout: return "biometryLockout"
        case .appCancel: return "appCancel"
        case .invalidContext: return "invalidContext"
        case .companionNotAvailable: return "companionNotAvailable"
        case .biometryNotPaired: return "biometryNotPaired"
        case .biometryDisconnected: return "biometryDisconnected"
        case .invalidDimensions: return "invalidDimensions"
        case .notInteractive: return "notInteractive"
        }
    }

    public init?(wireName: String) {
        guard let match = LAErrorCode.allCases.first(where: { $0.wireName == wireName }) else { return nil }
        self = match
    }

    /// The message sent with the error when no more specific one applies;
    /// worded after Apple's own localizedDescription strings.
    public var defaultMessage: String {
        switch self {
        case .authenticationFailed: return "Authentication failed."
        case .userCancel: return "Canceled by user."
        case .userFallback: return "Fallback authentication mechanism selected."
        case .systemCancel: return "Canceled by system."
        case .passcodeNotSet: return "Passcode not set."
        case .biometryNotAvailable: return "Biometry is not available on this device."
        case .biometryNotEnrolled: return "No identities are enrolled."
        case .biometryLockout: return "Biometry is locked out."
        case .appCancel: return "Canceled by application."
        case .invalidContext: return "Context has been invalidated."
        case .companionNotAvailable: return "No paired companion device nearby."
        case .biometryNotPaired: return "Biometric accessory not paired."
        case .biometryDisconnected: return "Biometric accessory not connected."
        case .invalidDimensions: return "Invalid dimensions."
        case .notInteractive: return "User interaction is required."
        }
    }
}

/// The LAError domain string.
public let laErrorDomain = "com.apple.LocalAuthentication"
