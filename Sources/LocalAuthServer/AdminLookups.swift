// The core's side of AdminRights: judging a connection's rights, parking
// an admin request whose answer is not known yet (`.lookUpGroup` asks the
// shell's lookup thread), and taking its answers (`adminLookupsAnswered`). AdminRights.swift says why
// the lookups leave the loop and what a request does meanwhile.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

/// An AdminGroup lookup: the uid, in the group of that name.
package struct GroupQuery: Sendable, Equatable {
    package let uid: UserID
    let group: String
    /// Which lookup this is (AdminRights numbers them): its answer counts
    /// only while this one is in flight.
    let seq: UInt64
}

extension ServerCore {
    /// The lookup thread (runs Accounts.isMember, which asks NSS).
    static func makeAdminLookups() throws -> LookupThread<GroupQuery, Bool> {
        try LookupThread { query in (try? Accounts.isMember(uid: query.uid, ofGroupNamed: query.group)) ?? false }
    }

    /// S-51: the caller's rights now, without waiting: `.unknown` while a
    /// lookup runs (its answer is asked for here when none is).
    func adminVerdict(_ connection: Connection.ID) -> AdminRights<ParkedRequest>.Verdict {
        let judged = parked.adminRights.judge(peer(of: connection).uid, daemonUID: daemonUID,
                                       group: configuration.daemon.adminGroup, now: turn.monotonic)
        if let query = judged.ask { actions.append(.lookUpGroup(query)) }
        if judged.verdict != .unknown { connections[connection]?.isAdmin = judged.verdict == .administrator }
        // A clean stop answers what waits: unknown is no right (fail closed).
        if judged.verdict == .unknown && service.isStopping { return .notAdministrator }
        return judged.verdict
    }

    /// S-51 for `request`: true when the caller is an administrator; false
    /// when it is not, or when the request now waits for the answer (then
    /// `parked` is true, nothing is replied, and the request is dispatched
    /// again once the answer is in).
    func isAdmin(_ connection: Connection.ID, for request: Request, parked: inout Bool) -> Bool {
        switch adminVerdict(connection) {
        case .administrator: return true
        case .notAdministrator: return false
        case .unknown:
            self.parked.adminRights.wait(peer(of: connection).uid,
                                         ParkedRequest(connection: connection, request: request, stamp: self.parked.lineStamp))
            pauseReading(connection)
            parked = true
            return false
        }
    }

    /// The lookup thread's answers (the shell collected them): kept, and
    /// the requests that waited for them run again at the end of this turn.
    package func adminLookupsAnswered(_ answers: [(GroupQuery, Bool)]) {
        for (query, member) in answers {
            parked.letGo(parked.adminRights.answered(query, member: member, configured: configuration.daemon.adminGroup))
        }
    }

    /// At the timer (its deadline): a lookup stuck in NSS past AdminRights.lookupLimit ends
    /// as "not a member"; its requests are refused.
    func expireAdminLookups() {
        guard !parked.adminRights.inFlight.isEmpty else { return }
        let released = parked.adminRights.expire(now: turn.monotonic)
        if !released.isEmpty {
            journal(.error, "AdminGroup: a group lookup took over \(AdminRights<ParkedRequest>.lookupLimit / 1_000_000_000) s (NSS); its requests are refused.")
        }
        parked.letGo(released)
    }
}
