// Which passcode job runs next (S-46, S-47). Jobs wait in one queue per
// user; users take turns (round-robin, in the order they first queued), at
// most one job per user runs at a time, and at most `workers` run at all. So
// however many checks one user pipelines, over one connection or many:
//   - no two of their checks overlap, and each is judged against the delay
//     just before it starts (the server asks the core at `next()`);
//   - another user's check waits for at most one job per worker;
//   - at most `perUserLimit` of their jobs wait; more are refused (`busy`).
// A value with no I/O: the server performs what it says.
import LocalAuthCore

struct PasscodeQueue<Job> {
    let workers: Int
    let perUserLimit: Int
    /// Waiting jobs of each user, oldest first.
    private var waiting: [UserID: [Job]] = [:]
    /// Users with waiting jobs, in turn order (each at most once).
    private var turns: [UserID] = []
    /// Users whose job is on a worker now.
    private(set) var running: Set<UserID> = []

    init(workers: Int, perUserLimit: Int) {
        self.workers = max(1, workers)
        self.perUserLimit = max(1, perUserLimit)
    }

    /// Jobs waiting (not running), over all users.
    private(set) var waitingCount = 0

    func waitingCount(of uid: UserID) -> Int { waiting[uid]?.count ?? 0 }

    /// Whether `uid` may queue one more job.
    func hasRoom(for uid: UserID) -> Bool { waitingCount(of: uid) < perUserLimit }

    /// Queues a job; false (and nothing queued) when the user's queue is full.
    mutating func enqueue(_ job: Job, for uid: UserID) -> Bool {
        guard hasRoom(for: uid) else { return false }
        if waiting[uid, default: []].isEmpty, !turns.contains(uid) { turns.append(uid) }
        waiting[uid, default: []].append(job)
        waitingCount += 1
        return true
    }

    /// The next job to start, if a worker is free and some user with waiting
    /// jobs has none running; that user goes to the back of the turns and
    /// counts as running until `finished(uid)`.
    mutating func next() -> (uid: UserID, job: Job)? {
        guard running.count < workers else { return nil }
        guard let index = turns.firstIndex(where: { !running.contains($0) }) else { return nil }
        let uid = turns.remove(at: index)
        var jobs = waiting.removeValue(forKey: uid) ?? []
        let job = jobs.removeFirst()
        waitingCount -= 1
        if !jobs.isEmpty {
            waiting[uid] = jobs
            turns.append(uid)
        }
        running.insert(uid)
        return (uid, job)
    }

    /// The user's running job is done (its verdict arrived, or it was refused
    /// before it started).
    mutating func finished(_ uid: UserID) {
        running.remove(uid)
    }

    /// Removes and returns every waiting job (shutdown, log failure).
    mutating func drainWaiting() -> [Job] {
        var all: [Job] = []
        for uid in turns { all += waiting[uid] ?? [] }
        waiting.removeAll()
        turns.removeAll()
        waitingCount = 0
        return all
    }
}
