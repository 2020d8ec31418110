// Every passcode job of the daemon (S-46, S-47), a value with no I/O: the
// queue (`PasscodeQueue`: one job per subject at a time, principals in turn
// (S-53), at most one per worker), the jobs on a worker and what to do with each result,
// the results to ignore (the log failed while they ran), the passcode
// records the shell is storing (`.commitPasscode`) and the results that
// wait for the store's answer, and S-7's memory of each user's last wrong
// passcode. The core asks it what runs next and what a result was for, and
// runs the commands that record verdicts; the workers are the shell's.
import LocalAuthCore
import LocalAuthProtocol

/// A passcode job in flight or waiting, and what to do with its result.
package enum PendingCheck {
    /// `requester` (S-54): the context's requester when the attempt was
    /// submitted; its verdict counts for that pair even if the context is gone.
    case evaluation(uid: UserID, ctx: ContextID, eval: EvaluationID, requester: UserID? = nil)
    case oldPasscode(uid: UserID, newSecret: SecretBytes, connection: Connection.ID, tag: String)
    case newHash(uid: UserID, connection: Connection.ID, tag: String, by: UserID)
}

extension PendingCheck {
    /// The user whose passcode the job is about (the queue's key).
    package var uid: UserID {
        switch self {
        case .evaluation(let uid, _, _, _), .oldPasscode(let uid, _, _, _), .newHash(let uid, _, _, _): return uid
        }
    }
}

/// A queued job: its purpose and the secret it needs (wiped in memory when
/// the job is done or dropped: `SecretBytes`).
struct PasscodeJob {
    var token: UInt64
    var purpose: PendingCheck
    var secret: SecretBytes
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

package struct PasscodeJobs {
    /// S-47: passcode jobs one user (a principal, S-53) may have waiting
    /// (besides those running).
    static let perUser = 4
    /// The passcode workers: the shell's threads (PasscodeWorkers) and the
    /// jobs the queue lets run at once, one number (S-47's bound on how long
    /// another user's check waits is one job per worker).
    static let workers = 2

    private var queue: PasscodeQueue<PasscodeJob>
    /// Jobs on a worker, by token.
    package private(set) var running: [UInt64: PendingCheck] = [:]
    /// Running jobs whose results are to be ignored (the log failed meanwhile).
    private var abandoned: Set<UInt64> = []
    private var nextToken: UInt64 = 1
    /// S-7: fingerprint of each user's last wrong passcode, in memory only.
    private var wrongPasscodes = WrongPasscodeMemory()
    /// Records the shell is storing, oldest first, and the workers' results
    /// that wait for them.
    private var commits: [PendingCommit] = []
    private var afterCommits: [PasscodeWorkers.Completion] = []

    init(workers: Int = PasscodeJobs.workers) {
        queue = PasscodeQueue(workers: workers, perPrincipalLimit: Self.perUser)
    }

    var waitingCount: Int { queue.waitingCount }
    var runningCount: Int { running.count }

    /// Whether `principal` may queue one more job (S-47, S-53; `unlimited`:
    /// root's own processes).
    func hasRoom(for principal: UserID, unlimited: Bool = false) -> Bool {
        queue.hasRoom(for: principal, unlimited: unlimited)
    }

    /// Queues a job about `subject` in the queue of `principal` (S-53: the
    /// user who asked); false when that principal already has as many
    /// waiting as allowed (S-47: `busy`).
    mutating func enqueue(_ purpose: PendingCheck, subject: UserID, principal: UserID, unlimited: Bool = false,
                          secret: SecretBytes) -> Bool {
        let token = nextToken
        nextToken += 1
        return queue.enqueue(PasscodeJob(token: token, purpose: purpose, secret: secret), subject: subject,
                             principal: principal, unlimited: unlimited)
    }

    /// Queues a job that `uid` asked about itself.
    mutating func enqueue(_ purpose: PendingCheck, for uid: UserID, secret: SecretBytes) -> Bool {
        enqueue(purpose, subject: uid, principal: uid, secret: secret)
    }

    /// The next job whose turn came (a worker is free and its user has none
    /// running); `started` or `refused` must follow.
    mutating func next() -> (uid: UserID, job: PasscodeJob)? { queue.next() }

    /// The job went to a worker.
    mutating func started(_ job: PasscodeJob) { running[job.token] = job.purpose }

    /// The job was refused just before it started (S-46): its user's turn ends.
    mutating func refused(_ uid: UserID) { queue.finished(uid) }

    /// A worker's result: what the job was for, its user's turn over; nil
    /// for a result to ignore (unknown, or abandoned when the log failed).
    mutating func finished(_ token: UInt64) -> PendingCheck? {
        guard let check = running.removeValue(forKey: token) else { return nil }
        queue.finished(check.uid)
        if abandoned.remove(token) != nil { return nil }
        return check
    }

    /// The log failed: verdicts still on a worker will not be recorded, and
    /// the waiting jobs are dropped, their secrets wiped.
    mutating func abandonAll() {
        abandoned.formUnion(running.keys)
        _ = queue.drainWaiting()
    }

    /// S-7: whether this wrong attempt repeats `uid`'s previous wrong one.
    mutating func isRepeat(_ uid: UserID, _ completion: PasscodeWorkers.Completion) -> Bool {
        wrongPasscodes.isRepeat(uid, correct: completion.correct, fingerprint: completion.fingerprint)
    }

    /// S-7: a new passcode or a reset starts the repeat memory afresh.
    mutating func fold(_ event: EventBody) { wrongPasscodes.fold(event) }

    // MARK: - The store's answers

    /// Whether results must wait: a record is being stored.
    var isCommitting: Bool { !commits.isEmpty }

    /// A record goes to the store; `rest` (results that came after the
    /// one that asked) waits for its answer.
    mutating func commit(_ commit: PendingCommit, after rest: ArraySlice<PasscodeWorkers.Completion> = []) {
        commits.append(commit)
        afterCommits.append(contentsOf: rest)
    }

    /// Results that came while a record is being stored: they wait.
    mutating func wait(_ completions: [PasscodeWorkers.Completion]) { afterCommits.append(contentsOf: completions) }

    /// The store answered the oldest commit: it, and the results that may go
    /// on now (nil: none; a set-passcode's always go on, so that the jobs
    /// they let start do).
    mutating func committed() -> (commit: PendingCommit, goOn: [PasscodeWorkers.Completion]?)? {
        guard !commits.isEmpty else { return nil }
        let commit = commits.removeFirst()
        guard commits.isEmpty, !commit.parksConnection || !afterCommits.isEmpty else { return (commit, nil) }
        defer { afterCommits.removeAll() }
        return (commit, afterCommits)
    }
}
