// Clean shutdown (S-32, issue: SIGTERM within 2 s): stop accepting, end every
// running evaluation with systemCancel and send that answer, record
// daemon-stopped, flush the log, say `* BYE reason=shutdown`, close.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension ServerCore {
    /// S-32, first half: final answers and `* BYE`, then a sync is asked
    /// for; the shell waits (bounded) while `awaitsDurability`, then calls
    /// `finishShutdown`.
    package func shutdown() {
        actions.append(.notify("STOPPING=1\nSTATUS=Shutting down"))
        // The log may have failed since the last turn's end (the sync
        // thread's fdatasync): the stop could not record the final answers,
        // so fail closed first, which answers every running evaluation
        // (S-33; the simulator's seed 143 stopped with one unanswered).
        if logHealth.isRecording, let failure = authenticator.recorder.failure { failClosed(failure) }
        answerParkedRequests()
        // Final answers for running evaluations go to their owners first
        // (and to the agents that prompted for them, as DONE).
        unregisterAgentsForShutdown()
        run(.stop, connection: nil, tag: nil, now: now)
        for connection in connections.keys {
            connections.withValue(connection) { connection in
                connection.contexts.removeAll()
                connection.evaluationTags.removeAll()
            }
            writer.bytes.removeAll(keepingCapacity: true)
            writer.appendBye(reason: "shutdown")
            send(writer.bytes, to: connection)
        }
        roster.disownAll()
        authenticator.recorder.flush(durableThrough: authenticator.recorder.lastSeq)
    }

    /// Whether the log has not yet made everything durable (and can).
    package var awaitsDurability: Bool {
        authenticator.recorder.durableSeq < authenticator.recorder.lastSeq && authenticator.recorder.failure == nil
    }

    /// S-32, second half: what is durable is released and written once;
    /// every connection is then forgotten (the shell closes the sockets).
    package func finishShutdown() {
        releaseDurableOutput()
        service.stopped()
        for connection in connections.values where connection.output.hasUnsent {
            actions.append(.send(connection.id))
        }
        for id in connections.keys { actions.append(.close(id)) }
        journal(.notice, "Stopped.", id: .stopped)
    }
}
