// What the rights' keys answer, as Apple's answer: errors of the daemon's
// `domain=sec` (S-80) become the Security framework's NSError
// (NSOSStatusErrorDomain, the OSStatus code), the rest LAErrors as the
// other right verbs give them; and the shape of Apple's completion
// handlers and their async forms.
import Foundation
internal import LocalAuthCore
import LocalAuthProtocol

enum KeyReplies {
    /// Security's `errSecParam`: what Apple's SecKey answers for an algorithm the key does not offer, bad input...
    static let errSecParam = -50
    /// Security's `errSecVerifyFailed`: a signature that does not verify.
    static let errSecVerifyFailed = -67808

    static func securityError(_ code: Int, _ message: String) -> NSError {
        NSError(domain: NSOSStatusErrorDomain, code: code, userInfo: [NSLocalizedDescriptionKey: message])
    }

    /// Apple's message for an algorithm the key does not offer for the operation.
    static func unsupported(_ algorithm: SecKeyAlgorithm) -> NSError {
        securityError(errSecParam, "\(algorithm.rawValue): algorithm not supported by the key")
    }

    static func error(from response: Response) -> any Error {
        if response.errorDomain == "sec", let code = response.errorCode {
            return securityError(code, response.message ?? "localauthd refused the key operation.")
        }
        return Evaluation.error(from: response)
    }

    /// A reply's base64 value, or an error saying the daemon sent none.
    static func bytes(_ response: Response, _ key: String) -> Result<Data, any Error> {
        guard let text = response.arguments.value(for: key), case .success(var bytes) = Base64.decode(text, maximumBytes: 1 << 16) else {
            return .failure(LAError(.systemCancel, "localauthd sent a malformed \(key)."))
        }
        let data = Data(bytes)
        CredentialSlots.wipe(&bytes)
        return .success(data)
    }

    static func resume(_ continuation: CheckedContinuation<Data, any Error>, _ data: Data?, _ error: (any Error)?) {
        if let data { continuation.resume(returning: data) } else {
            continuation.resume(throwing: error ?? LAError(.systemCancel, "localauthd sent no answer."))
        }
    }
}
