// Apple's `LAPublicKey`: the public half of a persisted right's key. Its
// operations need no authorization (Apple: public-key operations are always
// available) and run here, in the client: the bytes come once from the
// daemon (`right-public-key`, ANSI X9.63 uncompressed, 65 bytes), then
// `encrypt` is Apple's ECIES to it and `verify` checks an X9.62 DER
// signature, through LocalAuthKeys (libcrypto). A signature that does not
// verify is Apple's errSecVerifyFailed; a bad algorithm or digest size,
// errSecParam.
import Dispatch
import Foundation
internal import LocalAuthCore
internal import LocalAuthKeys

@available(macOS 13.0, iOS 16.0, *)
public final class LAPublicKey: NSObject, @unchecked Sendable {
    private let identifier: String
    private let lock = NSLock()
    private var cached: [UInt8]?

    init(identifier: String) {
        self.identifier = identifier
    }

    // MARK: Checking algorithm support

    public func canEncrypt(using algorithm: SecKeyAlgorithm) -> Bool {
        KeyAlgorithm.named(algorithm.rawValue, for: .decrypt) != nil
    }

    public func canVerify(using algorithm: SecKeyAlgorithm) -> Bool {
        KeyAlgorithm.named(algorithm.rawValue, for: .sign) != nil
    }

    // MARK: Performing cryptographic operations

    /// The public key: 04 || X || Y (65 bytes), Apple's external representation of an EC public key.
    @preconcurrency
    public func exportBytes(completion handler: @escaping @Sendable (Data?, (any Error)?) -> Void) {
        DispatchQueue.global().async { [self] in
            switch bytes() {
            case .success(let bytes): handler(Data(bytes), nil)
            case .failure(let error): handler(nil, error)
            }
        }
    }

    public func exportBytes() async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            exportBytes { KeyReplies.resume(continuation, $0, $1) }
        }
    }

    /// Apple's ECIES ciphertext of `data` to this key (E || C || T).
    @preconcurrency
    public func encrypt(_ data: Data, algorithm: SecKeyAlgorithm,
                        completion handler: @escaping @Sendable (Data?, (any Error)?) -> Void) {
        DispatchQueue.global().async { [self] in
            guard let chosen = KeyAlgorithm.named(algorithm.rawValue, for: .decrypt),
                  case .ecies(let hash, let variableIV) = chosen.form else {
                return handler(nil, KeyReplies.unsupported(algorithm))
            }
            switch key() {
            case .failure(let error): handler(nil, error)
            case .success(let key):
                let variant = ECIES.Variant(digest: Self.digest(hash), variableIV: variableIV)
                handler(Data(ECIES.encrypt(Array(data), to: key, variant)), nil)
            }
        }
    }

    public func encrypt(_ data: Data, algorithm: SecKeyAlgorithm) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            encrypt(data, algorithm: algorithm) { KeyReplies.resume(continuation, $0, $1) }
        }
    }

    /// nil when `signature` signs `signedData` (a message or a digest, as the algorithm says).
    @preconcurrency
    public func verify(_ signedData: Data, signature: Data, algorithm: SecKeyAlgorithm,
                       completion handler: @escaping @Sendable ((any Error)?) -> Void) {
        DispatchQueue.global().async { [self] in
            guard let chosen = KeyAlgorithm.named(algorithm.rawValue, for: .sign) else {
                return handler(KeyReplies.unsupported(algorithm))
            }
            let digest: [UInt8]
            switch chosen.form {
            case .message(let hash): digest = Self.digest(hash).hash(Array(signedData))
            case .digest(let hash?) where signedData.count != Self.digest(hash).size:
                return handler(KeyReplies.securityError(KeyReplies.errSecParam,
                                                        "bad digest size for signing with algorithm \(algorithm.rawValue)"))
            default: digest = Array(signedData)
            }
            switch key() {
            case .failure(let error): handler(error)
            case .success(let key):
                handler(key.verify(signature: Array(signature), digest: digest) ? nil
                    : KeyReplies.securityError(KeyReplies.errSecVerifyFailed, "EC signature verification failed"))
            }
        }
    }

    public func verify(_ signedData: Data, signature: Data, algorithm: SecKeyAlgorithm) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            verify(signedData, signature: signature, algorithm: algorithm) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    // MARK: The bytes

    /// The key's bytes, asked of the daemon once (the right's owner may always read them).
    private func bytes() -> Result<[UInt8], any Error> {
        if let cached = lock.withLock({ cached }) { return .success(cached) }
        switch LARightStore.shared.request("right-public-key", [("identifier", identifier)]) {
        case .failure(let error): return .failure(error)
        case .success(let response):
            switch KeyReplies.bytes(response, "public-key") {
            case .failure(let error): return .failure(error)
            case .success(let data):
                guard P256PublicKey(x963: Array(data)) != nil else {
                    return .failure(LAError(.systemCancel, "localauthd sent a malformed public key."))
                }
                lock.withLock { cached = Array(data) }
                return .success(Array(data))
            }
        }
    }

    private func key() -> Result<P256PublicKey, any Error> {
        bytes().flatMap { bytes in
            P256PublicKey(x963: bytes).map { .success($0) } ?? .failure(LAError(.systemCancel, "localauthd sent a malformed public key."))
        }
    }

    static func digest(_ hash: KeyHash) -> Digest {
        switch hash {
        case .sha1: return .sha1
        case .sha224: return .sha224
        case .sha256: return .sha256
        case .sha384: return .sha384
        case .sha512: return .sha512
        }
    }
}
