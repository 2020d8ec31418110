// decide: every rule of SEMANTICS.md lives behind this one function. It
// answers a command with the events it causes (in order) or a rejection.
// Each event is folded into the decision's state (`apply`) as it is emitted,
// so a rule that follows an event reads the state that event left: no rule
// restates `evolve`'s arithmetic, and no caller needs a dry run to learn
// what a command would do. A rule rejects before it emits anything, so a
// rejection leaves the state as it was.
//
// Two forms. `decide(_:_:now:)` decides on a copy and returns the events
// (tests, tools). `AuthState.decide(_:now:sink:)` decides in place, as the
// daemon does: its sink records each event in the log before it is folded
// (live state == fold(log), S-38), and a log that refuses an event ends the
// decision there.

public func decide(_ command: Command, _ state: AuthState, now: Int64) -> Result<[Event], Rejection> {
    var scratch = state
    return scratch.decide(command, now: now, sink: nil).map(\.events)
}

/// Where an in-place decision puts its events as it emits them.
public protocol EventSink: AnyObject {
    /// Records `event` before it is folded; false when it could not be: the
    /// decision then emits nothing more, and the state is the fold of the
    /// events recorded so far.
    func record(_ event: Event) -> Bool
    /// After the event just recorded was folded, with the state it left.
    func folded(_ event: Event, into state: borrowing AuthState)
}

/// A decision's result: its events, and the LAError its requester hears
/// when the command is a passcode attempt that no evaluation waits for
/// (set-passcode's old secret: refused during a delay or a lock, S-46, or
/// wrong, S-36). An evaluation's attempt is answered by its evaluation's end.
public struct Decided: Sendable, Equatable {
    public var events: [Event]
    public var answer: Failure?
    /// false when the sink refused an event: `events` are those it recorded.
    public var complete: Bool
}

extension AuthState {
    /// Decides `command` on this state, in place (see the file's header).
    public mutating func decide(_ command: Command, now: Int64, sink: (any EventSink)?) -> Result<Decided, Rejection> {
        // The state moves into the decision and back, so its storage stays
        // uniquely referenced and each fold changes it in place (a copy
        // would duplicate every table on the first event).
        var decision = Decision(state: consume self, now: now, sink: sink)
        let rejection: Rejection?
        do {
            try decision.run(command)
            rejection = nil
        } catch let refused as Rejection {
            rejection = refused
        } catch {
            rejection = Rejection(.badState, "\(error)")
        }
        self = decision.state
        if let rejection {
            // A rule that emitted and then rejected would leave facts folded
            // (and recorded) that its answer denies.
            assert(decision.events.isEmpty, "a rule rejects before it emits: \(command)")
            if decision.events.isEmpty { return .failure(rejection) }
        }
        return .success(Decided(events: decision.events, answer: decision.answer, complete: !decision.stopped))
    }
}

/// The working memory of one decision: the state as the events emitted so
/// far left it, and those events.
struct Decision {
    private(set) var state: AuthState
    let now: Int64
    private(set) var events: [Event] = []
    /// See `Decided.answer`.
    var answer: Failure?
    private let sink: (any EventSink)?
    /// The sink refused an event: nothing more is emitted.
    private(set) var stopped = false
    /// S-66: the route an evaluation of this decision takes at its first
    /// prompt (`showPrompt` records it just before that prompt).
    var pendingRoute: (ctx: ContextID, eval: EvaluationID, route: AgentRoute)?

    init(state: consuming AuthState, now: Int64, sink: (any EventSink)?) {
        self.state = state
        self.now = now
        self.sink = sink
    }

    var rules: Rules { state.rules }

    /// Records (through the sink), folds and keeps one event.
    mutating func emit(_ body: EventBody) {
        guard !stopped else { return }
        let event = Event(time: now, body)
        if let sink, !sink.record(event) {
            stopped = true
            return
        }
        state.apply(event)
        events.append(event)
        sink?.folded(event, into: state)
    }

    mutating func run(_ command: Command) throws {
        switch command {
        case .start(let version, let bootID, let pid, let rules):
            start(version: version, bootID: bootID, pid: pid, rules: rules)
        case .applyRules(let rules):
            if rules != state.rules { emit(.rulesApplied(rules)) }
        case .stop:
            stop()
        case .createContext(let ctx, let uid, let pid, let origin):
            guard state.contexts[ctx] == nil else { throw Rejection(.badArgument, "Context id already in use.") }
            emit(.contextCreated(uid: uid, ctx: ctx, pid: pid, origin: origin))
        case .setProperty(let ctx, let property):
            let context = try self.context(ctx)
            emit(.contextPropertySet(uid: context.uid, ctx: ctx, property: property))
        case .invalidate(let ctx, let reason):
            try invalidate(ctx, reason: reason)
        case .canEvaluate(let ctx, let policy):
            try canEvaluate(ctx, policy: policy)
        case .evaluate(let ctx, let policy, let reason, let options):
            try evaluate(ctx, policy: policy, reason: reason, options: options)
        case .sensor(let uid, let reading):
            try sensor(uid: uid, reading: reading)
        case .fallback(let ctx):
            try fallback(ctx)
        case .submitPasscode(let ctx, let queueFull):
            try submitPasscode(ctx, queueFull: queueFull)
        case .admitPasscodeAttempt(let uid, let ctx, let eval):
            admitPasscodeAttempt(uid: uid, ctx: ctx, eval: eval)
        case .passcodeChecked(let uid, let ctx, let eval, let correct, let repeated, let requester):
            passcodeChecked(uid: uid, ctx: ctx, eval: eval, correct: correct, repeated: repeated,
                            requester: requester ?? state.foreignRequester(ctx))
        case .cancel(let ctx):
            try cancel(ctx)
        case .expirePrompts:
            expirePrompts()
        case .enroll(let uid, let template, let by, let domainState):
            try enroll(uid: uid, template: template, by: by, domainState: domainState)
        case .fingersListed(let uid, let fingers, let by, let domainState):
            try fingersListed(uid: uid, fingers: fingers, by: by, domainState: domainState)
        case .unenroll(let uid, let template, let by, let domainState):
            try unenroll(uid: uid, template: template, by: by, domainState: domainState)
        case .changePasscode(let uid, let set, let by):
            emit(.passcodeChanged(uid: uid, set: set, by: by))
        case .reportUnlock(let uid, let by):
            emit(.deviceUnlocked(uid: uid, by: by))
        case .reset(let uid, let by):
            emit(.userReset(uid: uid, by: by))
        case .repairLog(let firstLostSeq, let by):
            emit(.logRepaired(firstLostSeq: firstLostSeq, by: by))
        case .recordSnapshot(let seq, let sha256):
            emit(.snapshotRecorded(snapshotSeq: seq, sha256: sha256))
        case .acceptLogRollback(let journalSeq, let logSeq, let by):
            emit(.logRollbackAccepted(journalSeq: journalSeq, logSeq: logSeq, by: by))
        case .recordRight(let fact):
            try recordRight(fact)
        case .systemSleep(let suspending, let endScans):
            systemSleep(suspending: suspending, endScans: endScans)
        case .registerAgent(let uid, let session, let pid):
            try registerAgent(uid: uid, session: session, pid: pid)
        case .unregisterAgent(let uid, let session, let pid, let reason, let routed):
            try unregisterAgent(uid: uid, session: session, pid: pid, reason: reason, routed: routed)
        case .refuseAgent(let refusal):
            try refuseAgent(refusal)
        case .recordLoginSecret(let fact):
            try recordLoginSecret(fact)
        }
    }

    /// The context, whatever its state; unknown ids are rejected (S-12).
    func context(_ ctx: ContextID) throws -> ContextState {
        guard let context = state.contexts[ctx] else {
            throw Rejection(.unknownContext, "No such context.")
        }
        return context
    }

    /// The running evaluation of a context, or bad-state.
    func running(_ ctx: ContextID, _ what: String) throws -> (ContextState, Evaluation) {
        let context = try self.context(ctx)
        guard let evaluation = context.evaluation else {
            throw Rejection(.badState, "No evaluation is running on this context; nothing to \(what).")
        }
        return (context, evaluation)
    }

    mutating func fail(_ context: ContextState, _ ctx: ContextID, _ eval: EvaluationID, _ failure: Failure) {
        emit(.evaluationFailed(uid: context.uid, ctx: ctx, eval: eval, failure: failure))
    }
}
