// Which logind session each connection's process belongs to (S-65, S-66;
// S-61 reads `remote` from the same answer), asked once per connection,
// the first time a request needs it: `register-agent`, or an evaluation of
// a context that asked for its session's agent. A request that needs the
// answer waits for it (parked, like an S-43 or S-51 request: the lines
// behind it wait too, every other connection is served); the shell asks
// logind (`.lookUpSession`, LogindSessions.swift) and hands back what it
// learnt (`sessionLookedUp`). An answer that has not come within
// `lookupLimit` is "unavailable" (the shell's own calls time out sooner),
// so nothing waits for logind forever. A value of the core's: no I/O.

import LocalAuthCore

/// What the daemon knows about a connection's process.
package struct PeerSession: Equatable, Sendable {
    package enum Session: Equatable, Sendable {
        /// It belongs to logind session `id`, whose user is `uid` (or, in no
        /// session of its own, that is its user's display session).
        case session(id: String, uid: UserID, remote: Bool, remoteHost: String)
        /// logind knows it, and it belongs to no session.
        case none
        /// logind could not be asked, did not answer, or the process exited
        /// before its answer came (its pid may name another process now).
        case unavailable(String)
    }

    var session: Session
    /// The inode of the pidfd that pins the process (S-67), when known.
    var process: UInt64?

    package init(session: Session, process: UInt64?) {
        self.session = session
        self.process = process
    }

    /// The session's id and user, when there is one.
    var sessionID: String? {
        if case .session(let id, _, _, _) = session { return id }
        return nil
    }
}

struct PeerSessions<Waiter> {
    /// A lookup unanswered this long (monotonic ns) is "unavailable".
    static var lookupLimit: UInt64 { 3_000_000_000 }

    enum Need {
        /// Known: go on with it.
        case known(PeerSession)
        /// A lookup runs: the waiter waits for it.
        case wait
        /// None ran: the waiter waits, and the shell is to ask.
        case ask
    }

    private var known: [Connection.ID: PeerSession] = [:]
    private var asking: [Connection.ID: (since: UInt64, waiters: [Waiter])] = [:]

    /// What connection `id`'s request needs to do to learn its session.
    mutating func need(_ id: Connection.ID, waiter: Waiter, now: UInt64) -> Need {
        if let facts = known[id] { return .known(facts) }
        if asking[id] != nil {
            asking[id]!.waiters.append(waiter)
            return .wait
        }
        asking[id] = (now, [waiter])
        return .ask
    }

    /// The answer, when already known (no lookup is started).
    func facts(_ id: Connection.ID) -> PeerSession? { known[id] }

    /// The shell's answer for `id`: kept for the connection's life; the
    /// requests that waited for it are returned, to run again. An answer
    /// nobody asked for (the connection closed, or it expired) is dropped.
    mutating func answered(_ id: Connection.ID, _ facts: PeerSession) -> [Waiter] {
        guard let asked = asking.removeValue(forKey: id) else { return [] }
        known[id] = facts
        return asked.waiters
    }

    /// Lookups older than `lookupLimit` end as unavailable; their waiters.
    mutating func expire(now: UInt64) -> [Waiter] {
        var released: [Waiter] = []
        for (id, asked) in asking where now >= asked.since && now - asked.since >= Self.lookupLimit {
            asking[id] = nil
            known[id] = PeerSession(session: .unavailable("logind did not answer in time."), process: nil)
            released += asked.waiters
        }
        return released
    }

    var isAsking: Bool { !asking.isEmpty }

    /// When the oldest lookup runs out (monotonic ns).
    var nextDeadline: UInt64? { asking.values.map { $0.since + Self.lookupLimit }.min() }

    /// The connection is gone: its answer and waiters are forgotten.
    mutating func forget(_ id: Connection.ID) {
        known[id] = nil
        asking[id] = nil
    }

    mutating func removeWaiters(where shouldRemove: (Waiter) -> Bool) {
        for id in Array(asking.keys) { asking[id]!.waiters.removeAll(where: shouldRemove) }
    }

    /// Every waiter (a clean stop answers them); the lookups stay asked.
    mutating func releaseAll() -> [Waiter] {
        var released: [Waiter] = []
        for id in Array(asking.keys) {
            released += asking[id]!.waiters
            asking[id]!.waiters.removeAll()
        }
        return released
    }
}
