// The daemon's heart: it runs a command through the core's `decide`, records
// each resulting event in the log, folds it into the live state (so live
// state == fold(log), S-38), and remembers the newest security failure so
// that output revealing it waits for its fsync (S-40).
import LocalAuthCore

final class Authenticator {
    private(set) var state: AuthState
    let recorder: EventRecorder
    /// The seq of the newest biometric-failed / passcode-rejected.
    private(set) var failureGate: UInt64 = 0
    /// Called for every event after it is recorded and folded.
    var observe: (UInt64, Event) -> Void = { _, _ in }

    init(state: AuthState, recorder: EventRecorder) {
        self.state = state
        self.recorder = recorder
    }

    enum Outcome {
        case events([Event])
        case rejected(Rejection)
        /// The log cannot take events: fail closed.
        case unavailable(String)
    }

    func execute(_ command: Command, now: Int64) -> Outcome {
        if let failure = recorder.failure { return .unavailable(failure) }
        switch decide(command, state, now: now) {
        case .failure(let rejection):
            return .rejected(rejection)
        case .success(let events):
            for event in events {
                let seq: UInt64
                do {
                    seq = try recorder.record(event)
                } catch {
                    return .unavailable("\(error)")
                }
                state.apply(event)
                if event.body.isSecurityFailure { failureGate = seq }
                observe(seq, event)
            }
            return .events(events)
        }
    }

    /// The seq that output produced now must wait for (0 = none). If the log
    /// fails, that seq never becomes durable and what waits is dropped (S-40).
    var gate: UInt64 { failureGate > recorder.durableSeq ? failureGate : 0 }
}
