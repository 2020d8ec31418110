// The invariants the simulator checks after every step, each from its own
// bookkeeping rather than from the code under test: S-33 (one final answer
// per evaluation, from what the clients received), S-38 (the live state is
// the fold of the log, decoded from the simulated disk's bytes), S-40 (no
// byte sent and no journal entry written reveals a failure before it is
// durable: RevealMarks), S-41 (a failed log refuses: clients hear
// `unavailable`; a rotted one is refused at restart, never cut as a torn
// tail), S-46 (no check started, and no verdict folded, during a delay or
// lock) and no lockout bypass across a crash. This file keeps the verdicts
// and the counts; the checks sit where their evidence is.
import LocalAuthCore

public final class Oracle {
    /// The first violation, and where it happened.
    public private(set) var violations: [String] = []
    var step = 0
    /// Counts for the report.
    public private(set) var figures = Figures()

    public struct Figures: Sendable, Equatable {
        public init() {}
        public var steps = 0
        public var events = 0
        public var canEvaluates = 0
        public var evaluationsAnswered = 0
        public var failuresRevealed = 0
        public var refusedWhileFailed = 0
        public var restarts = 0
        public var cleanStops = 0
        public var reopens = 0
        public var clockSetBacks = 0
        public var ruleReloads = 0
        public var tornTailsCut = 0
        public var faults: [DiskFault: Int] = [:]
        public var hostileLines = 0
        public var disconnects = 0
        public var logFailures = 0
        public var trailEntries = 0
        public var checkRuns = 0
        public var spaceChanges = 0
        public var reserveRefusals = 0
        public var passcodeJobs = 0
        public var shortWrites = 0
        public var splitReads = 0
        public var watchStates = 0
        public var refusedStarts = 0
        public var startsFromSnapshot = 0
        public var repairs = 0
        public var snapshotsWritten = 0
        /// S-60: combined prompts received, and biometric prompts whose
        /// passcode half had ended (retry-after); scans judged against the log.
        public var combinedPrompts = 0
        public var passcodeHalvesEnded = 0
        public var scansJudged = 0
        /// S-66: evaluations an app heard go to its session's agent, and
        /// the prompt lines agents were sent.
        public var routedEvaluations = 0
        public var agentPrompts = 0
        /// S-68: routed evaluations ended because their agent went away,
        /// and the apps' answers to their agents' prompts refused.
        public var agentsGone = 0
        public var appAnswersRefused = 0
    }

    func violation(_ text: String) {
        violations.append("step \(step): \(text)")
    }

    /// A record folded by the S-38 shadow: S-46 judged on the state before
    /// it, at the time the daemon decided it.
    func recorded(_ event: Event, seq: UInt64, before: AuthState) {
        figures.events += 1
        switch event.body {
        case .policyChecked: figures.canEvaluates += 1
        case .policyCheckedRepeatedly(let run):
            figures.canEvaluates += Int(run.count)
            figures.checkRuns += 1
        case .passcodeAccepted(let uid, _, _), .passcodeRejected(let uid, _, _, _, _):
            if let refusal = before.passcodeEntryRefusal(uid, now: event.time) {
                violation("S-46: a passcode verdict for uid \(uid) was accepted during \(refusal.message) (seq \(seq))")
            }
        default:
            break
        }
    }

    func count(step: Void) { figures.steps += 1 }
    func countHostileLine() { figures.hostileLines += 1 }
    func countDisconnect() { figures.disconnects += 1 }
    func countCleanStop() { figures.cleanStops += 1 }
    func countTornTail() { figures.tornTailsCut += 1 }
    func countReopen() { figures.reopens += 1 }
    func countClockSetBack() { figures.clockSetBacks += 1 }
    func countReload() { figures.ruleReloads += 1 }
    /// The newest failure seq that reached a client or the journal.
    private(set) var newestRevealedFailure: UInt64 = 0
    func answeredEvaluation() { figures.evaluationsAnswered += 1 }
    func refusedWhileFailed() { figures.refusedWhileFailed += 1 }
    func logFailed() { figures.logFailures += 1 }
    func countTrailEntry() { figures.trailEntries += 1 }
    func countSpaceChange() { figures.spaceChanges += 1 }
    func countReserveRefusal() { figures.reserveRefusals += 1 }
    func countPasscodeJob() { figures.passcodeJobs += 1 }
    func countShortWrite() { figures.shortWrites += 1 }
    func countSplitRead() { figures.splitReads += 1 }
    func countWatchState() { figures.watchStates += 1 }
    func countRefusedStart() { figures.refusedStarts += 1 }
    func countStartFromSnapshot() { figures.startsFromSnapshot += 1 }
    func countRepair() { figures.repairs += 1 }
    /// A repair cut the log after `kept`: the failures revealed after it are
    /// lost on purpose, and the repair record stands for them at their worst (S-41).
    func repaired(keeping kept: UInt64) { newestRevealedFailure = min(newestRevealedFailure, kept) }
    func countSnapshotWrite() { figures.snapshotsWritten += 1 }
    func countRoutedEvaluation() { figures.routedEvaluations += 1 }
    func countAgentPrompt() { figures.agentPrompts += 1 }
    func countAgentGone() { figures.agentsGone += 1 }
    func countAppAnswerRefused() { figures.appAnswersRefused += 1 }
    func countCombinedPrompt(halfEnded: Bool) {
        if halfEnded { figures.passcodeHalvesEnded += 1 } else { figures.combinedPrompts += 1 }
    }

    /// S-27, S-60: the sensor scans for a user exactly while the log's fold
    /// says their prompt holder waits at a biometric or combined prompt (a
    /// scan left running is a claim never released; one missing, a prompt
    /// that cannot be answered).
    func judgeScans(scanning: Set<UserID>, fold: AuthState) {
        var expected: Set<UserID> = []
        for (uid, user) in fold.users {
            if let holder = user.promptHolder, fold.contexts[holder]?.evaluation?.isScanning == true { expected.insert(uid) }
        }
        figures.scansJudged += 1
        guard scanning != expected else { return }
        violation("S-60: the sensor scans for \(scanning.sorted()) but the log's prompts want \(expected.sorted())")
    }
    func restarted() { figures.restarts += 1 }
    /// Output revealed `count` durable failures, the newest at `newest`.
    func revealed(_ count: Int, newest: UInt64) {
        figures.failuresRevealed += count
        newestRevealedFailure = max(newestRevealedFailure, newest)
    }
    func count(_ fault: DiskFault) { figures.faults[fault, default: 0] += 1 }


    /// S-38: the live state against the fold of the log's bytes.
    func compare(live: AuthState, fold: AuthState, _ when: String) {
        guard live != fold else { return }
        var differences: [String] = []
        if live.contexts != fold.contexts { differences.append("contexts") }
        if live.users != fold.users { differences.append("users") }
        if live.rules != fold.rules { differences.append("rules") }
        if live.eventCount != fold.eventCount { differences.append("eventCount \(live.eventCount) vs \(fold.eventCount)") }
        if live.clockHighWater != fold.clockHighWater { differences.append("clockHighWater") }
        if live.prompting != fold.prompting { differences.append("prompting") }
        violation("S-38: \(when): the live state differs from the fold of the log in \(differences.joined(separator: ", "))")
    }
}

extension Oracle.Figures {
    public mutating func add(_ other: Oracle.Figures) {
        steps += other.steps
        events += other.events
        canEvaluates += other.canEvaluates
        evaluationsAnswered += other.evaluationsAnswered
        failuresRevealed += other.failuresRevealed
        refusedWhileFailed += other.refusedWhileFailed
        restarts += other.restarts
        cleanStops += other.cleanStops
        reopens += other.reopens
        clockSetBacks += other.clockSetBacks
        ruleReloads += other.ruleReloads
        tornTailsCut += other.tornTailsCut
        hostileLines += other.hostileLines
        disconnects += other.disconnects
        logFailures += other.logFailures
        trailEntries += other.trailEntries
        checkRuns += other.checkRuns
        spaceChanges += other.spaceChanges
        reserveRefusals += other.reserveRefusals
        passcodeJobs += other.passcodeJobs
        shortWrites += other.shortWrites
        splitReads += other.splitReads
        watchStates += other.watchStates
        refusedStarts += other.refusedStarts
        startsFromSnapshot += other.startsFromSnapshot
        repairs += other.repairs
        snapshotsWritten += other.snapshotsWritten
        combinedPrompts += other.combinedPrompts
        passcodeHalvesEnded += other.passcodeHalvesEnded
        scansJudged += other.scansJudged
        routedEvaluations += other.routedEvaluations
        agentPrompts += other.agentPrompts
        agentsGone += other.agentsGone
        appAnswersRefused += other.appAnswersRefused
        for (fault, count) in other.faults { faults[fault, default: 0] += count }
    }

    /// One line of key=value pairs (a test reads the figures of a run it spawned).
    public var record: String {
        var pairs = [("steps", steps), ("events", events), ("can-evaluates", canEvaluates),
                     ("evaluations-answered", evaluationsAnswered), ("failures-revealed", failuresRevealed),
                     ("log-failures", logFailures), ("refused-while-failed", refusedWhileFailed), ("restarts", restarts),
                     ("clean-stops", cleanStops), ("reopens", reopens), ("torn-tails", tornTailsCut),
                     ("hostile-lines", hostileLines), ("disconnects", disconnects), ("trail-entries", trailEntries), ("check-runs", checkRuns), ("space-changes", spaceChanges), ("reserve-refusals", reserveRefusals),
                     ("passcode-jobs", passcodeJobs), ("short-writes", shortWrites), ("split-reads", splitReads),
                     ("watch-states", watchStates), ("combined-prompts", combinedPrompts),
                     ("passcode-halves-ended", passcodeHalvesEnded), ("routed-evaluations", routedEvaluations),
                     ("agent-prompts", agentPrompts), ("agents-gone", agentsGone),
                     ("app-answers-refused", appAnswersRefused), ("refused-starts", refusedStarts),
                     ("starts-from-snapshot", startsFromSnapshot), ("repairs", repairs), ("snapshots-written", snapshotsWritten)]
        for fault in DiskFault.allCases { pairs.append(("fault-" + fault.key, faults[fault] ?? 0)) }
        return "figures " + pairs.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
    }

    /// The report's lines (faults in a fixed order).
    public var summary: String {
        var lines = [
            "steps \(steps), events recorded \(events), can-evaluates \(canEvaluates) (\(checkRuns) runs of repeated checks, kind 33), evaluations answered \(evaluationsAnswered)",
            "failures revealed after their fsync \(failuresRevealed), log failures \(logFailures), requests refused while the log failed \(refusedWhileFailed)",
            "restarts \(restarts) (clean stops \(cleanStops), reopens after a failure \(reopens)), torn tails cut \(tornTailsCut), hostile lines \(hostileLines), disconnects \(disconnects)",
        ]
        lines.append("wall clock set back \(clockSetBacks) times, rules reloaded \(ruleReloads) times")
        lines.append("free space changed \(spaceChanges) times, requests refused for the space reserve \(reserveRefusals)")
        lines.append("journal trail entries checked \(trailEntries), passcode jobs run \(passcodeJobs), short writes \(shortWrites), reads that split what waited \(splitReads), watch STATE lines judged \(watchStates)")
        lines.append("combined prompts (S-60) \(combinedPrompts), biometric prompts after the passcode half ended \(passcodeHalvesEnded)")
        lines.append("evaluations prompted by a session agent (S-66) \(routedEvaluations), prompt lines agents were sent \(agentPrompts), ended as their agent went away (S-68) \(agentsGone), apps' answers to their agents' prompts refused \(appAnswersRefused)")
        lines.append("snapshots written \(snapshotsWritten), starts from a snapshot \(startsFromSnapshot), starts refused \(refusedStarts), repairs \(repairs)")
        for fault in DiskFault.allCases { lines.append("fault: \(fault.rawValue): \(faults[fault] ?? 0)") }
        return lines.joined(separator: "\n")
    }
}
