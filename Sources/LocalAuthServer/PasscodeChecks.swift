// Running queued passcode jobs and taking their results (S-46, S-47). A job
// starts when `PasscodeQueue` says its user's turn has come; a check is
// judged against the delay and the lock once more just before it starts
// (`admitPasscodeAttempt`: refused, it never runs and its secret is wiped).
// Verdicts go through the core (`passcodeChecked`), which records them,
// durable before anyone hears them (S-40). A new passcode's record is
// stored by the shell (`.commitPasscode`) before its event is recorded;
// until the store answers (`passcodeCommitted`), the results that came with
// it wait, so events are recorded in the order the results came.
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

    /// The workers' results (the shell drained them). After a new hash that
    /// the store must take first, the rest wait for its answer.
    package func passcodeJobsFinished(_ completions: [PasscodeWorkers.Completion]) {
        if !passcodeCommits.isEmpty { return afterCommits.append(contentsOf: completions) }
        for (index, completion) in completions.enumerated() {
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
                guard newHashMade(uid, completion, connections.contains(id) ? id : nil, tag, by: by) else { continue }
                afterCommits.append(contentsOf: completions[(index + 1)...])
                return
            }
        }
        startPasscodeJobs()
    }

    /// The passcode store's answer to the oldest `.commitPasscode`: the
    /// change is recorded and answered (or its failure answered), then what
    /// waited for it goes on.
    func passcodeCommitted(_ result: Result<Void, any Error>) {
        guard !passcodeCommits.isEmpty else { return }
        let commit = passcodeCommits.removeFirst()
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
        // A new hash's job was done: the results after it, and the jobs they let start.
        guard passcodeCommits.isEmpty, !commit.parksConnection || !afterCommits.isEmpty else { return }
        let waiting = afterCommits
        afterCommits.removeAll()
        passcodeJobsFinished(waiting)
    }

    /// Asks the shell to store `record` for `uid` (nil removes it); the
    /// change is recorded once it answers.
    func commitPasscode(_ record: String?, _ commit: PendingCommit) {
        passcodeCommits.append(commit)
        actions.append(.commitPasscode(uid: commit.uid, record: record))
    }

    /// A clear-passcode's connection reads on once the store answered.
    private func resumeAfterCommit(_ id: Connection.ID) {
        guard connections[id]?.isParked == true else { return }
        connections[id]?.state = .open(.lines)
        processLinesAndWipe(id)
        guard connections[id]?.isReading == true else { return }
        actions.append(.watch(id, reading: true, writing: watchingWritable.contains(id)))
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

    /// A new hash was made: true when its commit was asked for (the
    /// change is recorded when the store answers).
    private func newHashMade(_ uid: UserID, _ completion: PasscodeWorkers.Completion, _ connection: Connection.ID?,
                             _ tag: String, by: UserID) -> Bool {
        guard let hash = completion.hash else {
            journal(.error, "Failed to hash a passcode: \(completion.error ?? "unknown error")")
            if let connection { reply(connection, tag, ProtocolError(.internal, "Failed to hash the passcode.")) }
            return false
        }
        commitPasscode(hash, PendingCommit(uid: uid, set: true, by: by, connection: connection, tag: tag, parksConnection: false))
        return true
    }

    /// S-7: whether this wrong attempt repeats the previous wrong one.
    private func judge(_ uid: UserID, _ completion: PasscodeWorkers.Completion) -> Bool {
        wrongPasscodes.isRepeat(uid, correct: completion.correct, fingerprint: completion.fingerprint)
    }
}

/// A passcode change waiting for the store's answer (`passcodeCommitted`).
struct PendingCommit {
    let uid: UserID
    /// A new record (set-passcode), or none (clear-passcode).
    let set: Bool
    let by: UserID
    /// Who asked, and the tag of the answer (nil: gone already).
    let connection: Connection.ID?
    let tag: String
    /// clear-passcode: its connection reads nothing more until the answer
    /// (its later lines' replies keep their order).
    let parksConnection: Bool
}
