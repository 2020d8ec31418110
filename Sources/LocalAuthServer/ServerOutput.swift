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
        let admitted = admitsOutput(connection)
        guard let after = connections.withValue(connection, { connection -> QueuedOutput in
            if admitted { connection.output.bytes.append(contentsOf: bytes) }
            return QueuedOutput(unsent: connection.output.unsentByteCount, inFlight: connection.output.inFlight,
                                    isOpen: connection.isOpen)
        }) else { return }
        if !admitted { replyGate.hold(bytes, for: connection, barrier: authenticator.revealGate) }
        queued(on: connection, after)
    }

    /// Writes one line with `write`: straight into the connection's output
    /// when the gate admits it (no copy), else through `send`.
    @inline(__always)
    func sendLine(to connection: Connection.ID, _ write: (inout LineWriter) -> Void) {
        if admitsOutput(connection) {
            // `write` appends to the connection's output, in place (no
            // copy, one look-up); it formats a line and touches nothing of
            // the table (debug builds trap if it does).
            var line = LineWriter()
            guard let after = connections.withValue(connection, { connection -> QueuedOutput in
                swap(&line.bytes, &connection.output.bytes)
                write(&line)
                swap(&line.bytes, &connection.output.bytes)
                return QueuedOutput(unsent: connection.output.unsentByteCount, inFlight: connection.output.inFlight,
                                    isOpen: connection.isOpen)
            }) else { return }
            return queued(on: connection, after)
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
    private func queued(on id: Connection.ID, _ after: QueuedOutput) {
        markForFlush(id)
        // Write early when a lot is queued, so a client that reads while it
        // pipelines is not mistaken for one that does not read; the events
        // behind those replies reach the log's file first.
        if after.unsent > 16384, !after.inFlight {
            writeLog()
            requestSend(id)
        }
        if after.unsent + replyGate.heldByteCount(id) > configuration.daemon.maxPendingBytes, after.isOpen {
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
        if logHealth.isRecording { authenticator.flush() }
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
            // Gone (closed since it was marked), or open with nothing to send:
            // nothing to do. One look-up decides and marks the send.
            let step = connections.withValue(id) { connection -> FlushStep in
                guard connection.state != .closed, connection.output.hasUnsent || !connection.isOpen else { return .none }
                return connection.startSend()
            }
            switch step {
            case .send?: actions.append(.send(id))
            case .drained?: afterWrite(id)
            case .none?, nil: break
            }
        }
        // Connections marked while flushing stay for the next call; else
        // the emptied buffer is reused.
        needFlush.recycle(&marked)
    }

    func flush(_ id: Connection.ID) {
        switch connections.withValue(id, { $0.startSend() }) {
        case .send?: actions.append(.send(id))
        case .drained?: afterWrite(id)
        case .none?, nil: break
        }
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

    /// `.send` (the ActionPerformer's): `write` is given the unsent output,
    /// borrowed, and returns the bytes the kernel took (0: it would block),
    /// or nil when the socket failed (the connection is then forgotten).
    @inline(__always)
    func writeOutput(_ id: Connection.ID, _ write: (UnsafeRawBufferPointer) -> Int?) {
        // Bytes queued after the early write asked for this one (a close's
        // final answers and `* BYE`) may depend on events appended since:
        // they reach the log's file first (cheap when nothing is unwritten;
        // the simulator's seed 1052).
        writeLog()
        // `write` is the shell's (a write(2)): it does not touch the table.
        // nil: gone or being forgotten (nothing written); .some(nil): the socket failed.
        guard let written = connections.withValue(id, { connection -> Int?? in
            guard connection.state != .closed else { return .none }
            let start = connection.output.sentUpTo
            return .some(connection.output.bytes.withUnsafeBytes { write(UnsafeRawBufferPointer(rebasing: $0[start...])) })
        }) ?? nil else { return }
        guard let written else { return close(id) }
        wroteOutput(id, count: written)
    }

    private func wroteOutput(_ id: Connection.ID, count: Int) {
        guard let after = connections.withValue(id, { connection -> WrittenOutput in
            connection.output.inFlight = false
            connection.output.sentUpTo += count
            connection.output.dropSent()
            return WrittenOutput(state: connection.state, unsent: connection.output.hasUnsent, isOpen: connection.isOpen,
                                 evaluating: !connection.evaluationTags.isEmpty)
        }) else { return }
        if service.isStopped { return }
        afterWrite(id, after)
        // Lines left behind an early write are handled now (afterWrite
        // closes only a connection that is not open).
        if after.state == .open(.behindWrite) { processLinesAndWipe(id) }
    }

    /// A connection whose output was written (or that had none): closed
    /// once drained if closing; epoll watches for writability while output
    /// is unsent.
    private func afterWrite(_ id: Connection.ID) {
        guard let after = connections.withValue(id, { connection in
            WrittenOutput(state: connection.state, unsent: connection.output.hasUnsent, isOpen: connection.isOpen,
                          evaluating: !connection.evaluationTags.isEmpty)
        }) else { return }
        afterWrite(id, after)
    }

    private func afterWrite(_ id: Connection.ID, _ after: WrittenOutput) {
        if !after.isOpen && !after.unsent && !replyGate.isHolding(id) && !after.evaluating {
            close(id)
            return
        }
        if let watch = roster.writability(id, unsent: after.unsent, reading: after.state.isReading) { actions.append(watch) }
    }
}

/// What `queued` needs of a connection after bytes were added (read in the
/// same look-up that added them; field by field: an initialiser taking the
/// connection copied it out of the table, callgrind).
struct QueuedOutput {
    let unsent: Int
    let inFlight: Bool
    let isOpen: Bool
}

/// What `afterWrite` needs of a connection (read in one look-up).
struct WrittenOutput {
    let state: Connection.State
    let unsent: Bool
    let isOpen: Bool
    let evaluating: Bool
}

/// A flush's decision for one connection.
enum FlushStep {
    /// Nothing (a write is in flight, or nothing is owed).
    case none
    /// Its unsent output goes to the shell (`.send`, now in flight).
    case send
    /// Nothing unsent: closed if closing and drained, epoll watches updated.
    case drained
}

extension Connection {
    /// Marks a `.send` in flight if output is unsent and none is.
    @inline(__always)
    mutating func startSend() -> FlushStep {
        guard output.hasUnsent else { return .drained }
        if output.inFlight { return .none }
        output.inFlight = true
        return .send
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
