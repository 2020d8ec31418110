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
    func send(_ bytes: [UInt8], to connection: Connection) {
        if admitsOutput(connection) {
            connection.output.append(contentsOf: bytes)
        } else {
            replyGate.hold(bytes, for: connection.id, barrier: authenticator.revealGate)
        }
        queued(on: connection)
    }

    /// Writes one line with `write`: straight into the connection's output
    /// when the gate admits it (no copy), else through `send`.
    func sendLine(to connection: Connection, _ write: (inout LineWriter) -> Void) {
        if admitsOutput(connection) {
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

    /// Whether output produced now for `connection` may go straight to it.
    @inline(__always)
    private func admitsOutput(_ connection: Connection) -> Bool {
        replyGate.admits(connection.id, barrier: authenticator.revealGate, durable: { authenticator.recorder.durableSeq })
    }

    /// Whether any output produced now would be held (S-40).
    var outputIsHeld: Bool {
        replyGate.isShut(barrier: authenticator.revealGate, durable: { authenticator.recorder.durableSeq })
    }

    /// After output was queued: the connection is flushed at the end of
    /// the turn, early when a lot is queued, or refused when its peer does
    /// not read.
    private func queued(on connection: Connection) {
        markForFlush(connection)
        // Write early when a lot is queued, so a client that reads while it
        // pipelines is not mistaken for one that does not read; the events
        // behind those replies reach the log's file first.
        if connection.unsentByteCount > 16384, !connection.sendPending {
            writeLog()
            requestSend(connection)
        }
        if connection.unsentByteCount + replyGate.heldByteCount(connection.id) > configuration.daemon.maxPendingBytes,
           connection.isOpen {
            // A client that does not read its replies: answer once and close.
            counters.pendingOverflows += 1
            connection.discardUnsentOutput()
            replyGate.forget(connection.id)
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
            guard let connection = connections[id] else { return }
            connection.output.append(contentsOf: bytes)
            markForFlush(connection)
        })
    }

    /// Before output leaves: the events it may depend on reach the log's
    /// file (a kill of the daemon then loses nothing it acknowledged), and
    /// an fdatasync is asked for if output waits for one (S-40).
    func writeLog() {
        if logFailure == nil { authenticator.flush() }
    }

    @inline(__always)
    func markForFlush(_ connection: Connection) { needFlush.mark(connection) }

    /// Flushes the connections marked since the last call. Output that did
    /// not fit in the socket is written on EPOLLOUT (`flush` watches for it).
    func flushAll() {
        guard !needFlush.isEmpty else { return }
        // Swapped out rather than copied: with a copy alive, emptying the
        // list would allocate a fresh buffer every loop turn.
        var marked: [Connection] = []
        needFlush.take(into: &marked)
        for connection in marked {
            guard !connection.isClosed, connection.hasUnsentOutput || !connection.isOpen else { continue }
            flush(connection)
        }
        // Connections marked while flushing stay for the next call; else
        // the emptied buffer is reused.
        needFlush.recycle(&marked)
    }

    func flush(_ connection: Connection) {
        if connection.hasUnsentOutput { return requestSend(connection) }
        afterWrite(connection)
    }

    /// Asks the shell to write the connection's output (once until `wrote`).
    @inline(__always)
    func requestSend(_ connection: Connection) {
        guard !connection.sendPending else { return }
        connection.sendPending = true
        actions.append(.send(connection.id))
    }

    /// For `.send`: the connection's unsent output, borrowed (no copy); nil
    /// when the connection is gone.
    func withUnsentOutput<R>(_ id: Connection.ID, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        guard let connection = connections[id], !connection.isClosed else { return nil }
        writeLog()  // as writeOutput: the records before the bytes reach the file first
        let start = connection.sentUpTo
        return try connection.output.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
    }

    /// `.send` in one call (the shell's): `write` is given the unsent
    /// output, borrowed, and returns the bytes the kernel took (0: it would
    /// block), or nil when the socket failed (the connection is then forgotten).
    @inline(__always)
    func writeOutput(_ id: Connection.ID, _ write: (UnsafeRawBufferPointer) -> Int?) {
        guard let connection = connections[id], !connection.isClosed else { return }
        // Bytes queued after the early write asked for this one (a close's
        // final answers and `* BYE`) may depend on events appended since:
        // they reach the log's file first (cheap when nothing is unwritten;
        // the simulator's seed 1052).
        writeLog()
        let start = connection.sentUpTo
        let written = connection.output.withUnsafeBytes { write(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        guard let written else { return close(connection) }
        wrote(connection, count: written)
    }

    /// After `.send`: the kernel took `count` bytes (0: it would block).
    func wrote(_ id: Connection.ID, count: Int) {
        guard let connection = connections[id], !connection.isClosed else { return }
        wrote(connection, count: count)
    }

    private func wrote(_ connection: Connection, count: Int) {
        connection.sendPending = false
        connection.sentUpTo += count
        connection.dropSent()
        if stopped { return }
        afterWrite(connection)
        // Lines left behind an early write are handled now.
        if connection.linesWaiting, connection.isOpen, !connection.readingPaused {
            processLinesAndWipe(connection)
            if connection.isOpen, !connection.readingPaused {
                connection.partialLineSince = connection.splitter.hasPartialLine
                    ? (connection.partialLineSince ?? turn.monotonic) : nil
            }
        }
    }

    /// A connection whose output was written (or that had none): closed
    /// once drained if closing; epoll watches for writability while output
    /// is unsent.
    private func afterWrite(_ connection: Connection) {
        if !connection.isOpen && !connection.hasUnsentOutput && !replyGate.isHolding(connection.id)
            && connection.evaluationTags.isEmpty {
            close(connection)
            return
        }
        let wantWritable = connection.hasUnsentOutput
        let watching = !watchingWritable.isEmpty && watchingWritable.contains(connection.id)
        if wantWritable != watching {
            if wantWritable { watchingWritable.insert(connection.id) } else { watchingWritable.remove(connection.id) }
            actions.append(.watch(connection.id, reading: connection.isOpen && !connection.readingPaused, writing: wantWritable))
        }
    }
}

/// Connections that queued output or began closing since the last
/// `flushAll`, each once, so a loop turn costs O(active connections), not
/// O(all connections). The list owns the membership: a pipelined batch marks
/// the same connection again and again, which the `last` check answers
/// without hashing.
struct FlushList {
    private var members: [Connection] = []
    private var marked: Set<Connection.ID> = []
    /// The connection marked last (ids start at 16: 0 is none).
    private var lastMarked: Connection.ID = 0

    var isEmpty: Bool { members.isEmpty }

    @inline(__always)
    mutating func mark(_ connection: Connection) {
        if connection.id == lastMarked { return }
        lastMarked = connection.id
        if marked.insert(connection.id).inserted { members.append(connection) }
    }

    /// Hands the marked connections out (swapped into `batch`, which must be
    /// empty) and starts a new list.
    mutating func take(into batch: inout [Connection]) {
        swap(&batch, &members)
        marked.removeAll(keepingCapacity: true)
        lastMarked = 0
    }

    /// Gives a handled batch's buffer back, if nothing was marked meanwhile.
    mutating func recycle(_ batch: inout [Connection]) {
        guard members.isEmpty else { return }
        batch.removeAll(keepingCapacity: true)
        swap(&batch, &members)
    }
}
