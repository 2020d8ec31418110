// Running queued passcode jobs and taking their results (S-46, S-47); the
// jobs and their bookkeeping are PasscodeJobs'. A job starts when its
// user's turn has come; a check is judged against the delay and the lock
// once more just before it starts (`admitPasscodeAttempt`: refused, it never
// runs and its secret is wiped). Verdicts go through the core
// (`passcodeChecked`), which records them, durable before anyone hears them
// (S-40). A new passcode's record is stored by the shell (`.commitPasscode`)
// before its event is recorded; until the store answers
// (`passcodeCommitted`), the results that came with it wait, so events are
// recorded in the order the results came.
import LocalAuthCore
import LocalAuthProtocol

extension ServerCore {
    /// Starts every job the queue allows now.
    func startPasscodeJobs() {
        while let (uid, job) = passcodeJobs.next() {
            // A refused job is dropped here: its secrets are wiped with it.
            switch job.purpose {
            case .evaluation(_, let ctx, let eval, _):
                guard admit(uid, ctx: ctx, eval: eval) else {
                    passcodeJobs.refused(uid)
                    continue
                }
                submitCheck(job, uid)
            case .oldPasscode(_, _, let id, let tag):
                let connection = connections.contains(id) ? id : nil
                guard !refuseSetPasscodeAttempt(uid, connection, tag) else {
                    passcodeJobs.refused(uid)
                    continue
                }
                submitCheck(job, uid)
            case .newHash:
                passcodeJobs.started(job)
                actions.append(.runPasscodeJob(token: job.token, .record(secret: job.secret, make: passcodes.recordMaker)))
            }
        }
    }

    /// S-46 for an evaluation's attempt: false when refused now (the core
    /// then ended the evaluation with the delay's answer).
    private func admit(_ uid: UserID, ctx: ContextID, eval: EvaluationID) -> Bool {
        let outcome = run(.admitPasscodeAttempt(uid: uid, ctx: ctx, eval: eval), connection: nil, tag: nil, now: now)
        guard case .events(let events) = outcome, events.isEmpty else {
            counters.passcodeRefused += 1
            return false
        }
        return true
    }

    /// The check runs against the user's passcode as it is now, not as it
    /// was when the attempt was queued.
    private func submitCheck(_ job: PasscodeJob, _ uid: UserID) {
        counters.passcodeChecks += 1
        passcodeJobs.started(job)
        // S-74: a check that seals the login password where it is asked for.
        let work = keyringSealingJob(job, uid: uid) ?? .verify(secret: job.secret, check: passcodes.checker(for: uid))
        actions.append(.runPasscodeJob(token: job.token, work))
    }

    /// The workers' results (the shell drained them). After a new hash that
    /// the store must take first, the rest wait for its answer.
    package func passcodeJobsFinished(_ completions: [PasscodeWorkers.Completion]) {
        if passcodeJobs.isCommitting { return passcodeJobs.wait(completions) }
        for (index, completion) in completions.enumerated() {
            guard let check = passcodeJobs.finished(completion.token) else { continue }
            switch check {
            case .evaluation(let uid, let ctx, let eval, let requester):
                let repeated = passcodeJobs.isRepeat(uid, completion)
                let outcome = run(.passcodeChecked(uid: uid, ctx: ctx, eval: eval, correct: completion.correct, repeated: repeated,
                                                   requester: requester),
                                  connection: nil, tag: nil, now: now)
                if let sealed = completion.sealed { keyringPasswordChecked(uid: uid, ctx: ctx, eval: eval, sealed: sealed, outcome) }
            case .oldPasscode(let uid, let newSecret, let id, let tag):
                oldPasscodeChecked(uid, completion, newSecret: newSecret, connections.contains(id) ? id : nil, tag)
            case .newHash(let uid, let id, let tag, let by):
                let connection = connections.contains(id) ? id : nil
                guard let hash = newHash(completion, connection, tag) else { continue }
                passcodeJobs.commit(PendingCommit(uid: uid, set: true, by: by, connection: connection, tag: tag,
                                                  parksConnection: false),
                                    after: completions[(index + 1)...])
                return actions.append(.commitPasscode(uid: uid, record: hash))
            }
        }
        startPasscodeJobs()
    }

    /// The passcode store's answer to the oldest `.commitPasscode`: the
    /// change is recorded and answered (or its failure answered), then what
    /// waited for it goes on.
    func passcodeCommitted(_ result: Result<Void, any Error>) {
        guard let (commit, goOn) = passcodeJobs.committed() else { return }
        let connection = commit.connection.flatMap { connections.contains($0) ? $0 : nil }
        if case .failure(let error) = result {
            journal(.error, "Failed to write the passcode store: \(error)")
            if let connection { reply(connection, commit.tag, ProtocolError(.internal, "Failed to write the passcode store.")) }
        } else {
            let outcome = run(.changePasscode(uid: commit.uid, set: commit.set, by: commit.by), connection: connection,
                              tag: commit.tag, now: now)
            if let connection, events(outcome, connection, commit.tag) != nil { replyOK(connection, commit.tag) }
        }
        if commit.parksConnection, let connection { resumeAfterCommit(connection) }
        if let goOn { passcodeJobsFinished(goOn) }
    }

    /// clear-passcode: the record goes to the store; its connection waits.
    func removePasscodeRecord(_ commit: PendingCommit) {
        passcodeJobs.commit(commit)
        actions.append(.commitPasscode(uid: commit.uid, record: nil))
    }

    /// A clear-passcode's connection reads on once the store answered.
    private func resumeAfterCommit(_ id: Connection.ID) {
        guard connections[id]?.isParked == true else { return }
        connections[id]?.state = .open(.lines)
        processLinesAndWipe(id)
        guard connections[id]?.isReading == true else { return }
        actions.append(roster.watch(id, reading: true))
    }

    /// set-passcode's old secret was checked: only a recorded acceptance lets
    /// the change go on (a delay or lock reached meanwhile is a refusal).
    private func oldPasscodeChecked(_ uid: UserID, _ completion: PasscodeWorkers.Completion, newSecret: SecretBytes,
                                    _ connection: Connection.ID?, _ tag: String) {
        let repeated = passcodeJobs.isRepeat(uid, completion)
        let outcome = run(.passcodeChecked(uid: uid, ctx: nil, eval: nil, correct: completion.correct, repeated: repeated),
                          connection: nil, tag: nil, now: now)
        // Accepted: no answer from the core, the change goes on.
        if case .events = outcome {
            return queuePasscodeJob(.newHash(uid: uid, connection: connection ?? 0, tag: tag, by: uid),
                                    uid: uid, secret: newSecret, requester: connection ?? 0, connection, tag)
        }
        guard let connection else { return }
        // Refused (S-46) or wrong (S-36): the core's answer.
        if case .answered(let events, _) = outcome,
           events.contains(where: { if case .passcodeRefused = $0.body { return true } else { return false } }) {
            counters.passcodeRefused += 1
        }
        _ = self.events(outcome, connection, tag)
    }

    /// A new hash was made: the record to store, or nil (the failure answered).
    private func newHash(_ completion: PasscodeWorkers.Completion, _ connection: Connection.ID?, _ tag: String) -> String? {
        guard let hash = completion.hash else {
            journal(.error, "Failed to hash a passcode: \(completion.error ?? "unknown error")")
            if let connection { reply(connection, tag, ProtocolError(.internal, "Failed to hash the passcode.")) }
            return nil
        }
        return hash
    }
}
