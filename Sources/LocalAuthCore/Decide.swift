// decide: every rule of SEMANTICS.md lives behind this one function. It reads
// the state, never changes it, and answers a command with the events it
// causes (in order) or a rejection. The caller appends the events to the log
// and folds them with `apply`, so that live state == fold(log) (S-38).

public func decide(_ command: Command, _ state: AuthState, now: Int64) -> Result<[Event], Rejection> {
    var decision = Decision(state: state, now: now)
    do {
        try decision.run(command)
        return .success(decision.events)
    } catch let rejection as Rejection {
        return .failure(rejection)
    } catch {
        return .failure(Rejection(.badState, "\(error)"))
    }
}

/// The working memory of one decision: the state it reads and the events it
/// has emitted so far.
struct Decision {
    let state: AuthState
    let now: Int64
    var events: [Event] = []

    init(state: AuthState, now: Int64) {
        self.state = state
        self.now = now
    }

    var rules: Rules { state.rules }

    mutating func emit(_ body: EventBody) {
        events.append(Event(time: now, body))
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
        case .evaluate(let ctx, let policy, let reason):
            try evaluate(ctx, policy: policy, reason: reason)
        case .sensor(let uid, let reading):
            try sensor(uid: uid, reading: reading)
        case .fallback(let ctx):
            try fallback(ctx)
        case .submitPasscode(let ctx):
            try submitPasscode(ctx)
        case .admitPasscodeAttempt(let uid, let ctx, let eval):
            admitPasscodeAttempt(uid: uid, ctx: ctx, eval: eval)
        case .passcodeChecked(let uid, let ctx, let eval, let correct, let repeated):
            passcodeChecked(uid: uid, ctx: ctx, eval: eval, correct: correct, repeated: repeated)
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
