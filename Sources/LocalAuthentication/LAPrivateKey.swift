// Apple's `LAPrivateKey` (iOS 16 / macOS 13): a persisted right's private
// key, which never leaves localauthd (S-78). Its operations go to the
// daemon on the right's own context (`right-sign`, `right-decrypt`,
// `right-exchange`, PROTOCOL.md v1.3), where the right must be authorized
// (S-79); the bytes are Apple's (S-80). An algorithm the key does not offer
// is refused here first, with Apple's errSecParam, as SecKey refuses it.
// Completion handlers run on a global queue; the async forms are the ones
// Swift makes of Apple's Objective-C methods.
import Dispatch
import Foundation
internal import LocalAuthCore
import LocalAuthProtocol

@available(macOS 13.0, iOS 16.0, *)
public final class LAPrivateKey: NSObject, @unchecked Sendable {
    private let identifier: String
    private let context: UncheckedContext

    /// The public key of the pair (its operations need no authorization).
    public let publicKey: LAPublicKey

    init(right: LAPersistedRight) {
        identifier = right.identifier
        context = UncheckedContext(right.context)
        publicKey = LAPublicKey(identifier: right.identifier)
    }

    // MARK: Checking algorithm support

    public func canSign(using algorithm: SecKeyAlgorithm) -> Bool {
        KeyAlgorithm.named(algorithm.rawValue, for: .sign) != nil
    }

    public func canDecrypt(using algorithm: SecKeyAlgorithm) -> Bool {
        KeyAlgorithm.named(algorithm.rawValue, for: .decrypt) != nil
    }

    public func canExchangeKeys(using algorithm: SecKeyAlgorithm) -> Bool {
        KeyAlgorithm.named(algorithm.rawValue, for: .exchange) != nil
    }

    // MARK: Performing cryptographic operations

    /// An X9.62 DER ECDSA signature of `data` (a message, or a digest, as the algorithm says).
    @preconcurrency
    public func sign(_ data: Data, algorithm: SecKeyAlgorithm,
                     completion handler: @escaping @Sendable (Data?, (any Error)?) -> Void) {
        guard canSign(using: algorithm) else { return fail(handler, KeyReplies.unsupported(algorithm)) }
        perform("right-sign", [("algorithm", algorithm.rawValue), ("data", Base64.encode(data))],
                answer: "signature", handler)
    }

    public func sign(_ data: Data, algorithm: SecKeyAlgorithm) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            sign(data, algorithm: algorithm) { KeyReplies.resume(continuation, $0, $1) }
        }
    }

    /// The plaintext of Apple's ECIES ciphertext `data` (E || C || T).
    @preconcurrency
    public func decrypt(_ data: Data, algorithm: SecKeyAlgorithm,
                        completion handler: @escaping @Sendable (Data?, (any Error)?) -> Void) {
        guard canDecrypt(using: algorithm) else { return fail(handler, KeyReplies.unsupported(algorithm)) }
        perform("right-decrypt", [("algorithm", algorithm.rawValue), ("data", Base64.encode(data))], answer: "data", handler)
    }

    public func decrypt(_ data: Data, algorithm: SecKeyAlgorithm) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            decrypt(data, algorithm: algorithm) { KeyReplies.resume(continuation, $0, $1) }
        }
    }

    /// ECDH with `publicKey` (the other party's, ANSI X9.63 uncompressed):
    /// Z, or its X9.63 KDF for the `…X963SHAn` algorithms, whose
    /// `parameters` need `SecKeyKeyExchangeParameter.requestedSize` and may
    /// hold `.sharedInfo` (keys as SecKeyKeyExchangeParameter or their raw strings).
    @preconcurrency
    public func exchangeKeys(publicKey: Data, algorithm: SecKeyAlgorithm, parameters: [AnyHashable: Any],
                             completion handler: @escaping @Sendable (Data?, (any Error)?) -> Void) {
        guard canExchangeKeys(using: algorithm) else { return fail(handler, KeyReplies.unsupported(algorithm)) }
        var arguments = [("algorithm", algorithm.rawValue), ("public-key", Base64.encode(publicKey))]
        switch Self.exchangeParameters(parameters) {
        case .failure(let error): return fail(handler, error)
        case .success(let (size, sharedInfo)):
            if let size { arguments.append(("requested-size", String(size))) }
            if let sharedInfo { arguments.append(("shared-info", Base64.encode(sharedInfo))) }
        }
        perform("right-exchange", arguments, answer: "data", handler)
    }

    public func exchangeKeys(publicKey: Data, algorithm: SecKeyAlgorithm, parameters: [AnyHashable: Any]) async throws -> Data {
        nonisolated(unsafe) let parameters = parameters
        return try await withCheckedThrowingContinuation { continuation in
            exchangeKeys(publicKey: publicKey, algorithm: algorithm, parameters: parameters) {
                KeyReplies.resume(continuation, $0, $1)
            }
        }
    }

    // MARK: The daemon

    /// requestedSize (an integer) and sharedInfo (Data), under either spelling of their keys.
    static func exchangeParameters(_ parameters: [AnyHashable: Any]) -> Result<(Int?, Data?), NSError> {
        func value(_ key: SecKeyKeyExchangeParameter) -> Any? {
            parameters[AnyHashable(key)] ?? parameters[AnyHashable(key.rawValue)]
        }
        var size: Int?
        if let raw = value(.requestedSize) {
            guard let number = (raw as? Int) ?? (raw as? NSNumber)?.intValue else {
                return .failure(KeyReplies.securityError(KeyReplies.errSecParam, "requestedSize must be an integer."))
            }
            size = number
        }
        var sharedInfo: Data?
        if let raw = value(.sharedInfo) {
            guard let data = raw as? Data else {
                return .failure(KeyReplies.securityError(KeyReplies.errSecParam, "sharedInfo must be Data."))
            }
            sharedInfo = data
        }
        return .success((size, sharedInfo))
    }

    private func perform(_ verb: String, _ arguments: [(String, String)], answer: String,
                         _ handler: @escaping @Sendable (Data?, (any Error)?) -> Void) {
        let (context, identifier) = (self.context, self.identifier)
        DispatchQueue.global().async {
            switch context.context.exchange(verb, [("identifier", identifier)] + arguments) {
            case .failure(let error): handler(nil, error)
            case .success(let response) where response.status != .ok: handler(nil, KeyReplies.error(from: response))
            case .success(let response):
                switch KeyReplies.bytes(response, answer) {
                case .success(let data): handler(data, nil)
                case .failure(let error): handler(nil, error)
                }
            }
        }
    }

    private func fail(_ handler: @escaping @Sendable (Data?, (any Error)?) -> Void, _ error: NSError) {
        DispatchQueue.global().async { handler(nil, error) }
    }
}
