// The output side of the core: the ReplyGate says where each byte goes (the
// connection's output, or held behind the newest undurable failure, S-40),
// journal entries that reveal one wait in it too, and queued bytes are
// handed to the shell (`.send`) at the end of each turn, or early when a lot
// is queued. The shell writes them and reports `wrote`.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension ServerCore {
    /// Queues bytes for a connection, behind the newest undurable failure (S-40).
    func send(_ bytes: [UInt8], to connection: Connection.ID) {
        if admitsOutput(connection) {
            guard connections.withValue(connection, { $0.output.bytes.append(contentsOf: bytes) }) != nil else { return }
        } else {
            guard connections.contains(connection) else { return }
            replyGate.hold(bytes, for: connection, barrier: authenticator.revealGate)
        }
        queued(on: connection)
    }

    /// Writes one line with `write`: straight into the connection's output
    /// when the gate admits it (no copy), else through `send`.
    func sendLine(to connection: Connection.ID, _ write: (inout LineWriter) -> Void) {
        if admitsOutput(connection) {
            // The output is swapped out for `write` (which may not touch
            // the table) and back: in place, no copy.
            var line = LineWriter()
            guard connections.withValue(connection, { swap(&line.bytes, &$0.output.bytes) }) != nil else { return }
            write(&line)
            connections.withValue(connection) { swap(&line.bytes, &$0.output.bytes) }
            return queued(on: connection)
        }
        var line = LineWriter()
        swap(&line, &writer)
        line.bytes.removeAll(keepingCapacity: true)
        write(&line)
        send(line.bytes, to: connection)
        swap(&line, &writer)
    }

    /// Whether output produced now for `connection` may go straight to it.
    @inline(__always)
    private func admitsOutput(_ connection: Connection.ID) -> Bool {
        replyGate.admits(connection, barrier: authenticator.revealGate, durable: { authenticator.recorder.durableSeq })
    }

    /// Whether any output produced now would be held (S-40).
    var outputIsHeld: Bool {
        replyGate.isShut(barrier: authenticator.revealGate, durable: { authenticator.recorder.durableSeq })
    }

    /// After output was queued: the connection is flushed at the end of
    /// the turn, early when a lot is queued, or refused when its peer does
    /// not read.
    private func queued(on id: Connection.ID) {
        markForFlush(id)
        guard let (unsent, inFlight, isOpen) = connections.withValue(id, { connection in
            (connection.output.unsentByteCount, connection.output.inFlight, connection.isOpen)
        }) else { return }
        // Write early when a lot is queued, so a client that reads while it
        // pipelines is not mistaken for one that does not read; the events
        // behind those replies reach the log's file first.
        if unsent > 16384, !inFlight {
            writeLog()
            requestSend(id)
        }
        if unsent + replyGate.heldByteCount(id) > configuration.daemon.maxPendingBytes, isOpen {
            // A client that does not read its replies: answer once and close.
            counters.pendingOverflows += 1
            connections[id]?.output.discardUnsent()
            replyGate.forget(id)
            refuse(id, ProtocolError(.limitExceeded, "Too many unread replies."), bye: "limit")
        }
    }

    /// Answers `* ERR`, ends the connection's evaluations (their final
    /// answers are sent), then `* BYE` as the last line, and closes once drained.
    func refuse(_ connection: Connection.ID, _ error: ProtocolError, bye reason: String) {
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
    func journalAfterDurable(_ entry: JournalEntry) {
        if let now = replyGate.journal(entry, barrier: authenticator.revealGate,
                                       durable: { authenticator.recorder.durableSeq }) {
            actions.append(.journal(now))
        }
    }

    /// End of a turn: what the log made durable is released, in order.
    func releaseDurableOutput() {
        guard !replyGate.isEmpty else { return }
        replyGate.durable(through: authenticator.recorder.durableSeq, journal: { actions.append(.journal($0)) }, release: { id, bytes in
            guard connections.withValue(id, { $0.output.bytes.append(contentsOf: bytes) }) != nil else { return }
            markForFlush(id)
        })
    }

    /// Before output leaves: the events it may depend on reach the log's
    /// file (a kill of the daemon then loses nothing it acknowledged), and
    /// an fdatasync is asked for if output waits for one (S-40).
    func writeLog() {
        if logFailure == nil { authenticator.flush() }
    }

    @inline(__always)
    func markForFlush(_ connection: Connection.ID) { needFlush.mark(connection) }

    /// Flushes the connections marked since the last call. Output that did
    /// not fit in the socket is written on EPOLLOUT (`flush` watches for it).
    func flushAll() {
        guard !needFlush.isEmpty else { return }
        // Swapped out rather than copied: with a copy alive, emptying the
        // list would allocate a fresh buffer every loop turn.
        var marked: [Connection.ID] = []
        needFlush.take(into: &marked)
        for id in marked {
            // Gone (closed since it was marked), or open with nothing to send: nothing to do.
            let due = connections.withValue(id) { connection in
                connection.state != .closed && (connection.output.hasUnsent || !connection.isOpen)
            }
            if due == true { flush(id) }
        }
        // Connections marked while flushing stay for the next call; else
        // the emptied buffer is reused.
        needFlush.recycle(&marked)
    }

    func flush(_ id: Connection.ID) {
        guard let unsent = connections.withValue(id, { $0.output.hasUnsent }) else { return }
        if unsent { return requestSend(id) }
        afterWrite(id)
    }

    /// Asks the shell to write the connection's output (once until `wrote`).
    @inline(__always)
    func requestSend(_ id: Connection.ID) {
        let asked = connections.withValue(id) { connection -> Bool in
            if connection.output.inFlight { return false }
            connection.output.inFlight = true
            return true
        }
        if asked == true { actions.append(.send(id)) }
    }

    /// For `.send`: the connection's unsent output, borrowed (no copy); nil
    /// when the connection is gone.
    func withUnsentOutput<R>(_ id: Connection.ID, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        guard let state = connections[id]?.state, state != .closed else { return nil }
        writeLog()  // as writeOutput: the records before the bytes reach the file first
        return try connections[id].map { connection in
            let start = connection.output.sentUpTo
            return try connection.output.bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        }
    }

    /// `.send` in one call (the shell's): `write` is given the unsent
    /// output, borrowed, and returns the bytes the kernel took (0: it would
    /// block), or nil when the socket failed (the connection is then forgotten).
    @inline(__always)
    func writeOutput(_ id: Connection.ID, _ write: (UnsafeRawBufferPointer) -> Int?) {
        guard let state = connections.withValue(id, { $0.state }), state != .closed else { return }
        // Bytes queued after the early write asked for this one (a close's
        // final answers and `* BYE`) may depend on events appended since:
        // they reach the log's file first (cheap when nothing is unwritten;
        // the simulator's seed 1052).
        writeLog()
        // `write` is the shell's (a write(2)): it does not touch the table.
        let written = connections.withValue(id) { connection -> Int? in
            let start = connection.output.sentUpTo
            return connection.output.bytes.withUnsafeBytes { write(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        } ?? nil
        guard let written else { return close(id) }
        wroteOutput(id, count: written)
    }

    /// After `.send`: the kernel took `count` bytes (0: it would block).
    func wrote(_ id: Connection.ID, count: Int) {
        guard let state = connections.withValue(id, { $0.state }), state != .closed else { return }
        wroteOutput(id, count: count)
    }

    private func wroteOutput(_ id: Connection.ID, count: Int) {
        let state = connections.withValue(id) { connection -> Connection.State in
            connection.output.inFlight = false
            connection.output.sentUpTo += count
            connection.output.dropSent()
            return connection.state
        }
        if stopped { return }
        afterWrite(id)
        // Lines left behind an early write are handled now.
        if state == .open(.behindWrite), connections.withValue(id, { $0.state }) == .open(.behindWrite) {
            processLinesAndWipe(id)
            if isReading(id) { notePartialLine(id, since: nil) }
        }
    }

    /// A connection whose output was written (or that had none): closed
    /// once drained if closing; epoll watches for writability while output
    /// is unsent.
    private func afterWrite(_ id: Connection.ID) {
        guard let (unsent, isOpen, isReading, evaluating) = connections.withValue(id, { connection in
            (connection.output.hasUnsent, connection.isOpen, connection.isReading, !connection.evaluationTags.isEmpty)
        }) else { return }
        if !isOpen && !unsent && !replyGate.isHolding(id) && !evaluating {
            close(id)
            return
        }
        let watching = !watchingWritable.isEmpty && watchingWritable.contains(id)
        if unsent != watching {
            if unsent { watchingWritable.insert(id) } else { watchingWritable.remove(id) }
            actions.append(.watch(id, reading: isReading, writing: unsent))
        }
    }
}

/// Connections that queued output or began closing since the last
/// `flushAll`, each once, so a loop turn costs O(active connections), not
/// O(all connections). The list owns the membership: a pipelined batch marks
/// the same connection again and again, which the `last` check answers
/// without hashing.
struct FlushList {
    private var members: [Connection.ID] = []
    private var marked: Set<Connection.ID> = []
    /// The connection marked last (ids start at 16: 0 is none).
    private var lastMarked: Connection.ID = 0

    var isEmpty: Bool { members.isEmpty }

    @inline(__always)
    mutating func mark(_ id: Connection.ID) {
        if id == lastMarked { return }
        lastMarked = id
        if marked.insert(id).inserted { members.append(id) }
    }

    /// Hands the marked connections out (swapped into `batch`, which must be
    /// empty) and starts a new list.
    mutating func take(into batch: inout [Connection.ID]) {
        swap(&batch, &members)
        marked.removeAll(keepingCapacity: true)
        lastMarked = 0
    }

    /// Gives a handled batch's buffer back, if nothing was marked meanwhile.
    mutating func recycle(_ batch: inout [Connection.ID]) {
        guard members.isEmpty else { return }
        batch.removeAll(keepingCapacity: true)
        swap(&batch, &members)
    }
}
