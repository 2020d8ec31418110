// The seed articles' helper code (../shared/seeds/), copied as written minus
// UIKit, compiled in this package's Swift 6 language mode. The only edits are
// marked `// Swift 6:` (the same edits the code needs on iOS under Swift 6;
// none concerns LocalAuthentication) and `// opticID:` (the same warning
// Apple's iOS 17 SDK gives). `SeedVerbatimTests` compiles the untouched
// text in Swift 5 mode against this module.
import Dispatch
import Foundation
import LocalAuthentication

// MARK: - Seed 000: checkBiometrySupport() and BiometryHelper

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
            case .opticID: return .unknown  // opticID: without it Swift warns "switch must be exhaustive"
            @unknown default: return .unknown
            }
        } else {
            return .touchID
        }
    }

    static func authenticate(
        reason: String,
        completion: @escaping @Sendable (Bool, Error?) -> Void  // Swift 6: @Sendable
    ) {
        let context = LAContext()
        context.localizedFallbackTitle = "使用密码"
        context.localizedCancelTitle = "取消"
        var error: NSError?
        guard context.canEvaluatePolicy(
            .deviceOwnerAuthentication,
            error: &error
        ) else {
            DispatchQueue.main.async { [error] in  // Swift 6: [error]
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

// MARK: - Seed 001: ZTBiometricManager (a delegate, every code compared by raw value)

/// 生物识别代理
public protocol ZTBiometricDelegate: NSObject {
    /// 代理方法
    func handleBiometricResult(result: ZTBiometricResult, type: ZTBiometricType)
}

/// 生物识别结果枚举
public enum ZTBiometricResult {
    case success
    case versionNotSupport
    case deviceNotSupport
    case authenticationFailed
    case userCancel
    case userFallback
    case systemCancel
    case passcodeNotSet
    case biometryNotAvailable
    case biometryNotEnrolled
    case biometryLockout
    case touchIDLockout
    case appCancel
    case invalidContext
    case touchIdNotAvailable
    case touchIDNotEnrolled
}

/// 生物识别类型
public enum ZTBiometricType {
    case touchID  // 指纹识别
    case faceID  // 面容识别
    case none  // 无 || 不支持
}

/// Not in the article (a UIKit screen-shape check); a Linux machine has no notch.
enum ZTTool {
    static func isBangScreen() -> Bool { false }
}

// The article shows the class body only; the declaration line is ours. The
// iOS 9 and iOS 8 branches of ZTBiometricErrorHandle are folded into the last
// `else` (`#available(iOS 11.0, *)` is true here, so they never run); the
// verbatim test compiles them.
public final class ZTBiometricManager: NSObject, @unchecked Sendable {  // Swift 6: @unchecked Sendable
    /// 单例
    static let shared = ZTBiometricManager()
    let ZTContext: LAContext = LAContext()
    public weak var resultDelegate: ZTBiometricDelegate?
    public var localizedFallbackTitle = "输入密码"
    public var localizedReason = "西门吸雪需进行生物验证"

    /// 判断生物识别是否可用
    public func biometricAvaliable() -> Bool {
        if #available(iOS 8.0, *) {
            var error: NSError?
            return ZTContext.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error)
        } else {
            return false
        }
    }

    /// 获取生物识别类型
    public func biometricType() -> ZTBiometricType {
        if #available(iOS 8.0, *) {
            if ZTTool.isBangScreen() { return .faceID } else { return .touchID }
        } else {
            return .none
        }
    }

    /// 唤起生物识别
    public func evokeBiometric() {
        var error: NSError?
        guard #available(iOS 8.0, *) else { resultDelegate?.handleBiometricResult(result: .versionNotSupport, type: biometricType()); return }  // 版本过低

        guard ZTContext.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error) else { ZTBiometricErrorHandle(errorCode: error?.code ?? 0, context: ZTContext); return }

        ZTContext.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: localizedReason, reply: { (success, evaluateError) in
            DispatchQueue.main.async { [self] in
                if success {
                    self.resultDelegate?.handleBiometricResult(result: .success, type: biometricType())
                } else {
                    if let error = evaluateError as NSError? {
                        self.ZTBiometricErrorHandle(errorCode: error.code, context: ZTContext)
                    }
                }
            }
        })
    }

    /// 私有方法：生物识别错误信息回调
    private func ZTBiometricErrorHandle(errorCode: Int, context: LAContext) {
        if errorCode == LAError.authenticationFailed.rawValue {
            resultDelegate?.handleBiometricResult(result: .authenticationFailed, type: biometricType())
        } else if errorCode == LAError.userCancel.rawValue {
            resultDelegate?.handleBiometricResult(result: .userCancel, type: biometricType())
        } else if errorCode == LAError.userFallback.rawValue {
            resultDelegate?.handleBiometricResult(result: .userFallback, type: biometricType())
        } else if errorCode == LAError.systemCancel.rawValue {
            resultDelegate?.handleBiometricResult(result: .systemCancel, type: biometricType())
        } else if errorCode == LAError.passcodeNotSet.rawValue {
            resultDelegate?.handleBiometricResult(result: .passcodeNotSet, type: biometricType())
        } else {
            if #available(iOS 11.0, *) {
                if errorCode == LAError.biometryNotAvailable.rawValue {
                    resultDelegate?.handleBiometricResult(result: .biometryNotAvailable, type: biometricType())
                } else if errorCode == LAError.biometryNotEnrolled.rawValue {
                    resultDelegate?.handleBiometricResult(result: .biometryNotEnrolled, type: biometricType())
                } else if errorCode == LAError.biometryLockout.rawValue {
                    context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: localizedReason, reply: { (success, error) in

                    })
                }
                else if errorCode == LAError.touchIDLockout.rawValue {
                    context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: localizedReason, reply: { (success, error) in

                    })
                } else if errorCode == LAError.appCancel.rawValue {
                    resultDelegate?.handleBiometricResult(result: .appCancel, type: biometricType())
                } else if errorCode == LAError.invalidContext.rawValue {
                    resultDelegate?.handleBiometricResult(result: .invalidContext, type: biometricType())
                }
                else if errorCode == LAError.touchIDNotAvailable.rawValue {
                    resultDelegate?.handleBiometricResult(result: .touchIdNotAvailable, type: biometricType())
                } else if errorCode == LAError.touchIDNotEnrolled.rawValue {
                    resultDelegate?.handleBiometricResult(result: .touchIDNotEnrolled, type: biometricType())
                }
                else {
                    resultDelegate?.handleBiometricResult(result: .deviceNotSupport, type: biometricType())
                }
            } else {
                resultDelegate?.handleBiometricResult(result: .deviceNotSupport, type: biometricType())
            }
        }
    }
}

// MARK: - Seed 002: BiometricAuthManager (Swift part)

enum BiometricType {
    case none, touchID, faceID, opticID
}

class BiometricAuthManager {

    static var supportedType: BiometricType {
        let context = LAContext()
        var error: NSError?
        guard context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error) else {
            return .none
        }
        if #available(iOS 17.0, *) {
            if context.biometryType == .opticID { return .opticID }
        }
        switch context.biometryType {
        case .faceID: return .faceID
        case .touchID: return .touchID
        default: return .none
        }
    }

    static func authenticate(reason: String,
                             allowFallback: Bool = true,
                             completion: @escaping @Sendable (Bool, String?, Error?) -> Void) {  // Swift 6: @Sendable
        let context = LAContext() // 每次创建新实例
        var error: NSError?

        let policy: LAPolicy = allowFallback ? .deviceOwnerAuthentication : .deviceOwnerAuthenticationWithBiometrics

        guard context.canEvaluatePolicy(policy, error: &error) else {
            DispatchQueue.main.async { [error] in  // Swift 6: [error]
                completion(false, errorMessage(for: error), error)
            }
            return
        }

        context.evaluatePolicy(policy, localizedReason: reason) { success, error in
            DispatchQueue.main.async {
                if success {
                    completion(true, "认证成功", nil)
                } else {
                    completion(false, errorMessage(for: error), error)
                }
            }
        }
    }

    private static func errorMessage(for error: Error?) -> String {
        guard let error = error as? LAError else {
            return error?.localizedDescription ?? "认证失败"
        }
        switch error.code {
        case .authenticationFailed: return "认证失败，请重试"
        case .userCancel: return "用户取消了认证"
        case .userFallback: return "用户选择输入密码"
        case .systemCancel: return "系统取消了认证"
        case .passcodeNotSet: return "设备未设置密码"
        case .biometryNotAvailable: return "设备不支持生物识别"
        case .biometryNotEnrolled: return "未录入指纹/面部"
        case .biometryLockout: return "生物识别已被锁定，请输入密码解锁"
        case .appCancel: return "应用取消了认证"
        default: return error.localizedDescription
        }
    }
}

// MARK: - async/await style, as iOS 15+ code writes it

enum UnlockOutcome: Equatable {
    case unlocked
    case cancelled
    case fallback
    case lockedOut
    case failed(Int)
}

func unlockWithBiometrics(reason: String) async -> UnlockOutcome {
    let context = LAContext()
    do {
        _ = try await context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: reason)
        return .unlocked
    } catch LAError.userCancel, LAError.appCancel, LAError.systemCancel {
        return .cancelled
    } catch LAError.userFallback {
        return .fallback
    } catch LAError.biometryLockout {
        return .lockedOut
    } catch {
        return .failed((error as NSError).code)
    }
}
