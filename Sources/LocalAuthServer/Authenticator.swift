// The daemon's heart: it runs a command through the core's `decide` on the
// live state, in place, as the decision's sink: each event is recorded in
// the log before the decision folds it (so live state == fold(log), S-38),
// and the newest event whose outcome may not be revealed before its fsync is
// remembered: a security failure (S-40) or an admin action (an `OK` to
// `reset` must survive a power cut; docs/MODEL.md). The output that waits
// for it is held by the ReplyGate. The deterministic simulator drives it
// through the server's `package` declarations (no testable import outside
// Tests/, so `swift build -c release` builds the simulator too).
import LocalAuthCore

package final class Authenticator {
    package private(set) var state: AuthState
    package let recorder: EventRecorder
    /// The seq of the newest event that must be durable before output
    /// produced after it is sent (`EventBody.isDurableBeforeReply`): the
    /// barrier of the server's ReplyGate, which holds that output.
    private(set) var revealGate: UInt64 = 0
    /// Called with the seq of every event after it is recorded and folded,
    /// and the state that fold left.
    package var observe: (UInt64, borrowing AuthState) -> Void = { _, _ in }
    /// Called with each decided event and its seq, after `observe` (the
    /// simulator's S-40 oracle marks its streams at every failure). Not on
    /// can-evaluate's path: a check is no decided event.
    package var observeEvent: ((EventBody, UInt64) -> Void)?
    /// Users someone watches (`watch`), and those of them that an event
    /// touched since the server last looked (WatchVerbs.swift). Empty sets
    /// while nobody watches: one `isEmpty` per event is all it costs then.
    var watched: Set<UserID> = []
    private(set) var touched: Set<UserID> = []

    package init(state: AuthState, recorder: EventRecorder) {
        self.state = state
        self.recorder = recorder
    }

    package enum Outcome {
        case events([Event])
        /// A passcode attempt without an evaluation (set-passcode's old
        /// secret) was refused or wrong: its events, and the LAError its
        /// requester hears (`Decided.answer`).
        case answered([Event], Failure)
        case rejected(Rejection)
        /// The log cannot take events: fail closed.
        case unavailable(String)
    }

    package func execute(_ command: Command, now: Int64) -> Outcome {
        if let failure = recorder.failure { return .unavailable(failure) }
        switch state.decide(command, now: now, sink: self) {
        case .failure(let rejection):
            return .rejected(rejection)
        case .success(let decided):
            if !decided.complete { return .unavailable(refusal ?? "the log refused an event") }
            if let answer = decided.answer { return .answered(decided.events, answer) }
            return .events(decided.events)
        }
    }

    /// can-evaluate, the hot command: the core's rule gives one check, which
    /// is recorded and folded as a decided event is, without making
    /// the event (`recorder.record(_:time:)`, `AuthState.apply(_:time:)`).
    func canEvaluate(_ ctx: ContextID, policy: Policy, now: Int64,
                     blocked: BiometryBlock? = nil) -> Result<PolicyCheck, CheckRefusal> {
        if let failure = recorder.failure { return .failure(.unavailable(failure)) }
        let outcome = read { $0.canEvaluate(ctx, policy: policy, now: now, blocked: blocked) }
        // Consumed: the check is moved out, not copied (an outlined copy of
        // the PolicyCheck per request otherwise).
        switch consume outcome {
        case .failure(let rejection):
            return .failure(.rejected(rejection))
        case .success(let check):
            let seq: UInt64
            do { seq = try recorder.record(check, time: now) } catch { return .failure(.unavailable("\(error)")) }
            // The recorder counted it into the previous check's record (the
            // same seq: kind 33, CheckRun.swift): folded as a repeat, and
            // observed with that record already.
            if seq == lastCheckSeq {
                state.applyRepeated(check, time: now)
                return .success(check)
            }
            lastCheckSeq = seq
            // Folded from the check's fields (the same fold as the event's);
            // policy-checked is never durable-before-reply: no gate moves.
            state.apply(check, time: now)
            read { observe(seq, $0) }
            return .success(check)
        }
    }

    /// S-43: the sensor backend's view of the reader (not an event).
    func setSensorProblem(_ problem: String?) { state.sensorProblem = problem }

    /// Reads the live state without copying it. A method called on the
    /// stored property gets a copy (a retain and a release of each of its
    /// collections, to guard against writes during the call); through an
    /// inout parameter it is borrowed in place. `read` must not change it.
    func read<Value>(_ read: (inout AuthState) -> Value) -> Value { read(&state) }

    /// Changes how the state is stored, never what it says (MemoryRelease.swift).
    func mutateStorage(_ change: (inout AuthState) -> Void) {
        let before = state.contexts.count
        change(&state)
        assert(state.contexts.count == before)
    }

    enum CheckRefusal: Error {
        case rejected(Rejection)
        case unavailable(String)
    }

    /// The seq the recorder gave the last check (`canEvaluate`).
    private var lastCheckSeq: UInt64 = 0
    /// The seq the log gave the event being decided (`record`, then `folded`).
    private var recordedSeq: UInt64 = 0
    /// Why the log refused the last decision's event, if it did.
    private var refusal: String?

    /// Notes a watched user whose state an event may have changed (a
    /// policy check changes none of the watched fields, so the hot
    /// `canEvaluate` path never comes here).
    private func touch(_ body: EventBody) {
        if let uid = body.uid {
            if watched.contains(uid) { touched.insert(uid) }
        } else {
            switch body {
            case .rulesApplied, .logRepaired: touched.formUnion(watched)
            default: break
            }
        }
    }

    /// The touched users, forgotten.
    func takeTouched() -> Set<UserID> {
        defer { touched.removeAll() }
        return touched
    }

    /// End of a loop turn, before replies go out: what was appended reaches
    /// the file, and an fsync is asked for if anything waits for one.
    package func flush() { recorder.flush(durableThrough: revealGate) }
}

/// The decision's sink (`execute`'s, not for other callers): each event is
/// recorded before it is folded; after the fold the reveal gate moves,
/// watched users are noted, and the observer sees the state. The decision
/// holds the live state meanwhile: nothing here reads `state`.
extension Authenticator: EventSink {
    public func record(_ event: Event) -> Bool {
        do {
            recordedSeq = try recorder.record(event)
            refusal = nil
            return true
        } catch {
            refusal = "\(error)"
            return false
        }
    }

    public func folded(_ event: Event, into state: borrowing AuthState) {
        if event.body.isDurableBeforeReply { revealGate = recordedSeq }
        if !watched.isEmpty { touch(event.body) }
        observe(recordedSeq, state)
        observeEvent?(event.body, recordedSeq)
    }
}
