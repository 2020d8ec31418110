// The daemon's heart: it runs a command through the core's `decide`, records
// each resulting event in the log, folds it into the live state (so live
// state == fold(log), S-38), and remembers the newest event whose outcome may
// not be revealed before its fsync: a security failure (S-40) or an admin
// action (an `OK` to `reset` must survive a power cut; docs/MODEL.md).
import LocalAuthCore

final class Authenticator {
    private(set) var state: AuthState
    let recorder: EventRecorder
    /// The seq of the newest event that must be durable before output
    /// produced after it is sent (`EventBody.isDurableBeforeReply`).
    private(set) var revealGate: UInt64 = 0
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
                if event.body.isDurableBeforeReply { revealGate = seq }
                observe(seq, event)
            }
            return .events(events)
        }
    }

    /// The seq that output produced now must wait for (0 = none). If the log
    /// fails, that seq never becomes durable and what waits is dropped (S-40).
    var gate: UInt64 { revealGate > recorder.durableSeq ? revealGate : 0 }

    /// End of a loop turn, before replies go out: what was appended reaches
    /// the file, and an fsync is asked for if anything waits for one.
    func flush() { recorder.flush(durableThrough: revealGate) }
}
