// LARight's rights as the core keeps them (PROTOCOL.md v1.1, v1.4), a value
// with no I/O: the store in memory and the key that seals its secrets; the
// grants on contexts and the right-authorizes whose evaluation runs; the
// store's writes off the loop (one in flight, the changes made meanwhile
// wait for the next one, which carries them all: group commit); and the key
// operations (S-81: users in turn, one per user running, at most
// `keyJobsPerUser` waiting). Its methods answer with what to do: the write
// to start (`.writeRights`), the waiters to answer once a write is durable
// or failed, the key job to run (`.runKeyJob`) and the job a result was
// for. The core records the events, replies and appends the actions
// (RightVerbs.swift, RightKeyVerbs.swift, RightStoreWrites.swift).
import LocalAuthCore

/// A running right-authorize, waiting for its evaluation's outcome.
struct PendingRightAuthorization {
    var uid: UserID
    var identifier: String
    var generation: UInt64
}

/// A change waiting for the store to be durable: who to answer, what to record.
struct RightWaiter {
    /// nil: the daemon's own change (S-59's drops), recorded and answered to nobody.
    var connection: Connection.ID?
    var tag: String
    var facts: [RightFact]
}

/// How a write of the store ended (`SavedRights.written`).
enum RightsWriteAnswer {
    /// Durable: each waiter's facts are to be recorded and answered, in order.
    case durable([RightWaiter])
    /// Failed: the store rolled back to its last durable bytes; every change
    /// since, in flight or waiting, is to be answered `internal`.
    case failed([RightWaiter])
}

struct SavedRights {
    /// S-81: waiting key operations per uid; more are refused with `busy`.
    static let keyJobsPerUser = 4
    /// The key workers: the shell's threads (KeyWorkers) and the jobs the
    /// queue lets run at once, one number.
    static let keyWorkers = 2

    /// The rights of every uid; the daemon opens the store before it serves.
    var store = RightStore(path: "/dev/null")
    /// The key of the secrets and the rights' private keys (SecretKey.swift).
    var secretKey: [UInt8] = []
    /// Rights granted on a context (identifier -> the right's generation).
    private var grants: [ContextID: [String: UInt64]] = [:]
    /// right-authorizes whose evaluation runs, by context.
    private var authorizing: [ContextID: PendingRightAuthorization] = [:]
    /// The write in flight (the rights it holds, whom it answers), and the
    /// changes waiting for the next one.
    private var inFlight: (token: UInt64, snapshot: [UserID: [String: StoredRight]], waiters: [RightWaiter])?
    private var waiting: [RightWaiter] = []
    private var nextWriteToken: UInt64 = 1
    /// Key operations waiting (users in turn), and running on a worker by token.
    private var keyQueue = PasscodeQueue<PendingKeyJob>(workers: Self.keyWorkers, perPrincipalLimit: Self.keyJobsPerUser)
    private var runningKeyJobs: [UInt64: PendingKeyJob] = [:]
    private var nextKeyToken: UInt64 = 1

    /// No write and no key operation waits or runs (S-83).
    var isIdle: Bool { inFlight == nil && waiting.isEmpty && keyQueue.waitingCount == 0 && runningKeyJobs.isEmpty }

    // MARK: - Grants and right-authorize

    /// Whether any context holds a grant or runs a right-authorize (the
    /// usual connection has none: its close and its evaluations skip the rest).
    var touchesContexts: Bool { !grants.isEmpty || !authorizing.isEmpty }
    var isAuthorizing: Bool { !authorizing.isEmpty }

    func isAuthorizing(_ ctx: ContextID) -> Bool { authorizing[ctx] != nil }

    /// Whether `identifier` is granted on `ctx` for the save of `generation`.
    func isGranted(_ identifier: String, on ctx: ContextID, generation: UInt64) -> Bool {
        grants[ctx]?[identifier] == generation
    }

    mutating func beginAuthorization(_ pending: PendingRightAuthorization, on ctx: ContextID) { authorizing[ctx] = pending }

    /// The right-authorize on `ctx` ended (failed, or never started); what it was, if any.
    @discardableResult
    mutating func endAuthorization(on ctx: ContextID) -> PendingRightAuthorization? { authorizing.removeValue(forKey: ctx) }

    /// Its success was recorded: the right is granted on the context.
    mutating func grant(_ pending: PendingRightAuthorization, on ctx: ContextID) {
        grants[ctx, default: [:]][pending.identifier] = pending.generation
    }

    mutating func deauthorize(_ identifier: String, on ctx: ContextID) {
        grants[ctx]?[identifier] = nil
        if grants[ctx]?.isEmpty == true { grants[ctx] = nil }
    }

    /// A closing connection's contexts take their grants with them.
    mutating func forget(_ contexts: some Sequence<ContextID>) {
        for ctx in contexts {
            grants[ctx] = nil
            authorizing[ctx] = nil
        }
    }

    // MARK: - The store's writes

    /// A change is in the store's memory: the write to start now, if none
    /// is in flight (else it goes with the next one).
    mutating func awaitWrite(_ waiter: RightWaiter) -> RightsWrite? {
        waiting.append(waiter)
        return inFlight == nil ? nextWrite() : nil
    }

    /// The write of the changes waiting, when none is in flight.
    mutating func nextWrite() -> RightsWrite? {
        guard inFlight == nil, !waiting.isEmpty else { return nil }
        let token = nextWriteToken
        nextWriteToken += 1
        inFlight = (token, store.current, waiting)
        waiting = []
        return RightsWrite(token: token, path: store.path, bytes: store.encoded())
    }

    /// The shell's answer to the write `token` (failed or durable); nil
    /// for an answer to no write in flight.
    mutating func written(_ token: UInt64, failed: Bool) -> RightsWriteAnswer? {
        guard let written = inFlight, written.token == token else { return nil }
        inFlight = nil
        guard !failed else {
            store.rollBack()
            defer { waiting = [] }
            return .failed(written.waiters + waiting)
        }
        store.written(written.snapshot)
        return .durable(written.waiters)
    }

    // MARK: - Key operations (S-81)

    /// S-53: operations wait in their principal's queue; `unlimited` for
    /// those S-47 does not cap (administrators).
    func keyQueueHasRoom(for principal: UserID, unlimited: Bool) -> Bool { keyQueue.hasRoom(for: principal, unlimited: unlimited) }

    /// Queues an admitted operation; false when its user has as many waiting as allowed.
    mutating func enqueueKeyJob(_ job: PendingKeyJob, principal: UserID, unlimited: Bool) -> Bool {
        keyQueue.enqueue(job, subject: job.uid, principal: principal, unlimited: unlimited)
    }

    /// The next operation whose turn came; `keyJobStarted` or `keyJobDropped` must follow.
    mutating func nextKeyJob() -> PendingKeyJob? { keyQueue.next()?.job }

    /// It was refused when its turn came (or its requester is gone): its user's turn ends.
    mutating func keyJobDropped(_ job: PendingKeyJob) { keyQueue.finished(job.uid) }

    /// It goes to a worker, without its input: the token its result comes back with.
    mutating func keyJobStarted(_ job: PendingKeyJob) -> UInt64 {
        let token = nextKeyToken
        nextKeyToken += 1
        var running = job
        running.input = []
        runningKeyJobs[token] = running
        return token
    }

    /// A worker's result: the operation it was for (nil: unknown), its user's turn over.
    mutating func keyJobFinished(_ token: UInt64) -> PendingKeyJob? {
        guard let job = runningKeyJobs.removeValue(forKey: token) else { return nil }
        keyQueue.finished(job.uid)
        return job
    }
}
