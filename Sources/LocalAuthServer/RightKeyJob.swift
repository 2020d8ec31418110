// One private-key operation of a right (S-79), as a worker runs it: the
// sealed scalar is opened with the daemon's key, made into a P-256 key,
// wiped; the key signs, decrypts or exchanges; the EC_KEY is freed, which
// clears its scalar (S-50). Pure but for libcrypto: the daemon's
// KeyWorkers run it on their threads, a shell without workers (the
// simulator, the core's tests) runs it in place. The result is Apple's
// bytes (S-80), or the reason Apple's Security framework would give
// errSecParam.
import Dispatch
import LocalAuthCore
import LocalAuthKeys
import LocalAuthProtocol
import LocalAuthSystem
import Synchronization

package struct KeyJob: Sendable {
    var algorithm: KeyAlgorithm
    /// The right's key at rest, and the box's additional data (RightStore.keyAdditionalData).
    var key: StoredKey
    var additionalData: [UInt8]
    /// The daemon's key (the same storage as SavedRights.secretKey: no copy is made).
    var daemonKey: [UInt8]
    /// `data=` (sign, decrypt) or the other party's `public-key=` (exchange).
    var input: [UInt8]
    var sharedInfo: [UInt8] = []
    var requestedSize = 0
}

enum KeyOutcome: Sendable {
    /// The signature, plaintext or shared secret, in memory that is wiped
    /// when the reply has taken it (an array would copy on write, S-50).
    case data(SecretBytes)
    /// Apple's errSecParam, with Apple's kind of message.
    case refused(String)
    /// The sealed key does not open with this daemon's key (the journal says so, not the client).
    case unopenable
}

/// KeyOutcome's failures, as a Result's.
enum KeyRefusal: Error {
    case refused(String)
    case unopenable

    var outcome: KeyOutcome {
        switch self {
        case .refused(let why): return .refused(why)
        case .unopenable: return .unopenable
        }
    }
}

package struct KeyCompletion: Sendable {
    var token: UInt64
    var outcome: KeyOutcome
}

extension KeyJob {
    func run() -> KeyOutcome {
        switch compute() {
        case .success(let secret): return .data(secret)
        case .failure(let refusal): return refusal.outcome
        }
    }

    /// The result moved into wipeable memory: `bytes` is a local that only
    /// this call holds, so the wipe is in place (no copy on write).
    private func kept(_ bytes: consuming [UInt8]) -> SecretBytes {
        var result = bytes
        let secret = result.withUnsafeBufferPointer { SecretBytes($0) }
        SecretMemory.wipe(&result)
        return secret
    }

    private func compute() -> Result<SecretBytes, KeyRefusal> {
        guard var scalar = AESGCM.open(key.sealedScalar, key: daemonKey, additionalData: additionalData) else {
            return .failure(.unopenable)
        }
        let privateKey = P256PrivateKey(scalar: scalar, publicKey: key.publicKey)
        SecretMemory.wipe(&scalar)
        guard let privateKey else { return .failure(.unopenable) }
        switch algorithm.form {
        case .digest(let hash):
            if let hash, input.count != Self.digest(hash).size {
                return .failure(.refused("bad digest size for signing with algorithm \(algorithm.name)"))
            }
            return .success(kept(privateKey.sign(digest: input)))
        case .message(let hash):
            return .success(kept(privateKey.sign(digest: Self.digest(hash).hash(input))))
        case .ecies(let hash, let variableIV):
            guard let plaintext = ECIES.decrypt(input, with: privateKey, ECIES.Variant(digest: Self.digest(hash), variableIV: variableIV)) else {
                return .failure(.refused(input.count < ECIES.overhead ? "ECIES: Input data too short"
                    : "ECIES: Failed to aes-gcm decrypt data"))
            }
            return .success(kept(plaintext))
        case .keyExchange(let hash):
            guard let peer = P256PublicKey(x963: input) else {
                return .failure(.refused("EC public key is not a point of P-256 in ANSI X9.63 uncompressed form"))
            }
            return .success(kept(KeyExchange.derive(privateKey, with: peer, kdf: hash.map(Self.digest), sharedInfo: sharedInfo,
                                                 requestedSize: requestedSize)))
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

/// The key workers (S-81): the loop hands each job over, a concurrent queue
/// runs it, the results come back through a mutex-guarded inbox and an
/// eventfd that wakes the loop. Which job runs when is the loop's
/// SavedRights (users in turn, one job per user, at most `count` at once).
final class KeyWorkers: Sendable {
    let wake: EventFD
    let count: Int
    private let inbox = Mutex<[KeyCompletion]>([])
    private let queue = DispatchQueue(label: "localauthd.keys", attributes: .concurrent)

    init(count: Int) throws {
        wake = try EventFD()
        self.count = max(1, count)
    }

    func submit(token: UInt64, _ job: KeyJob) {
        queue.async { [self] in
            let outcome = job.run()
            inbox.withLock { $0.append(KeyCompletion(token: token, outcome: outcome)) }
            try? wake.post()
        }
    }

    func drain() -> [KeyCompletion] {
        _ = try? wake.drain()
        return inbox.withLock { inbox in
            let all = inbox
            inbox.removeAll()
            return all
        }
    }
}
