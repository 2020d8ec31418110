// Slow passcode work (yescrypt, ~30 ms a hash) runs here, off the event loop,
// on a small pool of serial queues. Results come back through a mutex-guarded
// inbox and an eventfd that wakes the loop. For S-7 each verified secret also
// gets a fingerprint: SHA-256 under a random key that exists only in this
// process's memory, so "same wrong passcode twice" can be told without ever
// storing anything derived from a wrong passcode on disk.
import Dispatch
import LocalAuthSystem
import Synchronization

final class PasscodeWorkers: Sendable {
    enum Job: Sendable {
        case verify(secret: [UInt8], check: @Sendable ([UInt8]) -> Bool)
        case record(secret: [UInt8], make: @Sendable ([UInt8]) throws -> String)
    }

    struct Completion: Sendable {
        var token: UInt64
        var correct: Bool
        var hash: String?
        var fingerprint: [UInt8]
        var error: String?
    }

    let wake: EventFD
    private let inbox = Mutex<[Completion]>([])
    private let queues: [DispatchQueue]
    private let next = Atomic<Int>(0)
    private let fingerprintKey: [UInt8]

    init(count: Int) throws {
        wake = try EventFD()
        queues = (0..<max(1, count)).map { DispatchQueue(label: "localauthd.passcode.\($0)") }
        fingerprintKey = SecureRandom.bytes(32)
    }

    func submit(token: UInt64, _ job: Job) {
        let index = next.add(1, ordering: .relaxed).oldValue % queues.count
        queues[index].async { [self] in
            var completion = Completion(token: token, correct: false, hash: nil, fingerprint: [])
            switch job {
            case .verify(var secret, let check):
                completion.correct = check(secret)
                completion.fingerprint = SHA256.hash(fingerprintKey + secret)
                scrub(&secret)
            case .record(var secret, let make):
                do {
                    completion.hash = try make(secret)
                    completion.correct = true
                } catch {
                    completion.error = "\(error)"
                }
                scrub(&secret)
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

    private func scrub(_ bytes: inout [UInt8]) {
        for index in bytes.indices { bytes[index] = 0 }
    }
}
