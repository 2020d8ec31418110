// Who is an administrator (S-35, S-51): uid 0, the daemon's own uid, or a
// member of `AdminGroup`. Rights are judged at each admin request, not once
// per connection: a user removed from the group loses them within
// `AdminRights.cacheLifetime` (plus the lookup's own time), on every open
// connection.
//
// Group membership is an NSS lookup (getgrnam, getgrouplist: LDAP or sssd
// may take seconds), so it never runs on the event loop: a LookupThread
// answers it (AdminLookups.swift wires it). The answer stands for
// `cacheLifetime` from when it was asked. An admin request whose answer is
// unknown (none yet, or too old) waits for it, parked like an S-43 check
// (EnrollmentParking.swift: that connection's later lines wait behind it,
// every other connection is served); an answer older than `refreshAge` is
// asked again while it still stands (and at connect time, before the first
// request), so a steady flow of admin requests never waits. A lookup that
// takes longer than `lookupLimit` answers "not a member" (fail closed, for
// one cache lifetime): nothing waits for NSS forever. The requests that
// waited for a lookup are judged by its answer however old it is when it
// comes (`delivered`, until the server has run them): filed as of when it
// was asked, an answer slower than cacheLifetime would otherwise be stale
// on arrival, and its waiters would park again and ask again forever
// (a slow sssd or LDAP, or a queue of other users' lookups ahead of it).
// Each lookup is numbered (GroupQuery.seq): an answer is taken only for the
// lookup in flight with its number, so the late answer of a lookup that
// expired is never taken for a newer lookup of the same uid and group, nor
// handed to that lookup's waiters (its membership may be minutes old).

import LocalAuthCore

struct AdminRights<Waiter> {
    /// How long a group-membership answer stands (monotonic nanoseconds).
    static var cacheLifetime: UInt64 { 2_000_000_000 }
    /// An answer this old is asked again ahead of its end.
    static var refreshAge: UInt64 { 1_000_000_000 }
    /// A lookup unanswered this long counts as "not a member".
    static var lookupLimit: UInt64 { 5_000_000_000 }

    enum Verdict: Equatable { case administrator, notAdministrator, unknown }

    private var cache: [UserID: (member: Bool, at: UInt64)] = [:]
    /// Lookups asked and not answered: their group, when they were asked, and their number.
    private(set) var inFlight: [UserID: (group: String, askedAt: UInt64, seq: UInt64)] = [:]
    /// The number of the last lookup asked.
    private var lastSeq: UInt64 = 0
    private var waiters: [UserID: [Waiter]] = [:]
    /// Answers handed to their waiters, for those waiters' judgement only
    /// (`servedWaiters` forgets them once the server ran the waiters).
    private var delivered: [UserID: Bool] = [:]

    /// Forgets every answer (AdminGroup may have changed: a reload). An
    /// answer to a lookup of another group is not kept when it comes.
    mutating func forget() { cache.removeAll(); delivered.removeAll() }

    /// The verdict at `now`, and the lookup to start when one must (none
    /// known, or the known one is older than refreshAge, and none in
    /// flight). Root and the daemon's uid need no lookup.
    mutating func judge(_ uid: UserID, daemonUID: UserID, group: String?, now: UInt64) -> (verdict: Verdict, ask: GroupQuery?) {
        if uid == 0 || uid == daemonUID { return (.administrator, nil) }
        guard let group, !group.isEmpty else { return (.notAdministrator, nil) }
        if let member = delivered[uid] { return (member ? .administrator : .notAdministrator, nil) }
        var verdict = Verdict.unknown
        var age = UInt64.max
        if let known = cache[uid], now >= known.at, now - known.at < Self.cacheLifetime {
            verdict = known.member ? .administrator : .notAdministrator
            age = now - known.at
        }
        guard inFlight[uid] == nil, age >= Self.refreshAge else { return (verdict, nil) }
        lastSeq += 1
        inFlight[uid] = (group, now, lastSeq)
        return (verdict, GroupQuery(uid: uid, group: group, seq: lastSeq))
    }

    /// The verdict known now, without asking (S-53's reserved slots at
    /// accept): nil when no answer stands.
    func known(_ uid: UserID, daemonUID: UserID, group: String?, now: UInt64) -> Bool? {
        if uid == 0 || uid == daemonUID { return true }
        guard let group, !group.isEmpty else { return false }
        guard let answer = cache[uid], now >= answer.at, now - answer.at < Self.cacheLifetime else { return nil }
        return answer.member
    }

    /// `waiter` waits for the lookup of `uid` in flight.
    mutating func wait(_ uid: UserID, _ waiter: Waiter) {
        waiters[uid, default: []].append(waiter)
    }

    /// A lookup's answer (a failed lookup is "not a member": S-51 grants
    /// nothing on failure), kept as of when it was asked if its group is
    /// still the configured one; returns the waiters to judge again. The
    /// answer of a lookup that is no longer in flight (expired, perhaps
    /// asked again since) is dropped.
    mutating func answered(_ query: GroupQuery, member: Bool, configured: String?) -> [Waiter] {
        let uid = query.uid, group = query.group
        guard let asked = inFlight[uid], asked.seq == query.seq, asked.group == group else { return [] }
        inFlight[uid] = nil
        if group == configured {
            if cache.count >= 4096 { cache.removeAll() }  // bounded: one entry per uid seen recently
            cache[uid] = (member, asked.askedAt)
        }
        guard let released = waiters.removeValue(forKey: uid) else { return [] }
        // For a changed group the waiters are judged again against the new one.
        if group == configured { delivered[uid] = member }
        return released
    }

    /// The waiters released by `answered` have run: their answers stop
    /// standing in for the cache.
    mutating func servedWaiters() {
        if !delivered.isEmpty { delivered.removeAll() }
    }

    /// Lookups older than lookupLimit end as "not a member" (kept for one
    /// cache lifetime from `now`); returns their waiters.
    mutating func expire(now: UInt64) -> [Waiter] {
        var released: [Waiter] = []
        for (uid, asked) in inFlight where now >= asked.askedAt && now - asked.askedAt >= Self.lookupLimit {
            inFlight[uid] = nil
            cache[uid] = (false, now)
            released += waiters.removeValue(forKey: uid) ?? []
        }
        return released
    }

    mutating func removeWaiters(where shouldRemove: (Waiter) -> Bool) {
        for uid in Array(waiters.keys) {
            waiters[uid]!.removeAll(where: shouldRemove)
            if waiters[uid]!.isEmpty { waiters[uid] = nil }
        }
    }

    /// Every waiter (a clean stop answers them).
    mutating func releaseAll() -> [Waiter] {
        defer { waiters.removeAll() }
        return waiters.values.flatMap { $0 }
    }

    var hasWaiters: Bool { !waiters.isEmpty }

    /// When the oldest lookup in flight runs out (`expire` ends it then).
    var nextDeadline: UInt64? { inFlight.values.map { $0.askedAt + Self.lookupLimit }.min() }
}
