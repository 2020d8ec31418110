// S-59's lookups, a value with no I/O: which account (passwd name) a uid
// has now. A connection's first right verb waits until its uid has been
// looked up (a LookupThread asks NSS, never the loop: LDAP or sssd may take
// seconds), and so does every later one until that answer is in; the
// answer then stands for the connection's life (userdel refuses a user
// with running processes, and a change of passwd asks again for every uid
// with rights, `refresh`). One lookup per uid is in flight at a time; a
// change of the database while one is in flight asks once more when it
// answers, since it may have read the file before the change. Lookups are
// numbered: only the answer of the one in flight is taken, so a late
// answer of an expired lookup never overrides a newer one. A lookup
// unanswered for `lookupLimit` fails its waiters (refused, `unavailable`;
// the connection's next right verb asks again): nothing waits for NSS for ever.
import LocalAuthCore

/// One passwd lookup of a uid.
package struct AccountQuery: Sendable, Equatable {
    package let uid: UserID
    let seq: UInt64
}

/// What the user database said of a uid.
package enum AccountAnswer: Sendable, Equatable {
    /// Its user name; nil: no entry.
    case entry(String?)
    /// The lookup failed (an NSS error, or a name no log could hold): nothing is concluded.
    case failed(String)
}

struct AccountLookups<Waiter> {
    /// A lookup unanswered this long fails (monotonic nanoseconds).
    static var lookupLimit: UInt64 { 5_000_000_000 }

    enum Verdict: Equatable {
        /// The connection's uid has been looked up: its name (nil: no entry).
        case known(String?)
        /// Its lookup failed: the waiting request is refused, and the
        /// connection's next right verb asks again.
        case failed(String)
    }

    private var verdicts: [Connection.ID: (uid: UserID, verdict: Verdict)] = [:]
    /// Lookups asked and not answered: when, their number, and whether to ask again once answered.
    private(set) var inFlight: [UserID: (askedAt: UInt64, seq: UInt64, again: Bool)] = [:]
    private var lastSeq: UInt64 = 0
    private var waiters: [UserID: [(connection: Connection.ID, waiter: Waiter)]] = [:]

    /// A right verb of `connection` (of `uid`): its verdict, or nil when it
    /// must wait, with the lookup to start (none while one of the uid is in
    /// flight: it waits for that one). A failed verdict is given once.
    mutating func judge(_ connection: Connection.ID, uid: UserID, now: UInt64) -> (verdict: Verdict?, ask: AccountQuery?) {
        if let known = verdicts[connection] {
            if case .failed = known.verdict { verdicts[connection] = nil }
            return (known.verdict, nil)
        }
        guard inFlight[uid] == nil else { return (nil, nil) }
        return (nil, start(uid, now: now))
    }

    /// `waiter` (a request of `connection`) waits for the lookup of `uid` in flight.
    mutating func wait(_ connection: Connection.ID, uid: UserID, _ waiter: Waiter) {
        waiters[uid, default: []].append((connection, waiter))
    }

    /// The name `connection`'s lookup gave (nil: no entry, or none known).
    func name(of connection: Connection.ID) -> String? {
        guard case .known(let name)? = verdicts[connection]?.verdict else { return nil }
        return name
    }

    /// The user database changed: lookups of `uids`; those in flight are
    /// asked again when they answer.
    mutating func refresh(_ uids: [UserID], now: UInt64) -> [AccountQuery] {
        var asks: [AccountQuery] = []
        for uid in uids.sorted() {
            if inFlight[uid] != nil { inFlight[uid]!.again = true } else { asks.append(start(uid, now: now)) }
        }
        return asks
    }

    /// A lookup's answer. `accepted`: it is the one in flight (only then
    /// is it a fact to act on); `released`: the requests that waited for
    /// it; `again`: the lookup to start once more.
    mutating func answered(_ query: AccountQuery, _ answer: AccountAnswer, now: UInt64)
        -> (accepted: Bool, released: [Waiter], again: AccountQuery?) {
        guard let asked = inFlight[query.uid], asked.seq == query.seq else { return (false, [], nil) }
        inFlight[query.uid] = nil
        let verdict: Verdict
        switch answer {
        case .entry(let name):
            verdict = .known(name)
            // Every connection of the uid knows the newer name.
            for (connection, known) in verdicts where known.uid == query.uid { verdicts[connection] = (query.uid, verdict) }
        case .failed(let why):
            verdict = .failed(why)
        }
        var released: [Waiter] = []
        for (connection, waiter) in waiters.removeValue(forKey: query.uid) ?? [] {
            verdicts[connection] = (query.uid, verdict)
            released.append(waiter)
        }
        return (true, released, asked.again ? start(query.uid, now: now) : nil)
    }

    /// Lookups older than lookupLimit fail; returns their waiters.
    mutating func expire(now: UInt64) -> [Waiter] {
        var released: [Waiter] = []
        for (uid, asked) in inFlight where now >= asked.askedAt && now - asked.askedAt >= Self.lookupLimit {
            inFlight[uid] = nil
            for (connection, waiter) in waiters.removeValue(forKey: uid) ?? [] {
                verdicts[connection] = (uid, .failed("the user database did not answer within \(Self.lookupLimit / 1_000_000_000) s"))
                released.append(waiter)
            }
        }
        return released
    }

    /// The connection closed.
    mutating func forget(_ connection: Connection.ID) {
        verdicts[connection] = nil
        for uid in Array(waiters.keys) {
            waiters[uid]!.removeAll { $0.connection == connection }
            if waiters[uid]!.isEmpty { waiters[uid] = nil }
        }
    }

    mutating func removeWaiters(where shouldRemove: (Waiter) -> Bool) {
        for uid in Array(waiters.keys) {
            waiters[uid]!.removeAll { shouldRemove($0.waiter) }
            if waiters[uid]!.isEmpty { waiters[uid] = nil }
        }
    }

    /// Every waiter (a clean stop answers them).
    mutating func releaseAll() -> [Waiter] {
        defer { waiters.removeAll() }
        return waiters.keys.sorted().flatMap { waiters[$0]!.map(\.waiter) }
    }

    /// When the oldest lookup in flight runs out (`expire` ends it then).
    var nextDeadline: UInt64? { inFlight.values.map { $0.askedAt + Self.lookupLimit }.min() }

    private mutating func start(_ uid: UserID, now: UInt64) -> AccountQuery {
        lastSeq += 1
        inFlight[uid] = (now, lastSeq, false)
        return AccountQuery(uid: uid, seq: lastSeq)
    }
}
