// Running queued passcode jobs and taking their results (S-46, S-47). A job
// starts when `PasscodeQueue` says its user's turn has come; a check is
// judged against the delay and the lock once more just before it starts
// (`admitPasscodeAttempt`: refused, it never runs and its secret is wiped).
// Verdicts go through the core (`passcodeChecked`), which records them,
// durable before anyone hears them (S-40).
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension ServerCore {
    /// Starts every job the queue allows now.
    func startPasscodeJobs() {
        while let (uid, job) = passcodeQueue.next() {
            // A refused job is dropped here: its secrets are wiped with it.
            switch job.purpose {
            case .evaluation(_, let ctx, let eval):
                guard admit(uid, ctx: ctx, eval: eval) else {
                    passcodeQueue.finished(uid)
                    continue
                }
                submitCheck(job, uid)
            case .oldPasscode(_, _, let id, let tag):
                let connection = connections.contains(id) ? id : nil
                guard !refuseSetPasscodeAttempt(uid, connection, tag) else {
                    passcodeQueue.finished(uid)
                    continue
                }
                submitCheck(job, uid)
            case .newHash:
                running[job.token] = job.purpose
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
        running[job.token] = job.purpose
        actions.append(.runPasscodeJob(token: job.token, .verify(secret: job.secret, check: passcodes.checker(for: uid))))
    }

    /// The workers' results (the shell drained them).
    func passcodeJobsFinished(_ completions: [PasscodeWorkers.Completion]) {
        for completion in completions {
            guard let check = running.removeValue(forKey: completion.token) else { continue }
            if abandonedChecks.remove(completion.token) != nil {
                passcodeQueue.finished(check.uid)
                continue
            }
            switch check {
            case .evaluation(let uid, let ctx, let eval):
                passcodeQueue.finished(uid)
                let repeated = judge(uid, completion)
                run(.passcodeChecked(uid: uid, ctx: ctx, eval: eval, correct: completion.correct, repeated: repeated),
                    connection: nil, tag: nil, now: now)
            case .oldPasscode(let uid, let newSecret, let id, let tag):
                passcodeQueue.finished(uid)
                oldPasscodeChecked(uid, completion, newSecret: newSecret, connections.contains(id) ? id : nil, tag)
            case .newHash(let uid, let id, let tag, let by):
                passcodeQueue.finished(uid)
                newHashMade(uid, completion, connections.contains(id) ? id : nil, tag, by: by)
            }
        }
        startPasscodeJobs()
    }

    /// set-passcode's old secret was checked: only a recorded acceptance lets
    /// the change go on (a delay or lock reached meanwhile is a refusal).
    private func oldPasscodeChecked(_ uid: UserID, _ completion: PasscodeWorkers.Completion, newSecret: SecretBytes,
                                    _ connection: Connection.ID?, _ tag: String) {
        let repeated = judge(uid, completion)
        let outcome = run(.passcodeChecked(uid: uid, ctx: nil, eval: nil, correct: completion.correct, repeated: repeated),
                          connection: nil, tag: nil, now: now)
        // Accepted: no answer from the core, the change goes on.
        if case .events = outcome {
            return queuePasscodeJob(.newHash(uid: uid, connection: connection ?? 0, tag: tag, by: uid),
                                    uid: uid, secret: newSecret, connection, tag)
        }
        guard let connection else { return }
        // Refused (S-46) or wrong (S-36): the core's answer.
        if case .answered(let events, _) = outcome,
           events.contains(where: { if case .passcodeRefused = $0.body { return true } else { return false } }) {
            counters.passcodeRefused += 1
        }
        _ = self.events(outcome, connection, tag)
    }

    private func newHashMade(_ uid: UserID, _ completion: PasscodeWorkers.Completion, _ connection: Connection.ID?,
                             _ tag: String, by: UserID) {
        guard let hash = completion.hash else {
            journal(.error, "Failed to hash a passcode: \(completion.error ?? "unknown error")")
            if let connection { reply(connection, tag, ProtocolError(.internal, "Failed to hash the passcode.")) }
            return
        }
        do {
            try passcodes.commit(hash, for: uid)
        } catch {
            journal(.error, "Failed to write the passcode store: \(error)")
            if let connection { reply(connection, tag, ProtocolError(.internal, "Failed to write the passcode store.")) }
            return
        }
        let outcome = run(.changePasscode(uid: uid, set: true, by: by), connection: connection, tag: tag, now: now)
        if let connection, events(outcome, connection, tag) != nil { replyOK(connection, tag) }
    }

    /// S-7: whether this wrong attempt repeats the previous wrong one.
    private func judge(_ uid: UserID, _ completion: PasscodeWorkers.Completion) -> Bool {
        wrongPasscodes.isRepeat(uid, correct: completion.correct, fingerprint: completion.fingerprint)
    }
}
