// The S-40 oracle's side of the performer: every way out of the daemon is a
// stream of positions (each connection's bytes, the journal's
// authentication trail, sd_notify's STATUS= with the daemon's counts), marked
// where it stood when a failure (or, for the records-before-replies check,
// any record) was recorded, and judged as each action is performed
// (RevealMarks.swift says what a mark means).
import LocalAuthCore
import LocalAuthServer

extension SimulatedDaemon {

    /// What connection `id` has produced so far: sent, queued and held.
    func produced(_ id: Connection.ID) -> Int {
        sockets[id]!.delivered + unsent(id) + core.replyGate.heldByteCount(id)
    }

    func unsent(_ id: Connection.ID) -> Int { core.connections[id]?.output.unsentByteCount ?? 0 }

    /// The record of `seq` was appended (a decided event's `body`, or nil:
    /// a check, or an event whose body comes with `observeEvent`).
    func recorded(_ body: EventBody?, _ seq: UInt64) {
        let failure: Bool
        switch body {
        case .biometricFailed?, .passcodeRejected?: failure = true
        default: failure = false
        }
        if failure {
            trail.failureRecorded(seq: seq, produced: trailProduced)
            status.failureRecorded(seq: seq, produced: statusPerformed + pending(where: Self.isCountingStatus))
        }
        for id in sockets.keys.sorted() {
            let now = produced(id)
            if now < sockets[id]!.produced {
                sockets[id]!.marks.dropped(to: now)
                sockets[id]!.unwritten.dropped(to: now)
            }
            sockets[id]!.produced = now
            if failure { sockets[id]!.marks.failureRecorded(seq: seq, produced: now) }
            sockets[id]!.unwritten.failureRecorded(seq: seq, produced: now)
        }
    }

    /// The log failed: undurable failures will never be durable.
    func logFailed() {
        oracle.logFailed()
        let durable = durableSeq()
        for id in sockets.keys.sorted() {
            sockets[id]!.marks.logFailed(admitted: sockets[id]!.delivered + unsent(id), durable: durable)
            // Records that failed to reach the file never will; the daemon
            // may still send what it answered before (S-40 covers failures).
            sockets[id]!.unwritten = RevealMarks()
        }
        trail.logFailed(admitted: trailPerformed + pendingTrailEntries, durable: durable)
        status.logFailed(admitted: statusPerformed + pending(where: Self.isCountingStatus), durable: durable)
    }

    /// Trail entries produced, not yet performed (in the batch being
    /// performed and in the core's buffer), and produced in all (the
    /// reply gate holds the rest).
    var pendingTrailEntries: Int {
        let isTrail = { (action: ServerAction) -> Bool in
            if case .journal(let entry) = action { return Self.isTrail(entry) } else { return false }
        }
        return performer.pending.count(where: isTrail) + core.actions.count(where: isTrail)
    }

    func pending(where matches: (ServerAction) -> Bool) -> Int {
        performer.pending.count(where: matches) + core.actions.count(where: matches)
    }

    /// A STATUS= that tells the daemon's counts (not "Failing closed", "Shutting down").
    static func isCountingStatus(_ action: ServerAction) -> Bool {
        if case .notify(let text) = action { return text.contains("STATUS=Serving") } else { return false }
    }

    func notified(_ text: String) {
        notifications.append(text)
        guard Self.isCountingStatus(.notify(text)) else { return }
        let judged = status.performed(statusPerformed..<(statusPerformed + 1), durable: durableSeq())
        if let seq = judged.violation {
            oracle.violation("S-40: sd_notify \"\(text.split(separator: "\n").joined(separator: " | "))\" was sent before the "
                + "failure at seq \(seq), recorded before it, was durable (durable through \(durableSeq()))")
        }
        statusPerformed += 1
    }

    var trailProduced: Int { trailPerformed + pendingTrailEntries + core.replyGate.heldJournalEntries }

    /// The entries S-40 holds (ReplyGate): those a failure's outcome shows in.
    static func isTrail(_ entry: JournalEntry) -> Bool {
        switch entry.id {
        case .evaluationSucceeded?, .evaluationFailed?, .lockoutEngaged?, .passcodeBackoff?, .accountChanged?: true
        default: false
        }
    }

    func journaled(_ entry: JournalEntry) {
        journalEntries += 1
        guard Self.isTrail(entry) else { return }
        let judged = trail.performed(trailPerformed..<(trailPerformed + 1), durable: durableSeq())
        if let seq = judged.violation {
            oracle.violation("S-40: the journal entry \"\(entry.message)\" was written before the failure at seq \(seq), "
                + "recorded before it, was durable (durable through \(durableSeq()))")
        }
        oracle.revealed(judged.revealed, newest: judged.newest)
        oracle.countTrailEntry()
        trailPerformed += 1
    }
}
