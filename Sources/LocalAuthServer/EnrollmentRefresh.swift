// S-43: "the daemon notices enrollment changes made with fprintd's own
// tools at the latest at the user's next can-evaluate or evaluate". fprintd
// says nothing when fprintd-enroll or fprintd-delete change a user's prints,
// so a check that depends on them waits for a ListEnrolledFingers sent after
// it arrived. This value decides, with no I/O and no clock of its own, which
// requests answer now, which wait (parked), when a query is to be sent, and
// which parked requests a query's end lets go; the server does what it says.
//
// Freshness is by arrival stamps, not by time. The server numbers its reads
// of client sockets (a counter that only grows); a request carries the stamp
// of the read that brought its line, a query the stamp current when it was
// asked for. A query asked at stamp q is sent after every line stamped <= q
// had arrived, so its answer reflects every change that was complete when
// those lines came, and they may answer from it. A line stamped later waits
// for a query asked after it. Lines pipelined behind a parked one on the
// same connection were read no later than it, so one answer serves them all.
//
// One query per user is in flight; every request of that user that arrives
// meanwhile waits for it, or (stamped after it was asked) for the single
// follow-up asked when it ends. A query that fails ends the same way: the
// waiting requests answer with what the daemon then knows (a reader the
// backend marked unavailable answers biometryNotAvailable). A query that
// never ends (a bus closed under it, a passwd lookup stuck in NSS) is ended
// by `expire` after `Self.limit`, and its late answer is ignored here.
import LocalAuthCore

struct EnrollmentRefresh<Waiter> {
    /// What a request is to do.
    enum Need: Equatable {
        /// The recorded set is fresh enough: answer now.
        case fresh
        /// Wait for the query in flight.
        case wait
        /// Send query `query` (ListEnrolledFingers) and wait for its end.
        case ask(query: UInt64)
    }

    /// A parked request.
    struct Parked {
        var uid: UserID
        var stamp: UInt64
        var waiter: Waiter
    }

    private struct User {
        /// Answers reflect every change made before lines stamped <= this.
        var freshThrough: UInt64 = 0
        /// The query in flight (its stamp) and when it was asked (monotonic ns).
        var inFlight: UInt64?
        var askedAt: UInt64 = 0
        /// The newest stamp some request needs (a follow-up is due while it
        /// is past `freshThrough`).
        var wanted: UInt64 = 0
    }

    /// The longest a query may take (names lookup plus the D-Bus call,
    /// FprintdSensor.callTimeout each) before its waiters answer anyway.
    static var limit: UInt64 { 10_000_000_000 }

    private var users: [UserID: User] = [:]
    /// In arrival order (a connection has at most one: its reading pauses).
    private(set) var parked: [Parked] = []

    var isEmpty: Bool { parked.isEmpty && users.values.allSatisfy { $0.inFlight == nil } }

    /// A request of `uid` whose line came with read `stamp`; `now` is the
    /// current stamp (>= every stamp seen) and `clock` the monotonic time.
    /// With `waiter` nil the request does not wait (a policy that does not
    /// depend on the fingers: `.fresh` unless a query is to be sent, which
    /// it then does not wait for either).
    mutating func need(_ uid: UserID, stamp: UInt64, now: UInt64, clock: UInt64, waiter: Waiter?) -> Need {
        var user = users[uid] ?? User()
        defer { users[uid] = user }
        if user.freshThrough >= stamp { return .fresh }
        user.wanted = max(user.wanted, stamp)
        if let waiter { parked.append(Parked(uid: uid, stamp: stamp, waiter: waiter)) }
        guard user.inFlight == nil else { return waiter == nil ? .fresh : .wait }
        user.inFlight = max(now, stamp)
        user.askedAt = clock
        return .ask(query: user.inFlight!)
    }

    /// Query `query` of `uid` ended (answered, failed or given up). Returns
    /// the parked requests it lets go, in arrival order, and the follow-up
    /// query to send if later requests still wait. An end that is not the
    /// one in flight (already expired or abandoned) changes nothing.
    mutating func ended(_ uid: UserID, query: UInt64, now: UInt64, clock: UInt64) -> (resume: [Waiter], ask: UInt64?) {
        guard var user = users[uid], user.inFlight == query else { return ([], nil) }
        user.inFlight = nil
        user.freshThrough = max(user.freshThrough, query)
        var resume: [Waiter] = []
        var kept: [Parked] = []
        for entry in parked {
            if entry.uid == uid && entry.stamp <= user.freshThrough { resume.append(entry.waiter) } else { kept.append(entry) }
        }
        parked = kept
        var ask: UInt64?
        if user.wanted > user.freshThrough {
            user.inFlight = max(now, user.wanted)
            user.askedAt = clock
            ask = user.inFlight
        }
        users[uid] = user
        return (resume, ask)
    }

    /// The queries asked longer than `limit` ago, to be ended (`ended`).
    func expired(clock: UInt64) -> [(uid: UserID, query: UInt64)] {
        users.compactMap { uid, user in
            guard let query = user.inFlight, clock >= user.askedAt, clock - user.askedAt >= Self.limit else { return nil }
            return (uid, query)
        }.sorted { $0.uid < $1.uid }
    }

    /// When the oldest query in flight runs out (`expired` lists it then).
    var nextDeadline: UInt64? { users.values.compactMap { $0.inFlight == nil ? nil : $0.askedAt + Self.limit }.min() }

    /// Every query in flight (the bus was lost: none of them will end).
    var inFlight: [(uid: UserID, query: UInt64)] {
        users.compactMap { uid, user in user.inFlight.map { (uid, $0) } }.sorted { $0.uid < $1.uid }
    }

    /// Forgets the parked requests `matching` says (their connection closed).
    mutating func removeWaiters(where matching: (Waiter) -> Bool) {
        parked.removeAll { matching($0.waiter) }
    }

    /// Lets every parked request go (the daemon stops), in arrival order.
    mutating func releaseAll() -> [Waiter] {
        defer { parked.removeAll() }
        return parked.map(\.waiter)
    }
}
