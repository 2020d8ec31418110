// Clean shutdown (S-32, issue: SIGTERM within 2 s): stop accepting, end every
// running evaluation with systemCancel and send that answer, record
// daemon-stopped, flush the log, say `* BYE reason=shutdown`, close.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension Server {
    func shutdown() {
        _ = try? Systemd.notify("STOPPING=1\nSTATUS=Shutting down")
        try? epoll.remove(listener)
        answerParkedRequests()
        // Final answers for running evaluations go to their owners first.
        run(.stop, connection: nil, tag: nil, now: now)
        sensorBackend.shutdown()
        for connection in connections.values {
            connection.contexts.removeAll()
            connection.evaluationTags.removeAll()
            writer.bytes.removeAll(keepingCapacity: true)
            writer.appendBye(reason: "shutdown")
            send(writer.bytes, to: connection)
        }
        contextOwners.removeAll()
        // Wait (bounded) for the log to make everything durable, then send.
        let deadline = MonotonicClock.nowNanos() + 1_500_000_000
        authenticator.recorder.flush(durableThrough: authenticator.recorder.lastSeq)
        while authenticator.recorder.durableSeq < authenticator.recorder.lastSeq,
              authenticator.recorder.failure == nil, MonotonicClock.nowNanos() < deadline {
            _ = try? epoll.wait(timeoutMilliseconds: 10)
            _ = try? durabilityWake.drain()
        }
        releaseDurableOutput()
        for connection in connections.values {
            _ = writeOut(connection)
            try? epoll.remove(connection.fd)
            try? connection.fd.close()
        }
        connections.removeAll()
        DaemonLog.notice("Stopped.", id: .stopped)
    }
}
