// Requests that wait for an answer from outside the loop, a value with no
// I/O: an admin request whose AdminGroup membership is not known yet (S-51,
// AdminRights), a check that waits for fprintd to list its user's fingers
// (S-43, EnrollmentRefresh), one that waits for logind to say where its
// client is (S-61..S-63, Whereabouts), one that waits for logind to
// name its client's session (S-65, S-66, PeerSessions), and a right verb
// that waits for its caller's account (S-59, AccountLookups). A parked request stops its connection
// (no more of its lines are read or handled, so pipelined replies keep
// their order); when its answer comes it is let go (`resumable`) and run
// again at the end of the loop's turn (EnrollmentParking.swift). Also S-43's
// freshness stamps: the server numbers its reads of client sockets, and a
// request carries the stamp of the read that brought its line.
import LocalAuthCore
import LocalAuthProtocol

/// A request waiting for an answer, and the stamp of the read that brought
/// it (the lines behind it were read no later).
struct ParkedRequest {
    let connection: Connection.ID
    /// As the scanner made it: its secrets are `SecretBytes`, not Strings
    /// (S-50), wiped when the last copy of it goes (it ran, its connection
    /// closed, the daemon stopped), however long it waits.
    let request: Request
    let stamp: UInt64
}

struct ParkedRequests {
    /// S-51: group memberships, asked and known, and the requests waiting for them.
    var adminRights = AdminRights<ParkedRequest>()
    /// S-43: finger lists, asked and fresh, and the requests waiting for them.
    var enrollmentRefresh = EnrollmentRefresh<ParkedRequest>()
    /// S-65, S-66: each connection's logind session, asked and known, and
    /// the requests waiting for it.
    var peerSessions = PeerSessions<ParkedRequest>()
    /// S-59: each connection's account (passwd name), asked and known, and
    /// the right verbs waiting for it.
    var rightAccounts = AccountLookups<ParkedRequest>()
    /// S-61..S-63: requests waiting for logind, and what they wait for.
    private(set) var whereaboutsWaiters: [(parked: ParkedRequest, question: Whereabouts.Question)] = []
    /// Requests let go, to run at the end of this turn, in order.
    private(set) var resumable: [ParkedRequest] = []
    /// The number of the last read of a client socket, and the stamp of the
    /// line being handled (that read's, or a resumed request's).
    private(set) var readStamp: UInt64 = 0
    var lineStamp: UInt64 = 0

    /// A read brought bytes: its lines carry its stamp.
    mutating func read() {
        readStamp &+= 1
        lineStamp = readStamp
    }

    /// Requests whose answer came: they run at the end of the turn.
    mutating func letGo(_ requests: [ParkedRequest]) { resumable.append(contentsOf: requests) }

    /// A request waits for logind's answer to `question`.
    mutating func waitForLogind(_ request: ParkedRequest, _ question: Whereabouts.Question) {
        whereaboutsWaiters.append((request, question))
    }

    /// logind answered: the requests `which` says are let go.
    mutating func letGoLogindWaiters(where which: ((parked: ParkedRequest, question: Whereabouts.Question)) -> Bool) {
        let released = whereaboutsWaiters.filter(which)
        whereaboutsWaiters.removeAll(where: which)
        resumable.append(contentsOf: released.map(\.parked))
    }

    /// The next request let go.
    mutating func nextResumable() -> ParkedRequest? {
        guard !resumable.isEmpty else { return nil }
        return resumable.removeFirst()
    }

    /// The connection closed: its parked request is never answered.
    mutating func forget(_ id: Connection.ID) {
        enrollmentRefresh.removeWaiters { $0.connection == id }
        adminRights.removeWaiters { $0.connection == id }
        whereaboutsWaiters.removeAll { $0.parked.connection == id }
        peerSessions.removeWaiters { $0.connection == id }
        rightAccounts.forget(id)
        resumable.removeAll { $0.connection == id }
    }

    /// Clean stop (S-32): every parked request, to be answered from what is recorded.
    mutating func releaseAll() -> [ParkedRequest] {
        defer {
            resumable.removeAll()
            whereaboutsWaiters.removeAll()
        }
        return resumable + enrollmentRefresh.releaseAll() + adminRights.releaseAll() + whereaboutsWaiters.map(\.parked)
            + peerSessions.releaseAll() + rightAccounts.releaseAll()
    }

    /// When a wait next runs out (monotonic ns): a lookup, a finger list or
    /// a session asked too long ago ends then.
    var nextDeadline: UInt64? {
        [adminRights.nextDeadline, enrollmentRefresh.nextDeadline, peerSessions.nextDeadline,
         rightAccounts.nextDeadline].compactMap { $0 }.min()
    }
}
