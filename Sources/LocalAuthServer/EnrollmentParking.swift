// S-43 in the loop: under a real sensor, a can-evaluate or evaluate whose
// answer depends on its user's fingers waits (is parked, ParkedRequests)
// until fprintd has listed them after the request arrived;
// EnrollmentRefresh decides, this file does what it says. A parked request stops its connection: no more of
// its lines are read or handled (so pipelined replies keep their order), and
// epoll stops reporting its input; every other connection is served. When
// the query ends (answered, failed, timed out) the request is dispatched
// again, from its parsed form, at the end of the loop's turn, then the
// lines read behind it, then reading goes on.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension Policy {
    /// Whether a check of this policy depends on the user's fingers (S-43
    /// waits for fprintd's answer): the biometric policies and policy 2,
    /// whose first phase is biometric.
    var dependsOnFingers: Bool { self == .biometrics || self == .owner || self == .biometricsOrCompanion }
}

extension ServerCore {
    /// Under a real sensor: true when `request` now waits for fprintd to
    /// list `ctx`'s user's fingers (the caller returns; the request runs
    /// again when let go). A policy that does not depend on them answers
    /// at once, but still has them listed if no query runs.
    func parkedForEnrollment(_ request: Request, ctx: ContextID, policy: Policy, _ connection: Connection.ID) -> Bool {
        guard !service.isStopping, sensor.canListFingers, let uid = authenticator.state.contexts[ctx]?.uid else { return false }
        let waits = policy.dependsOnFingers
        let stamp = parked.lineStamp
        let waiter = waits ? ParkedRequest(connection: connection, request: request, stamp: stamp) : nil
        switch parked.enrollmentRefresh.need(uid, stamp: stamp, now: parked.readStamp, clock: turn.monotonic, waiter: waiter) {
        case .fresh:
            return false
        case .wait:
            pauseReading(connection)
            return true
        case .ask(let query):
            // Paused first: the query may end at once (nothing to ask).
            if waits { pauseReading(connection) }
            actions.append(.sensor(.listFingers(uid, query: query)))
            return waits
        }
    }

    /// The backend's query `query` for `uid` ended: the requests it lets
    /// go are answered at the end of this turn; a follow-up is asked for
    /// those that arrived after it was.
    func enrollmentQueryEnded(_ uid: UserID, query: UInt64) {
        let (resume, ask) = parked.enrollmentRefresh.ended(uid, query: query, now: parked.readStamp, clock: turn.monotonic)
        parked.letGo(resume)
        if let ask { actions.append(.sensor(.listFingers(uid, query: ask))) }
    }

    /// The bus was closed: no query in flight will end by itself.
    func enrollmentQueriesLost() {
        for (uid, query) in parked.enrollmentRefresh.inFlight { enrollmentQueryEnded(uid, query: query) }
    }

    /// At the timer (its deadline): a query that took longer than EnrollmentRefresh.limit
    /// (a passwd lookup stuck in NSS) ends; its checks answer from the
    /// recorded set, as they did before S-43 waited.
    func expireEnrollmentQueries() {
        guard !parked.enrollmentRefresh.isEmpty else { return }
        for (uid, query) in parked.enrollmentRefresh.expired(clock: turn.monotonic) {
            journal(.error, "fprintd: the fingers of uid \(uid) were not listed in time; answering from the recorded ones.")
            enrollmentQueryEnded(uid, query: query)
        }
    }

    /// Answers the requests let go, each followed by the lines its
    /// connection had read behind it; then that connection is read again.
    /// A request whose connection is gone (or no longer parked) is dropped.
    func resumeParkedRequests() {
        while let request = parked.nextResumable() {
            let id = request.connection
            guard connections[id]?.isParked == true else { continue }
            connections[id]?.state = .open(.lines)
            parked.lineStamp = request.stamp
            dispatch(request.request, on: id)
            processLinesAndWipe(id)
            guard connections[id]?.isReading == true else { continue }
            actions.append(roster.watch(id, reading: true))
            // The idle line timeout starts again for a half line it holds.
            notePartialLine(id, since: turn.monotonic)
        }
    }

    /// Stops reading the connection (epoll keeps only writability) while a
    /// request of it waits.
    func pauseReading(_ id: Connection.ID) {
        guard connections[id]?.isOpen == true else { return }
        connections[id]?.state = .open(.parked)
        actions.append(roster.watch(id, reading: false))
    }

    /// The connection closes with a request parked: it is never answered.
    func forgetParked(_ id: Connection.ID) {
        if connections[id]?.isParked == true { connections[id]?.state = .open(.lines) }
        parked.forget(id)
    }

    /// Clean stop (S-32): every parked request is answered from what is
    /// recorded (`stopping` parks nothing more); the lines behind it are not read.
    func answerParkedRequests() {
        for request in parked.releaseAll() where connections[request.connection]?.isParked == true {
            connections[request.connection]?.state = .open(.lines)
            dispatch(request.request, on: request.connection)
        }
    }
}
