// Seed 000, verbatim: the article's code (its one copy), byte for byte after
// this header, compiled in Swift 5 mode and run by SeedRunTests against a live
// daemon; SeedVerbatimTests type-checks this file and pins its diagnostics.
import LocalAuthentication

enum BiometryCheckResult {
    case available(LABiometryType)
    case notAvailable(LAError)
    case notEnrolled(LAError)
    case locked(LAError)
    case unknown(Error)
}

func checkBiometrySupport() -> BiometryCheckResult {
    let context = LAContext()
    var error: NSError?
    let canEvaluate = context.canEvaluatePolicy(
        .deviceOwnerAuthenticationWithBiometrics,
        error: &error
    )
    if canEvaluate {
        if #available(iOS 11.0, *) {
            return .available(context.biometryType)
        } else {
            return .available(.touchID)
        }
    } else {
        guard let laError = error as? LAError else {
            return .unknown(error ?? NSError(domain: "unknown", code: -1))
        }
        switch laError.code {
        case .biometryNotAvailable, .touchIDNotAvailable:
            return .notAvailable(laError)
        case .biometryNotEnrolled, .touchIDNotEnrolled:
            return .notEnrolled(laError)
        case .biometryLockout, .touchIDLockout:
            return .locked(laError)
        default:
            return .unknown(laError)
        }
    }
}

func isBiometryHardwareSupported() -> Bool {
    let context = LAContext()
    var error: NSError?
    let canEvaluate = context.canEvaluatePolicy(
        .deviceOwnerAuthenticationWithBiometrics,
        error: &error
    )
    if canEvaluate { return true }
    guard let laError = error as? LAError else { return false }
    // 只有未录入和被锁定才算硬件支持
    switch laError.code {
    case .biometryNotEnrolled, .touchIDNotEnrolled, .biometryLockout, .touchIDLockout:
        return true
    default:
        return false
    }
}

@available(iOS 11.0, *)
func getBiometryTypeName() -> String {
    let context = LAContext()
    var error: NSError?
    guard context.canEvaluatePolicy(
        .deviceOwnerAuthenticationWithBiometrics,
        error: &error
    ) else {
        switch context.biometryType {
        case .faceID: return "Face ID"
        case .touchID: return "Touch ID"
        case .none: return "无生物识别"
        @unknown default: return "未知类型"
        }
    }
    switch context.biometryType {
    case .faceID: return "Face ID"
    case .touchID: return "Touch ID"
    case .none: return "无生物识别"
    @unknown default: return "未知类型"
    }
}

func authenticateWithBiometrics(
    reason: String,
    completion: @escaping (Bool, Error?) -> Void
) {
    let context = LAContext()
    context.localizedFallbackTitle = "使用密码"
    context.localizedCancelTitle = "取消"
    var error: NSError?
    let canEvaluate = context.canEvaluatePolicy(
        .deviceOwnerAuthentication,
        error: &error
    )
    guard canEvaluate else {
        completion(false, error)
        return
    }
    context.evaluatePolicy(
        .deviceOwnerAuthentication,
        localizedReason: reason
    ) { success, evalError in
        DispatchQueue.main.async {
            completion(success, evalError)
        }
    }
}

final class BiometryHelper {
    enum BiometryType {
        case none, touchID, faceID, unknown
    }
    enum CheckResult {
        case available(BiometryType)
        case notEnrolled(BiometryType)
        case locked(BiometryType)
        case notSupported
        case error(Error)
    }
    static func check() -> CheckResult {
        let context = LAContext()
        var error: NSError?
        let canEvaluate = context.canEvaluatePolicy(
            .deviceOwnerAuthenticationWithBiometrics,
            error: &error
        )
        let type = resolveType(context: context)
        if canEvaluate {
            return .available(type)
        }
        guard let laError = error as? LAError else {
            return .error(error ?? NSError(domain: "biometry", code: -1))
        }
        switch laError.code {
        case .biometryNotEnrolled, .touchIDNotEnrolled:
            return .notEnrolled(type)
        case .biometryLockout, .touchIDLockout:
            return .locked(type)
        case .biometryNotAvailable, .touchIDNotAvailable:
            return .notSupported
        default:
            return .error(laError)
        }
    }
    private static func resolveType(context: LAContext) -> BiometryType {
        if #available(iOS 11.0, *) {
            switch context.biometryType {
            case .faceID: return .faceID
            case .touchID: return .touchID
            case .none: return .none
            @unknown default: return .unknown
            }
        } else {
            return .touchID
        }
    }
    static func authenticate(
        reason: String,
        completion: @escaping (Bool, Error?) -> Void
    ) {
        let context = LAContext()
        context.localizedFallbackTitle = "使用密码"
        context.localizedCancelTitle = "取消"
        var error: NSError?
        guard context.canEvaluatePolicy(
            .deviceOwnerAuthentication,
            error: &error
        ) else {
            DispatchQueue.main.async {
                completion(false, error)
            }
            return
        }
        context.evaluatePolicy(
            .deviceOwnerAuthentication,
            localizedReason: reason
        ) { success, evalError in
            DispatchQueue.main.async {
                completion(success, evalError)
            }
        }
    }
}
