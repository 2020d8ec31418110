// A small given/when/then harness over the pure core: commands go through
// `decide`, their events are folded with `apply`, and the whole log is kept
// so that tests (and the property tests) can re-fold it (S-38).

import XCTest
@testable import LocalAuthCore

/// Seconds as the core's microseconds.
func sec(_ seconds: Int64) -> Int64 { seconds * Timestamp.second }

/// A readable, deterministic context id: `ctx(1)`, `ctx(2)`, ...
func ctx(_ n: UInt64) -> ContextID { ContextID(high: 0xC0_FFEE, low: n) }

/// The epoch the scenarios start at (2023-11-14T22:13:20Z).
let t0: Int64 = sec(1_700_000_000)

let admin: UserID = 0
let alice: UserID = 1000
let bob: UserID = 1001

extension Rules {
    func with(_ change: (inout Rules) -> Void) -> Rules {
        var copy = self
        change(&copy)
        return copy
    }
}

/// One scenario: a live state, its log and a clock.
final class Scenario {
    private(set) var state: AuthState
    private(set) var log: [Event] = []
    /// The wall clock the next command runs at.
    var now: Int64
    /// The outcome of the last `when`.
    private(set) var outcome: Result<[Event], Rejection>?

    /// A daemon that has started with `rules` (a `start` command).
    init(rules: Rules = .default, now: Int64 = t0, started: Bool = true) {
        self.state = AuthState()
        self.now = now
        if started {
            given(.start(version: "test", bootID: "boot-1", pid: 1, rules: rules))
        } else {
            state = AuthState(rules: rules)
        }
    }

    // MARK: clock

    func advance(_ seconds: Int64) { now += sec(seconds) }
    func advance(micros: Int64) { now += micros }
    func setClock(_ time: Int64) { now = time }

    // MARK: given

    /// Commands that must be accepted; their events are folded.
    @discardableResult
    func given(_ commands: Command..., file: StaticString = #filePath, line: UInt = #line) -> [EventBody] {
        var bodies: [EventBody] = []
        for command in commands {
            switch decide(command, state, now: now) {
            case .success(let events):
                fold(events)
                bodies += events.map(\.body)
            case .failure(let rejection):
                XCTFail("given \(command) was rejected: \(rejection)", file: file, line: line)
            }
        }
        return bodies
    }

    /// Events that happened (at `now`), folded without `decide`.
    func given(events bodies: EventBody...) {
        fold(bodies.map { Event(time: now, $0) })
    }

    private func fold(_ events: [Event]) {
        for event in events {
            state.apply(event)
            log.append(event)
        }
    }

    // MARK: when / then

    /// The command under test; accepted events are folded.
    @discardableResult
    func when(_ command: Command, at time: Int64? = nil) -> Result<[Event], Rejection> {
        if let time { now = time }
        let result = decide(command, state, now: now)
        if case .success(let events) = result { fold(events) }
        outcome = result
        return result
    }

    /// The bodies the last `when` emitted ([] and a failure if rejected).
    var emitted: [EventBody] {
        guard case .success(let events)? = outcome else { return [] }
        return events.map(\.body)
    }

    func then(_ expected: EventBody..., file: StaticString = #filePath, line: UInt = #line) {
        then(expected, file: file, line: line)
    }

    func then(_ expected: [EventBody], file: StaticString = #filePath, line: UInt = #line) {
        switch outcome {
        case .success(let events)?:
            XCTAssertEqual(events.map(\.body), expected, file: file, line: line)
            XCTAssertTrue(events.allSatisfy { $0.time == now }, "every event carries the decision's time (S-8)",
                          file: file, line: line)
        case .failure(let rejection)?:
            XCTFail("expected events, got rejection \(rejection)", file: file, line: line)
        case nil:
            XCTFail("no `when`", file: file, line: line)
        }
    }

    func thenRejected(_ name: Rejection.Name, file: StaticString = #filePath, line: UInt = #line) {
        switch outcome {
        case .failure(let rejection)?:
            XCTAssertEqual(rejection.kind, .protocolError(name), rejection.message, file: file, line: line)
        case .success(let events)?:
            XCTFail("expected rejection \(name), got \(events.map(\.body))", file: file, line: line)
        case nil:
            XCTFail("no `when`", file: file, line: line)
        }
    }

    /// The last `when` ended evaluation (ctx, eval) with exactly this failure.
    func thenFailed(_ c: ContextID, _ eval: EvaluationID, _ failure: Failure,
                    file: StaticString = #filePath, line: UInt = #line) {
        let uid = state.contexts[c]?.uid ?? uidOf(c)
        XCTAssertTrue(emitted.contains(.evaluationFailed(uid: uid, ctx: c, eval: eval, failure: failure)),
                      "expected \(failure) for \(c)#\(eval), got \(emitted)", file: file, line: line)
    }

    /// The failure that ended (c, eval) in the last `when`, if any.
    func failure(_ c: ContextID, _ eval: EvaluationID) -> Failure? {
        for body in emitted {
            if case .evaluationFailed(_, c, eval, let failure) = body { return failure }
        }
        return nil
    }

    /// The success method of (c, eval) in the last `when`, if any.
    func success(_ c: ContextID, _ eval: EvaluationID) -> SuccessMethod? {
        for body in emitted {
            if case .evaluationSucceeded(_, c, eval, let method) = body { return method }
        }
        return nil
    }

    /// The prompts the last `when` showed.
    var prompts: [Prompt] {
        emitted.compactMap { if case .promptShown(_, _, _, let prompt) = $0 { return prompt } else { return nil } }
    }

    /// Who owns `c` according to the log (also after it is gone).
    func uidOf(_ c: ContextID) -> UserID {
        for event in log {
            if case .contextCreated(let uid, c, _, _) = event.body { return uid }
        }
        return UInt32.max
    }

    /// S-43: the daemon's view of the reader (an input, not an event).
    func setSensorProblem(_ problem: String?) { state.sensorProblem = problem }

    // MARK: vocabulary

    func newContext(_ c: ContextID, uid: UserID, pid: ProcessID = 4242) {
        given(.createContext(ctx: c, uid: uid, pid: pid))
    }

    func enroll(_ uid: UserID, _ template: String = "right-thumb") {
        given(.enroll(uid: uid, template: template, by: admin, domainState: "ds-\(uid)-\(template)"))
    }

    func setPasscode(_ uid: UserID, by: UserID = admin) {
        given(.changePasscode(uid: uid, set: true, by: by))
    }

    /// A user with a passcode and one enrolled template.
    func readyUser(_ uid: UserID) {
        setPasscode(uid)
        enroll(uid)
    }

    func set(_ c: ContextID, _ property: ContextProperty) {
        given(.setProperty(ctx: c, property: property))
    }

    @discardableResult
    func feed(_ uid: UserID, _ reading: SensorReading) -> Result<[Event], Rejection> {
        when(.sensor(uid: uid, reading: reading))
    }

    @discardableResult
    func evaluate(_ c: ContextID, _ policy: Policy, reason: String = "Unlock the vault") -> Result<[Event], Rejection> {
        when(.evaluate(ctx: c, policy: policy, reason: reason))
    }

    @discardableResult
    func canEvaluate(_ c: ContextID, _ policy: Policy) -> Result<[Event], Rejection> {
        when(.canEvaluate(ctx: c, policy: policy))
    }

    /// The client answers the passcode prompt of (c, eval), the worker checks it.
    @discardableResult
    func enterPasscode(_ c: ContextID, correct: Bool, repeated: Bool = false) -> Result<[Event], Rejection> {
        let first = when(.submitPasscode(ctx: c))
        guard case .success(let events) = first,
              events.contains(where: { if case .passcodeSubmitted = $0.body { return true } else { return false } }),
              let evaluation = state.contexts[c]?.evaluation else { return first }
        return when(.passcodeChecked(uid: state.contexts[c]!.uid, ctx: c, eval: evaluation.id,
                                     correct: correct, repeated: repeated))
    }

    /// The current evaluation of `c`, if one runs.
    func evaluation(_ c: ContextID) -> Evaluation? { state.contexts[c]?.evaluation }

    func user(_ uid: UserID) -> UserState { state.user(uid) }

    /// S-38: the fold of the log from an empty state.
    var refolded: AuthState { log.reduce(AuthState(), AuthState.evolve) }
}

