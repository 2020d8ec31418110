// Which passcode job runs next (S-46, S-47, S-53). Jobs wait in one queue
// per principal, the user who asked (S-53: with their subordinate uids and
// the setuid programs they run, such as su and sudo); principals take turns
// (round-robin, in the order they first queued), at most one job per
// subject (the user whose passcode is checked) runs at a time, and at most
// `workers` run at all. So however many checks one user pipelines, over one
// connection or many, through however many uids:
//   - no two checks of one subject overlap, and each is judged against the
//     delay just before it starts (the server asks the core at `next()`);
//   - another user's check waits for at most one job per worker;
//   - at most `perPrincipalLimit` of a principal's jobs wait; more are
//     refused (`busy`), except root's own processes' (bounded by their
//     contexts: one passcode per evaluation at a time).
// A value with no I/O: the server performs what it says.
import LocalAuthCore

struct PasscodeQueue<Job> {
    let workers: Int
    let perPrincipalLimit: Int
    /// Waiting jobs of each principal, oldest first, with their subjects.
    private var waiting: [UserID: [(subject: UserID, job: Job)]] = [:]
    /// Principals with waiting jobs, in turn order (each at most once).
    private var turns: [UserID] = []
    /// Subjects whose job is on a worker now.
    private(set) var running: Set<UserID> = []

    init(workers: Int, perPrincipalLimit: Int) {
        self.workers = max(1, workers)
        self.perPrincipalLimit = max(1, perPrincipalLimit)
    }

    /// Jobs waiting (not running), over all principals.
    private(set) var waitingCount = 0

    func waitingCount(of principal: UserID) -> Int { waiting[principal]?.count ?? 0 }

    /// Whether `principal` may queue one more job (`unlimited`: root's own).
    func hasRoom(for principal: UserID, unlimited: Bool = false) -> Bool {
        unlimited || waitingCount(of: principal) < perPrincipalLimit
    }

    /// Queues a job; false (and nothing queued) when the principal's queue is full.
    mutating func enqueue(_ job: Job, subject: UserID, principal: UserID, unlimited: Bool = false) -> Bool {
        guard hasRoom(for: principal, unlimited: unlimited) else { return false }
        if waiting[principal, default: []].isEmpty, !turns.contains(principal) { turns.append(principal) }
        waiting[principal, default: []].append((subject, job))
        waitingCount += 1
        return true
    }

    /// The next job to start, if a worker is free and some principal has a
    /// waiting job whose subject has none running; that principal goes to
    /// the back of the turns, and the subject counts as running until
    /// `finished(subject)`.
    mutating func next() -> (uid: UserID, job: Job)? {
        guard running.count < workers else { return nil }
        for (turn, principal) in turns.enumerated() {
            guard var jobs = waiting[principal],
                  let index = jobs.firstIndex(where: { !running.contains($0.subject) }) else { continue }
            let (subject, job) = jobs.remove(at: index)
            waitingCount -= 1
            turns.remove(at: turn)
            if jobs.isEmpty {
                waiting[principal] = nil
            } else {
                waiting[principal] = jobs
                turns.append(principal)
            }
            running.insert(subject)
            return (subject, job)
        }
        return nil
    }

    /// The subject's running job is done (its verdict arrived, or it was
    /// refused before it started).
    mutating func finished(_ subject: UserID) {
        running.remove(subject)
    }

    /// Removes and returns every waiting job (shutdown, log failure).
    mutating func drainWaiting() -> [Job] {
        var all: [Job] = []
        for principal in turns { all += (waiting[principal] ?? []).map(\.job) }
        waiting.removeAll()
        turns.removeAll()
        waitingCount = 0
        return all
    }
}
