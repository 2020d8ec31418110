// The output side of the event loop: replies are queued on their
// connection behind the newest undurable failure (S-40), journal entries
// that reveal one wait with them, and queued bytes are written to the
// sockets at the end of each turn (or early when a lot is queued).
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension Server {
    /// Queues bytes for a connection, behind the newest undurable failure (S-40).
    func send(_ bytes: [UInt8], to connection: Connection) {
        connection.enqueue(bytes, gate: logFailure == nil ? authenticator.gate : 0, durable: authenticator.recorder.durableSeq)
        if connection.isHolding, !connection.inHolding {
            connection.inHolding = true
            holding.append(connection)
        }
        queued(on: connection)
    }

    /// Writes one line with `write`: straight into the connection's output
    /// when nothing holds it back (no copy), else through `send`.
    func sendLine(to connection: Connection, _ write: (inout LineWriter) -> Void) {
        if (logFailure != nil || authenticator.gate == 0) && !connection.isHolding {
            var line = LineWriter()
            swap(&line.bytes, &connection.output)
            write(&line)
            swap(&line.bytes, &connection.output)
            return queued(on: connection)
        }
        var line = LineWriter()
        swap(&line, &writer)
        line.bytes.removeAll(keepingCapacity: true)
        write(&line)
        send(line.bytes, to: connection)
        swap(&line, &writer)
    }

    /// After output was queued: the connection is flushed at the end of
    /// the turn, early when a lot is queued, or refused when its peer does
    /// not read.
    private func queued(on connection: Connection) {
        markForFlush(connection)
        // Write early when a lot is queued, so a client that reads while it
        // pipelines is not mistaken for one that does not read; the events
        // behind those replies reach the log's file first.
        if connection.output.count - connection.sentUpTo > 16384 {
            writeLog()
            if !connection.flush() { return close(connection) }
        }
        if connection.pendingOutputBytes > configuration.daemon.maxPendingBytes, !connection.closing {
            // A client that does not read its replies: answer once and close.
            counters.pendingOverflows += 1
            connection.discardUnsentOutput()
            refuse(connection, ProtocolError(.limitExceeded, "Too many unread replies."), bye: "limit")
        }
    }

    /// Answers `* ERR`, ends the connection's evaluations (their final
    /// answers are sent), then `* BYE` as the last line, and closes once drained.
    func refuse(_ connection: Connection, _ error: ProtocolError, bye reason: String) {
        writer.bytes.removeAll(keepingCapacity: true)
        writer.appendProtocolError(tag: "*", error)
        send(writer.bytes, to: connection)
        beginClose(connection)
        writer.bytes.removeAll(keepingCapacity: true)
        writer.appendBye(reason: reason)
        send(writer.bytes, to: connection)
    }

    /// Journal entries that reveal a failure wait for its fsync as well (S-40:
    /// no byte revealing it leaves the daemon before).
    func journalAfterDurable(_ write: @escaping () -> Void) {
        let gate = max(authenticator.gate, heldJournal.last?.seq ?? 0)
        if gate == 0 || gate <= authenticator.recorder.durableSeq {
            write()
        } else {
            heldJournal.append((gate, write))
        }
    }

    func releaseDurableOutput() {
        if !heldJournal.isEmpty {
            let durable = authenticator.recorder.durableSeq
            while let first = heldJournal.first, first.seq <= durable {
                heldJournal.removeFirst()
                first.write()
            }
        }
        guard !holding.isEmpty else { return }
        let durable = authenticator.recorder.durableSeq
        // Compacted in place: the connections still holding stay in order.
        var kept = 0
        for index in holding.indices {
            let connection = holding[index]
            if connection.closed {
                connection.inHolding = false
                continue
            }
            connection.release(durable: durable)
            markForFlush(connection)
            if !connection.isHolding {
                connection.inHolding = false
            } else {
                holding[kept] = connection
                kept += 1
            }
        }
        holding.removeLast(holding.count - kept)
    }

    /// Before output leaves: the events it may depend on reach the log's
    /// file (a kill of the daemon then loses nothing it acknowledged), and
    /// an fdatasync is asked for if output waits for one (S-40).
    func writeLog() {
        if logFailure == nil { authenticator.flush() }
    }

    func markForFlush(_ connection: Connection) {
        guard !connection.needsFlush else { return }
        connection.needsFlush = true
        needFlush.append(connection)
    }

    /// Flushes the connections marked since the last call. Output that did
    /// not fit in the socket is written on EPOLLOUT (`flush` watches for it).
    func flushAll() {
        guard !needFlush.isEmpty else { return }
        // Swapped out rather than copied: with a copy alive, emptying
        // `needFlush` would allocate a fresh buffer every loop turn.
        var marked: [Connection] = []
        swap(&marked, &needFlush)
        for connection in marked {
            connection.needsFlush = false
            guard !connection.closed, connection.hasUnsentOutput || connection.closing else { continue }
            flush(connection)
        }
        // Connections marked while flushing stay for the next call; else
        // the emptied buffer is reused.
        if needFlush.isEmpty {
            marked.removeAll(keepingCapacity: true)
            needFlush = marked
        }
    }

    func flush(_ connection: Connection) {
        if !connection.flush() {
            close(connection)
            return
        }
        if connection.closing && connection.isDrained && connection.evaluationTags.isEmpty {
            close(connection)
            return
        }
        let wantWritable = connection.hasUnsentOutput
        if wantWritable != connection.watchingWritable {
            connection.watchingWritable = wantWritable
            let reading: Epoll.Events = connection.closing ? [] : [.readable, .readHangUp]
            let events: Epoll.Events = wantWritable ? reading.union(.writable) : reading
            try? epoll.modify(connection.fd, events: events, data: connection.id)
        }
    }
}
