// Connections as the core sees them: opened (with the peer's SO_PEERCRED
// credentials, read by the shell), bytes received, the peer gone, closed.
// Limits are enforced here (MaxConnections, MaxConnectionsPerUser, line
// length, half lines); the shell accepts, reads and closes sockets.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension ServerCore {
    /// Whether the shell should accept connections now (not while stopping).
    var acceptsConnections: Bool { !stopping }

    /// A client connected: let in, or refused with the bytes to write before closing.
    func connectionOpened(peer: PeerCredentials) -> Admission {
        let perUser = connectionsPerUser[peer.uid, default: 0]
        if connections.count >= configuration.daemon.maxConnections || perUser >= configuration.daemon.maxConnectionsPerUser {
            counters.refusedConnections += 1
            var refusal = LineWriter(capacity: 160)
            refusal.appendProtocolError(tag: "*", ProtocolError(.limitExceeded, "Too many connections."))
            refusal.appendBye(reason: "limit")
            return .refused(bytes: refusal.bytes)
        }
        let connection = Connection(id: nextConnectionID, peer: peer, isAdmin: false)
        nextConnectionID += 1
        _ = adminVerdict(connection)  // S-51: asks AdminGroup ahead of the first request
        connections[connection.id] = connection
        connectionsPerUser[peer.uid, default: 0] += 1
        connection.allowance = allowance(for: peer.uid)
        connection.allowance?.connections += 1
        counters.accepted += 1
        return .accepted(connection.id)
    }

    /// Whether the shell may read N's socket now: open, and no request of
    /// it waits (a paused connection's lines stay in the kernel).
    func isReading(_ id: Connection.ID) -> Bool {
        guard let connection = connections[id] else { return false }
        return connection.isOpen && !connection.readingPaused
    }

    /// One read's bytes (count > 0). Returns whether the shell may read
    /// this connection again now (`isReading`).
    @discardableResult
    func received(_ bytes: UnsafeRawBufferPointer, on id: Connection.ID) -> Bool {
        lastInputHeldSecret = false
        guard let connection = connections[id], connection.isOpen else {
            // Closing: nothing more is handled; the shell's copy goes (S-50).
            lastInputHeldSecret = true
            return false
        }
        connection.splitter.append(bytes)
        if connection.readingPaused {
            // Read although paused (a stale readiness): kept for the resume, unhandled.
            lastInputHeldSecret = true
            return false
        }
        // S-43's freshness stamp of the lines this read brought.
        readStamp &+= 1
        lineStamp = readStamp
        processLinesAndWipe(connection)
        // Lines left unhandled (behind a parked request, or behind an early
        // write) may hold a secret: the shell's copy of them goes now (S-50).
        if connection.readingPaused || connection.linesWaiting { lastInputHeldSecret = true }
        guard connection.isOpen, !connection.readingPaused else { return false }
        connection.partialLineSince = connection.splitter.hasPartialLine
            ? (connection.partialLineSince ?? turn.monotonic) : nil
        return true
    }

    /// Handles the lines buffered on `connection`; the copies of a line
    /// with a secret go once the batch is handled (S-50).
    func processLinesAndWipe(_ connection: Connection) {
        processLines(connection)
        if connection.readingPaused { secretSeen = true }
        if secretSeen {
            secretSeen = false
            lastInputHeldSecret = true
            SecretMemory.wipe(lineBuffer.baseAddress!, count: lineBuffer.count)
            connection.splitter.wipeReturned()
        }
    }

    /// A read of N's socket found EOF or failed (a reset). A connection
    /// already closing is left to drain (a stale read: the core was not reading it).
    func peerClosed(_ id: Connection.ID) {
        guard let connection = connections[id], connection.isOpen else { return }
        peerGone(connection)
    }

    /// EPOLLHUP or EPOLLERR on N's socket while the shell does not read it
    /// (`!isReading(N)`: closing, or a request of it waits).
    func peerHungUp(_ id: Connection.ID) {
        guard let connection = connections[id] else { return }
        // Closing already: nobody is left to read what is owed.
        connection.isOpen ? peerGone(connection) : close(connection)
    }

    /// N's socket failed (a write error, epoll refused it): forgotten at once.
    func connectionFailed(_ id: Connection.ID) {
        guard let connection = connections[id] else { return }
        close(connection)
    }

    /// EPOLLOUT on N's socket.
    func writable(_ id: Connection.ID) {
        guard let connection = connections[id] else { return }
        // Output queued earlier in this turn may depend on events not yet
        // on the log's file: they go first (cheap when there are none).
        writeLog()
        flush(connection)
    }

    func processLines(_ connection: Connection) {
        // Each line is copied out of the splitter (a copy of ~70 bytes costs
        // less than the retain and releases of a slice of its storage).
        // The authenticator is taken once for the batch: read from its `var`
        // for each request, it was retained and released around every call.
        let authenticator = self.authenticator
        connection.linesWaiting = false
        while connection.isOpen, !connection.readingPaused, let event = connection.splitter.next(copyingInto: lineBuffer) {
            switch event {
            case .lineTooLong:
                counters.linesTooLong += 1
                refuse(connection, ProtocolError(.lineTooLong, "Lines are limited to 8192 bytes."), bye: "protocol")
            case .line(let line):
                counters.requests += 1
                connection.partialLineSince = nil
                handle(line, on: connection, authenticator)
                // Much output queued: it is written before the next line
                // (`wrote` goes on), as a client that reads while it
                // pipelines must not be mistaken for one that does not read.
                if connection.sendPending, connection.isOpen {
                    connection.linesWaiting = true
                    return
                }
            }
        }
    }

    /// One request line: the usual can-evaluate is answered from its
    /// bytes; every other line is checked by the scanner and gets a
    /// `Request` of Strings, its secrets apart in wipeable bytes (S-50).
    func handle(_ line: UnsafeBufferPointer<UInt8>, on connection: Connection, _ authenticator: Authenticator) {
        if let usual = CanEvaluateLine(line), canEvaluateInPlace(usual, connection, authenticator) { return }
        // The scanner is moved into a local for the line (and back): calls on
        // the stored property would copy it, retaining its span buffer.
        var scanner = RequestScanner()
        swap(&scanner, &requestScanner)
        defer { swap(&scanner, &requestScanner) }
        if let failure = scanner.scan(line) {
            // S-50: a line that does not parse may still carry a secret
            // (an unterminated `secret="...`): its buffers are wiped too.
            secretSeen = true
            counters.badLines += 1
            writer.bytes.removeAll(keepingCapacity: true)
            writer.append(failure)
            send(writer.bytes, to: connection)
            return
        }
        let request = scanner.requestWithSecretsApart
        // S-50: whatever the verb (an unknown one, a key it does not take).
        if !request.secrets.isEmpty { secretSeen = true }
        dispatch(request, on: connection)
    }

    /// The client finished sending (EOF) or went away: its contexts end
    /// (S-14), replies already owed are still sent if it is reading (a
    /// half-closed `socat` session), then the socket closes.
    func peerGone(_ connection: Connection) {
        beginClose(connection)
        // Its replies may be sent now, before the turn's end: the events
        // they depend on (this turn's checks, the contexts' ends) reach the
        // log's file first, as at every other send.
        writeLog()
        flush(connection)
    }

    func endContexts(of connection: Connection) {
        // A log that failed since the turn began (a write in the turn, the
        // sync thread) refuses the invalidations: fail closed first, which
        // gives the running evaluations their one final answer (S-33; the
        // simulator's seed 1014).
        if !connection.evaluationTags.isEmpty, logFailure == nil, let failure = authenticator.recorder.failure {
            failClosed(failure)
        }
        limits.contextsEnded += connection.contexts.count
        if !rightGrants.isEmpty || !pendingRights.isEmpty { forgetRightGrants(of: connection) }
        for ctx in connection.contexts.sorted() {
            run(.invalidate(ctx: ctx, reason: .disconnect), connection: connection, tag: nil, now: now)
            contextOwners[ctx] = nil
        }
        connection.contexts.removeAll()
        connection.invalidated.removeAll()
        connection.evaluationTags.removeAll()
        forgetAllPropertyBytes(connection)
    }

    /// Stops reading, ends the connection's contexts (their evaluations get
    /// their one final answer first, S-33); the socket closes once drained.
    func beginClose(_ connection: Connection) {
        guard connection.isOpen else { return }
        if connection.readingPaused { forgetParked(connection) }
        connection.state = .closing(since: turn.monotonic)
        markForFlush(connection)
        connection.partialLineSince = nil
        endContexts(of: connection)
        // No more reading: watch only for writability while output is unsent.
        actions.append(.watch(connection.id, reading: false, writing: connection.hasUnsentOutput))
        if connection.hasUnsentOutput { watchingWritable.insert(connection.id) } else { watchingWritable.remove(connection.id) }
    }

    func close(_ connection: Connection) {
        guard !connection.isClosed else { return }
        if connection.readingPaused { forgetParked(connection) }
        // Stops any line loop still holding this connection.
        connection.state = .closed
        if !connection.contexts.isEmpty { endContexts(of: connection) }
        if !watches.isEmpty { forgetWatches(of: connection) }
        actions.append(.close(connection.id))
        // Its held output vanishes with it.
        replyGate.forget(connection.id)
        watchingWritable.remove(connection.id)
        connections[connection.id] = nil
        let uid = connection.peer.uid
        connectionsPerUser[uid, default: 1] -= 1
        if connectionsPerUser[uid] == 0 { connectionsPerUser[uid] = nil }
        releaseAllowance(of: connection)
    }
}
