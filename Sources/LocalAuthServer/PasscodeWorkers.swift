// Slow passcode work (yescrypt, ~30 ms a hash) runs here, off the event loop,
// on `count` workers. Which job runs when is the loop's `PasscodeQueue`
// (at most `count` at once, one per user, users in turn); this type only
// runs what it is given. Results come back through a mutex-guarded inbox and
// an eventfd that wakes the loop. For S-7 each verified secret also
// gets a fingerprint: SHA-256 under a random key that exists only in this
// process's memory, so "same wrong passcode twice" can be told without ever
// storing anything derived from a wrong passcode on disk.
import Dispatch
import LocalAuthProtocol
import LocalAuthSystem
import Synchronization

package final class PasscodeWorkers: Sendable {
    package enum Job: Sendable {
        case verify(secret: SecretBytes, check: @Sendable ([UInt8]) -> Bool)
        case record(secret: SecretBytes, make: @Sendable ([UInt8]) throws -> String)
        /// S-74: a check that also seals an accepted login password
        /// (KeyringJob.sealingChecker); the copy comes back in `sealed`.
        case verifySealing(secret: SecretBytes, check: @Sendable ([UInt8]) -> (correct: Bool, sealed: LoginSecretCopy?))
    }

    package struct Completion: Sendable {
        package var token: UInt64
        package var correct: Bool
        package var hash: String?
        package var fingerprint: [UInt8]
        package var error: String?
        /// S-74: the accepted password, sealed (`verifySealing` only).
        var sealed: LoginSecretCopy?

        package init(token: UInt64, correct: Bool, hash: String?, fingerprint: [UInt8], error: String? = nil) {
            self.token = token
            self.correct = correct
            self.hash = hash
            self.fingerprint = fingerprint
            self.error = error
        }
    }

    let wake: EventFD
    let count: Int
    private let inbox = Mutex<[Completion]>([])
    /// Concurrent: the loop never submits more than `count` jobs at once.
    private let queue = DispatchQueue(label: "localauthd.passcode", attributes: .concurrent)
    private let fingerprintKey: [UInt8]

    init(count: Int) throws {
        wake = try EventFD()
        self.count = max(1, count)
        fingerprintKey = SecureRandom.bytes(32)
    }

    func submit(token: UInt64, _ job: Job) {
        queue.async { [self] in
            var completion = Completion(token: token, correct: false, hash: nil, fingerprint: [])
            switch job {
            case .verify(let secret, let check):
                // A copy only this closure holds, so the wipe is in place.
                var bytes = secret.copy()
                completion.correct = check(bytes)
                var keyed = fingerprintKey + bytes
                completion.fingerprint = SHA256.hash(keyed)
                scrub(&keyed)
                scrub(&bytes)
            case .verifySealing(let secret, let check):
                var bytes = secret.copy()
                (completion.correct, completion.sealed) = check(bytes)
                var keyed = fingerprintKey + bytes
                completion.fingerprint = SHA256.hash(keyed)
                scrub(&keyed)
                scrub(&bytes)
            case .record(let secret, let make):
                var bytes = secret.copy()
                do {
                    completion.hash = try make(bytes)
                    completion.correct = true
                } catch {
                    completion.error = "\(error)"
                }
                scrub(&bytes)
            }
            inbox.withLock { $0.append(completion) }
            try? wake.post()
        }
    }

    func drain() -> [Completion] {
        _ = try? wake.drain()
        return inbox.withLock { inbox in
            let all = inbox
            inbox.removeAll()
            return all
        }
    }

}

/// S-50: overwrites a buffer that held a secret before it is released.
func scrub(_ bytes: inout [UInt8]) { SecretMemory.wipe(&bytes) }
