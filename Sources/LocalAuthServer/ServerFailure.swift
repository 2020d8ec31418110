// Failing closed when the log cannot record (a full disk, an I/O error).
// A failure that could not be made durable is never revealed (S-40): all
// output held behind it is dropped (and a connection that thereby lost
// replies is closed). Running evaluations get one final answer,
// `unavailable`; other connections stay, every verb that needs the log is
// refused with `unavailable`, and the log is reopened every few seconds
// (LogHealth says when; the shell reopens it, `.reopenLog`, and answers with
// `logReopened`). Reopening replays what is on disk (recovery cuts what was
// never acknowledged) and records a start, as a restart would.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension ServerCore {
    func failClosed(_ why: String) {
        logHealth.failed(why, at: turn.monotonic)
        journal(.error, "The event log failed (\(why)); refusing to act until it can record again.",
                        fields: [("LOCALAUTH_SEQ", String(authenticator.recorder.durableSeq))])
        actions.append(.notify("STATUS=Failing closed: the event log cannot record events"))
        // Replies held behind a failure that will never be durable are
        // dropped unsent; the request stream of such a connection is then
        // broken, so it is closed after the refusal.
        let lost = Set(replyGate.logFailed())
        for connection in connections.keys {
            let lostReplies = lost.contains(connection)
            writer.bytes.removeAll(keepingCapacity: true)
            for tag in (connections[connection]?.evaluationTags.values.sorted() ?? []) {
                writer.appendProtocolError(tag: tag, ProtocolError(.unavailable,
                    "The event log cannot record events; the evaluation cannot go on."))
            }
            let answers = writer.bytes
            guard connections.withValue(connection, { connection -> Void in
                connection.evaluationTags.removeAll()
                connection.output.bytes.append(contentsOf: answers)
            }) != nil else { continue }
            if lostReplies {
                refuse(connection, ProtocolError(.unavailable, "The event log cannot record events."), bye: "shutdown")
            } else {
                markForFlush(connection)
            }
        }
        // Their agents' requests end too (nothing could be recorded).
        endAgentRequestsForFailure()
        // F-49: the evaluations just answered no longer wait for a reading
        // (none could be recorded): every scan stops and fprintd's claim is
        // released now, not left held across the failure and the reopen
        // (whose restart state has no prompt that would ever stop it).
        for command in sensor.stopAll() { actions.append(.sensor(command)) }
        // Verdicts still on a worker will not be recorded (the log cannot
        // take them); the waiting jobs are dropped, their secrets wiped.
        passcodeJobs.abandonAll()
        // Once per daemon, as the former tick said it (at the failure now, not 100 ms later).
        if let failure = logHealth.unreported(authenticator.recorder.failure) {
            journal(.error, "The event log cannot record events (\(failure)); refusing every request that needs it.")
        }
    }

    /// The shell's answer to `.reopenLog` (asked by the timer): the reopened
    /// log's authenticator, or why it could not; the timer's duties go on.
    func logReopened(_ result: Result<Authenticator, any Error>) {
        switch result {
        case .success(let reopened):
            authenticator = reopened
            logHealth.reopened(true)
            // The reopen's start is durable; its prompts are none (S-15).
            deadlines.syncAskedThrough = reopened.recorder.lastSeq
            deadlines.unsyncedSince = nil
            deadlines.promptExpiry = nil
            // A new log, a new gate (the failed one dropped all it held).
            replyGate = ReplyGate()
            // The reopen recorded a start: every earlier context is gone (S-15).
            for connection in connections.keys {
                connections.withValue(connection) { connection in
                    connection.contexts.removeAll()
                    connection.invalidated.removeAll()
                    connection.evaluationTags.removeAll()
                }
                forgetAllPropertyBytes(connection)
            }
            roster.disownAll()
            journal(.notice, "The event log records again; serving.", id: .started,
                             fields: [("LOCALAUTH_SEQ", String(authenticator.recorder.lastSeq))])
            actions.append(.notify("STATUS=\(statusLine)"))
            // A login password changed while the log failed is recorded now.
            noticeLoginPasswordChanges()
        case .failure(let error):
            logHealth.reopened(false)
            journal(.error, "Failed to reopen the event log, still refusing to act: \(error)")
        }
        timerDuties(now)
    }
}
