// Who is an administrator (S-35, S-51): uid 0, the daemon's own uid, or a
// member of `AdminGroup`. Rights are judged at each admin request, not once
// per connection: a user removed from the group loses them within
// `AdminRights.cacheLifetime`, on every open connection. Group membership
// (an NSS lookup) is cached per uid for that long, so a flood of admin
// requests costs one lookup per uid every couple of seconds.
import LocalAuthCore
import LocalAuthSystem

struct AdminRights {
    /// How long a group-membership answer stands (monotonic nanoseconds).
    static let cacheLifetime: UInt64 = 2_000_000_000
    private var cache: [UserID: (member: Bool, at: UInt64)] = [:]

    /// Forgets every answer (AdminGroup may have changed: a reload).
    mutating func forget() { cache.removeAll() }

    mutating func isAdministrator(_ uid: UserID, daemonUID: UserID, group: String?, now: UInt64) -> Bool {
        if uid == 0 || uid == daemonUID { return true }
        guard let group, !group.isEmpty else { return false }
        if let known = cache[uid], now >= known.at, now - known.at < AdminRights.cacheLifetime { return known.member }
        // A failing lookup grants nothing.
        let member = (try? Accounts.isMember(uid: uid, ofGroupNamed: group)) ?? false
        if cache.count > 4096 { cache.removeAll() }  // bounded: one entry per uid seen recently
        cache[uid] = (member, now)
        return member
    }
}

extension Server {
    /// S-51: the caller's rights now (and remembered on the connection).
    func isAdmin(_ connection: Connection) -> Bool {
        let verdict = adminRights.isAdministrator(connection.peer.uid, daemonUID: daemonUID,
                                                  group: configuration.daemon.adminGroup, now: MonotonicClock.nowNanos())
        connection.isAdmin = verdict
        return verdict
    }
}
