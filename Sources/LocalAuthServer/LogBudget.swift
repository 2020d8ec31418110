// S-48: no unprivileged user can exhaust the log. Each principal (S-53: a
// user with their subordinate uids and the setuid programs they run) that
// is not an administrator has a budget of logged events, a token bucket
// (`[Log] UserEventRate=` per second, `UserEventBurst=` at once) kept on one
// record that every connection of that principal shares, so that many
// connections, many uids or pipelining gain nothing. A request that would record when the bucket is
// empty is refused with `limit-exceeded` and records nothing.
//
// Only the requests that an unprivileged user can repeat at will are charged:
// `new`, `set` (one per property), `can-evaluate`, `evaluate`, the right-*
// verbs, and passcode attempts (`passcode`: 3, its attempt, verdict and next
// prompt; `set-passcode`: 1): during a delay each attempt is recorded as
// passcode-refused, and the same wrong passcode again counts once (S-7), so
// without the budget either could be sent without end. A refused `passcode`
// leaves its prompt waiting. What S-48 protects is never refused: failures
// (bounded by the sensor, S-46 and the charged attempts), the answers that
// end a running evaluation (`fallback`, `cancel`, disconnects), admin
// actions, daemon starts and stops.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

/// What the daemon keeps per uid while it has connections (or an unfilled
/// bucket, so that reconnecting does not refill it): the event budget and
/// the bytes of string properties its contexts hold (PropertyCaps.swift).
final class UserAllowance {
    let uid: UserID
    /// Events the user may still cause now (fractions accrue between requests).
    private var tokens: Double
    /// Wall-clock microseconds of the last refill: the loop turn's time,
    /// already read (a clock read per request was a third of the budget's
    /// cost). A clock set back restarts the refill from there, so it can
    /// neither stall the bucket nor fill it beyond the burst.
    private var refilledAt: Int64
    /// Bytes of the string properties of this uid's contexts, on all its connections.
    var propertyBytes = 0
    /// Open connections of this uid that share the record.
    var connections = 0

    init(uid: UserID, burst: Int, now: Int64) {
        self.uid = uid
        tokens = Double(burst)
        refilledAt = now
    }

    /// Takes `count` events from the bucket; false (and nothing taken) when
    /// it holds fewer. A rate of 0 is no limit.
    func take(_ count: Int, rate: Int, burst: Int, now: Int64) -> Bool {
        guard rate > 0 else { return true }
        refill(rate: rate, burst: burst, now: now)
        guard tokens >= Double(count) else { return false }
        tokens -= Double(count)
        return true
    }

    /// Nothing to remember: the bucket is full and no property is held.
    func isIdle(rate: Int, burst: Int, now: Int64) -> Bool {
        refill(rate: rate, burst: burst, now: now)
        return connections == 0 && propertyBytes == 0 && (rate == 0 || tokens >= Double(burst))
    }

    private func refill(rate: Int, burst: Int, now: Int64) {
        if now > refilledAt {
            tokens = min(Double(burst), tokens + Double(now - refilledAt) * Double(rate) / 1e6)
        }
        refilledAt = now
    }
}

/// The server's S-48 state, a value with no I/O (one stored property of
/// `ServerCore`): each uid's shared allowance while it has connections or
/// an unfilled bucket, the space reserve's last look, and the refusals
/// counted for `stats`. It is given the configuration's rate and burst
/// and the turn's time; the core judges who is exempt and keeps the timer.
struct LogLimits {
    var allowances: [UserID: UserAllowance] = [:]
    /// S-55: the buckets of PAM traffic, per (subject, requester) pair
    /// (OnBehalfBudget.swift).
    var onBehalf: [RequesterPair: UserAllowance] = [:]
    /// Free space on the log's file system is below `[Log] ReserveSpace=`
    /// (SpaceReserve.swift; looked at when a look is older than 100 ms at
    /// an admission and after many appended records, estimated in between).
    var spaceLow = false
    /// The last look at the free space, the estimate's base.
    var spaceLook = SpaceLook()
    /// The log's last seq when the free space was last judged.
    var spaceJudgedAtSeq: UInt64 = 0
    /// When (monotonic ns) the free space was last looked at; nil: never.
    var spaceLookedAt: UInt64?
    /// Refusals, for `stats`.
    var refusedForRate = 0
    var refusedForSpace = 0
    var refusedForSize = 0
    /// Contexts ended since memory was last handed back (MemoryRelease.swift).
    var contextsEnded = 0
    var contextsEndedAtLastPass = 0
    var memoryReleases = 0

    /// The shared record of `uid`, made (a full bucket) at its first connection.
    mutating func allowance(for uid: UserID, burst: Int, now: @autoclosure () -> Int64) -> UserAllowance {
        if let existing = allowances[uid] { return existing }
        let fresh = UserAllowance(uid: uid, burst: burst, now: now())
        allowances[uid] = fresh
        return fresh
    }

    /// A connection of the record's uid is gone: the record is forgotten
    /// once it holds nothing (a user who emptied the bucket finds it as
    /// empty on a new connection). True when it stays only to fill again.
    mutating func released(_ allowance: UserAllowance, rate: Int, burst: Int, now: Int64) -> Bool {
        allowance.connections -= 1
        prune(allowance, rate: rate, burst: burst, now: now)
        return allowance.connections == 0 && allowances[allowance.uid] != nil
    }

    /// Drops the records of uids without connections (`connected`) whose
    /// bucket is full again; true when some are still filling.
    mutating func pruneIdle(connected: [UserID: Int], rate: Int, burst: Int, now: @autoclosure () -> Int64) -> Bool {
        guard allowances.count > connected.count else { return false }
        for (uid, allowance) in allowances where connected[uid] == nil { prune(allowance, rate: rate, burst: burst, now: now()) }
        return allowances.count > connected.count
    }

    private mutating func prune(_ allowance: UserAllowance, rate: Int, burst: Int, now: Int64) {
        if allowance.isIdle(rate: rate, burst: burst, now: now) { allowances[allowance.uid] = nil }
    }
}

extension ServerCore {
    /// A connection is gone: its record goes once it holds nothing; one
    /// still filling is looked at again when the timer passes (Deadlines.swift).
    func releaseAllowance(of connection: Connection) {
        guard let allowance = connection.allowance else { return }
        let filling = limits.released(allowance, rate: configuration.log.userEventRate,
                                      burst: configuration.log.userEventBurst, now: now)
        if filling, deadlines.allowancePrune == nil {
            deadlines.allowancePrune = turn.monotonic + CoreDeadlines.allowancePruneEvery
        }
    }

    /// Records kept for buckets that are filling again after their last
    /// connection closed: dropped once full (at most once a second while
    /// any is filling; none, no deadline).
    func pruneIdleAllowances() {
        deadlines.allowancePrune = nil
        if limits.pruneIdle(connected: roster.perUser, rate: configuration.log.userEventRate,
                            burst: configuration.log.userEventBurst, now: now) {
            deadlines.allowancePrune = turn.monotonic + CoreDeadlines.allowancePruneEvery
        }
    }

    /// Administrators are exempt from the budget and the per-user cap:
    /// root's own processes and the daemon's user without a lookup (the hot
    /// path), group members judged now (S-51, `isAdmin`), not as when they
    /// connected. A setuid program is not its effective uid's (S-53): it
    /// counts for the user who ran it, root privileges or not.
    func isExemptFromLimits(_ connection: Connection.ID) -> Bool {
        guard let (privileged, uid, principal) = connections.withValue(connection, {
            ($0.isPrivileged, $0.peer.uid, $0.principal.uid)
        }) else { return false }
        if privileged { return true }
        guard principal == uid else { return false }
        // Root unverified (a kernel before 6.13 cannot say its real uid):
        // as before principals, uid 0 and the daemon's uid are exempt.
        if uid == 0 || uid == daemonUID { return true }
        // Without an AdminGroup nobody else is one: no clock read, no lookup.
        guard let group = configuration.daemon.adminGroup, !group.isEmpty else { return false }
        // Not known yet (a lookup runs, AdminRights.swift): the budget applies.
        return adminVerdict(connection) == .administrator
    }

    /// Why an unprivileged request that would record `events` events must
    /// be refused, or nil (then the events are taken from the budget).
    /// Administrators are never refused here. Allocation-free when it lets
    /// the request go (can-evaluate's in-place path calls it).
    func loggedRequestRefusal(_ connection: Connection.ID, events: Int) -> ProtocolError? {
        if isExemptFromLimits(connection) { return nil }
        if reserveIsReached() {
            limits.refusedForSpace += 1
            return ProtocolError(.unavailable,
                "The disk holding the event log is nearly full (less than ReserveSpace=\(configuration.log.reserveSpace) bytes free); "
                + "it is kept for security events and administrators until space is freed.")
        }
        guard let allowance = connections[connection]?.allowance else { return nil }
        let rate = configuration.log.userEventRate, burst = configuration.log.userEventBurst
        if allowance.take(events, rate: rate, burst: burst, now: now) { return nil }
        limits.refusedForRate += 1
        return ProtocolError(.limitExceeded,
            "Too many logged requests from uid \(allowance.uid) (with its subordinate uids and setuid programs): at most UserEventRate=\(rate) per second "
            + "(UserEventBurst=\(burst) at once); nothing was recorded, try again later.")
    }
}
