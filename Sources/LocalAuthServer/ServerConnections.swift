// Connections as the core sees them: opened (with the peer's SO_PEERCRED
// credentials and its principal, read by the shell), bytes received, the
// peer gone, closed. Limits are enforced here (MaxConnections, with slots
// kept for root's own and administrators, and MaxConnectionsPerUser per
// principal, S-53; line length, half lines); the shell accepts, reads and
// closes sockets.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension ServerCore {
    /// Whether the shell should accept connections now (not while stopping).
    var acceptsConnections: Bool { !service.isStopping }

    /// A client connected: let in, or refused with the bytes to write
    /// before closing. `principal` (S-53): whose limits it counts against,
    /// as the shell judged it at accept. `bus`: a caller of the D-Bus API
    /// (S-70), whose contexts record its bus name and app (S-73).
    package func connectionOpened(peer: PeerCredentials, principal given: Principal? = nil, bus: BusPeer? = nil) -> Admission {
        let principal = given ?? .assumed(for: peer.uid)
        // Root's own processes and the daemon's own user need no lookup.
        let privileged = principal.isRootsOwn || (peer.uid == daemonUID && principal.uid == daemonUID)
        let admin = privileged || (principal.uid == peer.uid
            && parked.adminRights.known(peer.uid, daemonUID: daemonUID, group: configuration.daemon.adminGroup,
                                        now: turn.monotonic) == true)
        guard let id = roster.admit(principal.uid, bus: bus, open: connections.count,
                                    maxConnections: configuration.daemon.maxConnections,
                                    maxPerUser: configuration.daemon.maxConnectionsPerUser, mayUseReserve: admin) else {
            counters.refusedConnections += 1
            var refusal = LineWriter(capacity: 160)
            refusal.appendProtocolError(tag: "*", ProtocolError(.limitExceeded, "Too many connections."))
            refusal.appendBye(reason: "limit")
            return .refused(bytes: refusal.bytes)
        }
        var connection = Connection(id: id, peer: peer, principal: principal, isPrivileged: privileged, isAdmin: false)
        connection.allowance = limits.allowance(for: principal.uid, burst: configuration.log.userEventBurst, now: now)
        connection.allowance?.connections += 1
        connections[id] = connection
        _ = adminVerdict(id)  // S-51: asks AdminGroup ahead of the first request
        counters.accepted += 1
        return .accepted(id)
    }

    /// Who is calling on the connection (SO_PEERCRED). A connection gone
    /// mid-request (never, as the core forgets one only between requests)
    /// would be nobody: (uid_t)-1, no one's rights, fail closed.
    func peer(of id: Connection.ID) -> PeerCredentials {
        connections.withValue(id) { $0.peer } ?? PeerCredentials(pid: 0, uid: UInt32.max, gid: UInt32.max)
    }

    /// Whether the shell may read N's socket now: open, and no request of
    /// it waits (a paused connection's lines stay in the kernel).
    package func isReading(_ id: Connection.ID) -> Bool {
        connections.withValue(id) { $0.isReading } ?? false
    }

    /// One read's bytes (count > 0). Returns whether the shell may read
    /// this connection again now (`isReading`).
    @discardableResult
    package func received(_ bytes: UnsafeRawBufferPointer, on id: Connection.ID) -> Bool {
        lastInputHeldSecret = false
        // The bytes go to the splitter of an open connection (one look-up).
        guard let reading = connections.withValue(id, { connection -> Connection.Reading? in
            guard case .open(let reading) = connection.state else { return nil }
            connection.splitter.append(bytes)
            return reading
        }) ?? nil else {
            // Closing: nothing more is handled; the shell's copy goes (S-50).
            lastInputHeldSecret = true
            return false
        }
        if reading == .parked {
            // Read although paused (a stale readiness): kept for the resume, unhandled.
            lastInputHeldSecret = true
            return false
        }
        // S-43's freshness stamp of the lines this read brought.
        parked.read()
        guard case .open(let now)? = processLinesAndWipe(id) else { return false }
        // Lines left unhandled (behind a parked request, or behind an early
        // write) may hold a secret: the shell's copy of them goes now (S-50).
        if now != .lines { lastInputHeldSecret = true }
        return now != .parked
    }

    /// The idle line timeout runs while the splitter holds a half line:
    /// from `since`, or from when it started (or now).
    func notePartialLine(_ id: Connection.ID, since: UInt64?) {
        let monotonic = turn.monotonic
        let started = connections.withValue(id) { connection -> UInt64? in
            connection.partialLineSince = connection.splitter.hasPartialLine
                ? (since ?? connection.partialLineSince ?? monotonic) : nil
            return connection.partialLineSince
        } ?? nil
        if let started { deadlines.connectionDeadline(started + idleLineLimit + 1) }
    }

    /// Handles the lines buffered on the connection; the copies of a line
    /// with a secret go once the batch is handled (S-50). Returns the
    /// connection's state after (nil: gone).
    @discardableResult
    func processLinesAndWipe(_ id: Connection.ID) -> Connection.State? {
        let state = processLines(id)
        if state == .open(.parked) { secretSeen = true }
        if secretSeen {
            secretSeen = false
            lastInputHeldSecret = true
            SecretMemory.wipe(lineBuffer.baseAddress!, count: lineBuffer.count)
            connections[id]?.splitter.wipeReturned()
        }
        return state
    }

    /// A read of N's socket found EOF or failed (a reset). A connection
    /// already closing is left to drain (a stale read: the core was not reading it).
    package func peerClosed(_ id: Connection.ID) {
        guard connections[id]?.isOpen == true else { return }
        peerGone(id)
    }

    /// EPOLLHUP or EPOLLERR on N's socket while the shell does not read it
    /// (`!isReading(N)`: closing, or a request of it waits).
    package func peerHungUp(_ id: Connection.ID) {
        guard let isOpen = connections[id]?.isOpen else { return }
        // Closing already: nobody is left to read what is owed.
        isOpen ? peerGone(id) : close(id)
    }

    /// N's socket failed (a write error, epoll refused it): forgotten at once.
    package func connectionFailed(_ id: Connection.ID) {
        close(id)
    }

    /// EPOLLOUT on N's socket.
    package func writable(_ id: Connection.ID) {
        guard connections.contains(id) else { return }
        // Output queued earlier in this turn may depend on events not yet
        // on the log's file: they go first (cheap when there are none).
        writeLog()
        flush(id)
    }

    /// Handles the connection's buffered lines while it is open and not
    /// parked; returns its state after (nil: gone).
    func processLines(_ id: Connection.ID) -> Connection.State? {
        // Each line is copied out of the splitter (a copy of ~70 bytes costs
        // less than the retain and releases of a slice of its storage).
        // The authenticator is taken once for the batch: read from its `var`
        // for each request, it was retained and released around every call.
        let authenticator = self.authenticator
        let lineBuffer = self.lineBuffer
        let monotonic = turn.monotonic
        var handled = false
        while true {
            // The usual can-evaluate is answered from the line's bytes while
            // the sensor is simulated and the log records (`UsualCanEvaluate`).
            let inPlace = sensor.isSimulated && logHealth.isRecording && !whereabouts.mayBlock
            // One look-up per line: after a handled line, much output queued
            // stops the batch (it is written before the next line, `wrote`
            // goes on, as a client that reads while it pipelines must not be
            // mistaken for one that does not read); else the next line, taken
            // only while the connection is open and not parked, and, for the
            // usual can-evaluate, whether it owns the context and who it is.
            guard let (next, state) = connections.withValue(id, { connection -> (NextLine, Connection.State) in
                guard case .open(let reading) = connection.state, reading != .parked else { return (.none, connection.state) }
                if handled, connection.output.inFlight {
                    connection.state = .open(.behindWrite)
                } else {
                    connection.state = .open(.lines)
                    switch connection.splitter.next(copyingInto: lineBuffer) {
                    case .line(let line)?:
                        connection.partialLineSince = nil
                        if inPlace, let usual = UsualCanEvaluate(line, of: &connection) { return (.canEvaluate(usual), connection.state) }
                        return (.line(line), connection.state)
                    case .lineTooLong?:
                        return (.tooLong, connection.state)
                    case nil:
                        break
                    }
                }
                // The batch ends with the connection read on: the idle line
                // timeout runs while a half line waits (from when it started).
                if connection.splitter.hasPartialLine {
                    // A new half line: its timeout is a deadline (Deadlines.swift).
                    if connection.partialLineSince == nil { self.deadlines.connectionDeadline(monotonic + self.idleLineLimit + 1) }
                    connection.partialLineSince = connection.partialLineSince ?? monotonic
                    // F-25: the read that brought it may hold a `secret=`'s
                    // first part; the shell's copy of it goes (S-50).
                    self.lastInputHeldSecret = true
                } else {
                    connection.partialLineSince = nil
                }
                return (.none, connection.state)
            }) else { return nil }
            switch next {
            case .none:
                return state
            case .tooLong:
                counters.linesTooLong += 1
                refuse(id, ProtocolError(.lineTooLong, "Lines are limited to 8192 bytes."), bye: "protocol")
            case .canEvaluate(let usual):
                counters.requests += 1
                answerCanEvaluate(usual.ctx, policy: usual.policy, tag: usual.tag, id, privileged: usual.privileged, authenticator)
                handled = true
            case .line(let line):
                counters.requests += 1
                handle(line, on: id)
                handled = true
            }
        }
    }

    /// One request line other than the usual can-evaluate (answered from
    /// its bytes in `processLines`): checked by the scanner, it gets a
    /// `Request` of Strings, its secrets apart in wipeable bytes (S-50).
    func handle(_ line: UnsafeBufferPointer<UInt8>, on connection: Connection.ID) {
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
    func peerGone(_ id: Connection.ID) {
        beginClose(id)
        // Its replies may be sent now, before the turn's end: the events
        // they depend on (this turn's checks, the contexts' ends) reach the
        // log's file first, as at every other send.
        writeLog()
        flush(id)
    }

    func endContexts(of id: Connection.ID) {
        guard let evaluating = connections[id].map({ !$0.evaluationTags.isEmpty }) else { return }
        // A log that failed since the turn began (a write in the turn, the
        // sync thread) refuses the invalidations: fail closed first, which
        // gives the running evaluations their one final answer (S-33; the
        // simulator's seed 1014).
        if evaluating, logHealth.isRecording, let failure = authenticator.recorder.failure {
            failClosed(failure)
        }
        let contexts = connections[id]?.contexts ?? []
        limits.contextsEnded += contexts.count
        if rights.touchesContexts { forgetRightGrants(of: id) }
        for ctx in contexts.sorted() {
            run(.invalidate(ctx: ctx, reason: .disconnect), connection: id, tag: nil, now: now)
            roster.disown(ctx)
        }
        connections.withValue(id) { connection in
            connection.contexts.removeAll()
            connection.invalidated.removeAll()
            connection.evaluationTags.removeAll()
        }
        forgetAllPropertyBytes(id)
    }

    /// Stops reading, ends the connection's contexts (their evaluations get
    /// their one final answer first, S-33); the socket closes once drained.
    func beginClose(_ id: Connection.ID) {
        guard let state = connections[id]?.state, case .open(let reading) = state else { return }
        if reading == .parked { forgetParked(id) }
        let monotonic = turn.monotonic
        connections.withValue(id) { connection in
            connection.state = .closing(since: monotonic)
            connection.partialLineSince = nil
        }
        deadlines.connectionDeadline(monotonic + CoreDeadlines.closingGrace + 1)
        markForFlush(id)
        if !agents.isEmpty { endAgent(of: id) }
        endContexts(of: id)
        // No more reading: watch only for writability while output is unsent.
        guard let unsent = connections[id]?.output.hasUnsent else { return }
        actions.append(roster.watch(id, reading: false, writing: unsent))
    }

    /// Forgets the connection (the shell closes its socket).
    func close(_ id: Connection.ID) {
        guard let state = connections[id]?.state, state != .closed else { return }
        if state == .open(.parked) { forgetParked(id) }
        // Stops any line loop still running for this connection.
        connections[id]?.state = .closed
        if !agents.isEmpty { endAgent(of: id) }
        if connections[id]?.contexts.isEmpty == false { endContexts(of: id) }
        parked.peerSessions.forget(id)
        parked.rightAccounts.forget(id)
        if !watches.isEmpty { forgetWatches(of: id) }
        whereabouts.forget(id)
        actions.append(.close(id))
        // Its held output vanishes with it.
        replyGate.forget(id)
        // A line it had not finished may hold a secret (S-50, F-26), and
        // output it did not read a released login secret (S-77).
        connections[id]?.splitter.wipeAll()
        if connections[id]?.output.holdsSecret == true { connections[id]?.output.wipe(upTo: Int.max) }
        guard let connection = connections.remove(id) else { return }
        roster.closed(id, uid: connection.principal.uid)
        releaseAllowance(of: connection)
    }
}
