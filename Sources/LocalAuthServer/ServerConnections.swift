// Accepting, reading and closing connections. Identity comes from
// SO_PEERCRED at accept time; limits are enforced here (MaxConnections,
// MaxConnectionsPerUser, line length, half lines).
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension Server {
    func acceptAll() {
        while !stopping {
            let accepted: FileDescriptor?
            do {
                accepted = try UnixSocket.accept(listener)
            } catch {
                // EMFILE and friends: stop for now, the next tick retries.
                DaemonLog.error("Failed to accept a connection: \(error)")
                return
            }
            guard let fd = accepted else { return }
            guard let peer = try? PeerCredentials(socket: fd) else {
                try? fd.close()
                continue
            }
            let perUser = connectionsPerUser[peer.uid, default: 0]
            if connections.count >= configuration.daemon.maxConnections || perUser >= configuration.daemon.maxConnectionsPerUser {
                counters.refusedConnections += 1
                var refusal = LineWriter(capacity: 160)
                refusal.appendProtocolError(tag: "*", ProtocolError(.limitExceeded, "Too many connections."))
                refusal.appendBye(reason: "limit")
                _ = try? fd.send(refusal.bytes)
                try? fd.close()
                continue
            }
            let connection = Connection(id: nextConnectionID, fd: fd, peer: peer, isAdmin: false)
            nextConnectionID += 1
            do {
                try epoll.add(fd, events: [.readable, .readHangUp], data: connection.id)
            } catch {
                try? fd.close()
                continue
            }
            _ = adminVerdict(connection)  // S-51: asks AdminGroup ahead of the first request
            connections[connection.id] = connection
            connectionsPerUser[peer.uid, default: 0] += 1
            connection.allowance = allowance(for: peer.uid)
            connection.allowance?.connections += 1
            counters.accepted += 1
        }
    }

    func connectionEvent(_ id: UInt64, _ events: Epoll.Events) {
        guard let connection = connections[id] else { return }
        if !connection.isOpen && (events.contains(.hangUp) || events.contains(.error)) {
            return close(connection)  // nobody left to read what is owed
        }
        if connection.readingPaused && (events.contains(.hangUp) || events.contains(.error)) {
            // Gone while a request waited for fprintd: epoll reports the
            // hang-up at every turn, and nobody will read the answers.
            return peerGone(connection)
        }
        if events.contains(.writable) {
            // Output queued earlier in this turn may depend on events not yet
            // on the log's file: they go first (cheap when there are none).
            writeLog()
            flush(connection)
        }
        guard !connection.isClosed else { return }
        if events.contains(.readable) || events.contains(.readHangUp) || events.contains(.hangUp) || events.contains(.error) {
            read(connection)
        }
    }

    func read(_ connection: Connection) {
        var budget = 16  // reads per wakeup, so one client cannot starve the rest
        while budget > 0, connection.isOpen, !connection.readingPaused {
            budget -= 1
            let count: Int?
            do {
                count = try readBuffer.withUnsafeMutableBytes { buffer throws(SystemError) in
                    try connection.fd.receive(into: buffer)
                }
            } catch {
                peerGone(connection)
                return
            }
            guard let count else { break }  // would block
            if count == 0 {
                peerGone(connection)
                return
            }
            readBuffer.withUnsafeBytes { connection.splitter.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            // S-43's freshness stamp of the lines this read brought.
            readStamp &+= 1
            lineStamp = readStamp
            processLines(connection)
            // Lines left unhandled behind a parked request may hold a
            // secret: this copy of them goes now (S-50).
            if connection.readingPaused { secretSeen = true }
            if secretSeen {
                // S-50: the bytes of a line with a secret leave no copy behind.
                secretSeen = false
                readBuffer.withUnsafeMutableBytes { SecretMemory.wipe($0.baseAddress!, count: count) }
                SecretMemory.wipe(lineBuffer.baseAddress!, count: lineBuffer.count)
                connection.splitter.wipeReturned()
            }
            // A short read emptied the socket: epoll is level-triggered and
            // reports the rest (and EOF) next turn; skip the EAGAIN read.
            if count < readBuffer.count { break }
        }
        if connection.isOpen, !connection.readingPaused {
            connection.partialLineSince = connection.splitter.hasPartialLine
                ? (connection.partialLineSince ?? MonotonicClock.nowNanos()) : nil
        }
    }

    func processLines(_ connection: Connection) {
        // Each line is copied out of the splitter (a copy of ~70 bytes costs
        // less than the retain and releases of a slice of its storage).
        // The authenticator is taken once for the batch: read from its `var`
        // for each request, it was retained and released around every call.
        let authenticator = self.authenticator
        while connection.isOpen, !connection.readingPaused, let event = connection.splitter.next(copyingInto: lineBuffer) {
            switch event {
            case .lineTooLong:
                counters.linesTooLong += 1
                refuse(connection, ProtocolError(.lineTooLong, "Lines are limited to 8192 bytes."), bye: "protocol")
            case .line(let line):
                counters.requests += 1
                connection.partialLineSince = nil
                handle(line, on: connection, authenticator)
            }
        }
    }

    /// One request line: the usual can-evaluate is answered from its
    /// bytes; every other line is checked by the scanner and gets a
    /// `Request` of Strings.
    func handle(_ line: UnsafeBufferPointer<UInt8>, on connection: Connection, _ authenticator: Authenticator) {
        if let usual = CanEvaluateLine(line), canEvaluateInPlace(usual, connection, authenticator) { return }
        // The scanner is moved into a local for the line (and back): calls on
        // the stored property would copy it, retaining its span buffer.
        var scanner = RequestScanner()
        swap(&scanner, &requestScanner)
        defer { swap(&scanner, &requestScanner) }
        if let failure = scanner.scan(line) {
            counters.badLines += 1
            writer.bytes.removeAll(keepingCapacity: true)
            writer.append(failure)
            send(writer.bytes, to: connection)
            return
        }
        dispatch(scanner.request, on: connection)
    }

    /// The client finished sending (EOF) or went away: its contexts end
    /// (S-14), replies already owed are still sent if it is reading (a
    /// half-closed `socat` session), then the socket closes.
    func peerGone(_ connection: Connection) {
        beginClose(connection)
        flush(connection)
    }

    func endContexts(of connection: Connection) {
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
        connection.state = .closing(since: MonotonicClock.nowNanos())
        markForFlush(connection)
        connection.partialLineSince = nil
        endContexts(of: connection)
        // No more reading: watch only for writability while output is unsent.
        let events: Epoll.Events = connection.hasUnsentOutput ? [.writable] : []
        try? epoll.modify(connection.fd, events: events, data: connection.id)
        if connection.hasUnsentOutput { watchingWritable.insert(connection.id) } else { watchingWritable.remove(connection.id) }
    }

    func close(_ connection: Connection) {
        guard !connection.isClosed else { return }
        if connection.readingPaused { forgetParked(connection) }
        // Stops any read or line loop still holding this connection: its fd
        // number may be reused at once (a new segment, a snapshot file).
        connection.state = .closed
        if !connection.contexts.isEmpty { endContexts(of: connection) }
        if !watches.isEmpty { forgetWatches(of: connection) }
        try? epoll.remove(connection.fd)
        try? connection.fd.close()
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
