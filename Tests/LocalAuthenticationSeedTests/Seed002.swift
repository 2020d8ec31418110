// Seed 002, verbatim: the article's code (its one copy), byte for byte after
// this header, compiled in Swift 5 mode and run by SeedRunTests against a live
// daemon; SeedVerbatimTests type-checks this file and pins its diagnostics.
import LocalAuthentication

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
                             completion: @escaping (Bool, String?, Error?) -> Void) {
        let context = LAContext() // 每次创建新实例
        var error: NSError?
        
        let policy: LAPolicy = allowFallback ? .deviceOwnerAuthentication : .deviceOwnerAuthenticationWithBiometrics
        
        guard context.canEvaluatePolicy(policy, error: &error) else {
            DispatchQueue.main.async {
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
