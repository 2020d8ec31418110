// S-61..S-63 in the loop: a check or evaluation whose answer depends on
// where its client is waits (is parked, as EnrollmentParking's do) until
// logind has said whether the connection's session is remote, or how the
// lid is; Whereabouts decides, this file does what it says. logind is a
// port (LogindWatch in the daemon; none in the simulator and the core's
// tests, where no client is remote by its session and the lid is open).
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

/// Where the core's questions to logind go; each is answered once, through
/// `logindSessionAnswered` / `logindLidAnswered`.
protocol LogindPort: AnyObject {
    func askSession(pid: Int32, connection: Connection.ID)
    func askLid()
}

extension ServerCore {
    /// true when `request` now waits for logind (it runs again when let go).
    func parkedForWhereabouts(_ request: Request, ctx: ContextID, policy: Policy, _ connection: Connection.ID) -> Bool {
        guard policy.dependsOnFingers, !isStopping, let port = logindPort, whereabouts.logindPresent,
              let wait = whereabouts.wait(for: connection, rhost: trail.origin(of: ctx)?.rhost, now: turn.monotonic) else {
            return false
        }
        parked.waitForLogind(ParkedRequest(connection: connection, request: request, stamp: parked.lineStamp), wait.question)
        pauseReading(connection)
        if wait.ask {
            switch wait.question {
            case .session: port.askSession(pid: peer(of: connection).pid, connection: connection)
            case .lid: port.askLid()
            }
        }
        return true
    }

    /// Why biometry is unavailable to this client now (S-61..S-63), or nil.
    func biometryBlock(_ ctx: ContextID, _ connection: Connection.ID) -> BiometryBlock? {
        guard whereabouts.mayBlock else { return nil }
        return whereabouts.block(for: connection, rhost: trail.origin(of: ctx)?.rhost, reader: sensor.readerName)
    }

    func logindSessionAnswered(_ connection: Connection.ID, _ lookup: SessionLookup) {
        if case .unavailable(let error) = lookup, !error.absent {
            journal(.error, "logind did not tell the session of a client (\(error.message)); biometry is refused to it for now.")
        }
        whereabouts.sessionAnswered(connection, lookup, now: turn.monotonic)
        releaseWhereaboutsWaiters { $0.parked.connection == connection && $0.question == .session }
    }

    func logindLidAnswered(_ answer: Result<LidState, LogindError>) {
        if whereabouts.lidAnswered(answer, reader: sensor.readerName, now: turn.monotonic) {
            let closed = whereabouts.inaccessible(reader: sensor.readerName)
            journal(.notice, closed ? "The lid is closed: the built-in reader is inaccessible (S-62)."
                                    : "The lid is open: the reader is accessible again.")
            // Every watcher's STATE line carries it (LAEnvironment).
            for uid in watches.byUser.keys.sorted() { sendWatchedStates(uid) }
        }
        releaseWhereaboutsWaiters { $0.question == .lid }
    }

    /// logind announced PrepareForSleep (S-63).
    func logindSleep(_ suspending: Bool) {
        guard whereabouts.settings.cancelOnSuspend, suspending != whereabouts.sleeping else { return }
        whereabouts.sleeping = suspending
        journal(.notice, suspending ? "The system is going to sleep: every biometric prompt ends (S-63)."
                                    : "The system woke up.")
        if suspending, !sensor.isSimulated { actions.append(.sensor(.systemSleeping(true))) }
        run(.systemSleep(suspending: suspending, endScans: true), connection: nil, tag: nil, now: now)
        if !suspending, !sensor.isSimulated { actions.append(.sensor(.systemSleeping(false))) }
    }

    /// logind is gone or was never there: nothing waits for it.
    func logindAbsent() {
        whereabouts.logindPresent = false
        releaseWhereaboutsWaiters { _ in true }
    }

    private func releaseWhereaboutsWaiters(_ which: ((parked: ParkedRequest, question: Whereabouts.Question)) -> Bool) {
        parked.letGoLogindWaiters(where: which)
    }

    /// The context was created or went: S-61's remote on-behalf contexts
    /// (they keep the usual can-evaluate off its in-place path).
    func noteOrigin(_ ctx: ContextID, _ origin: ContextOrigin?) {
        if let origin, whereabouts.remoteHost(origin.rhost) != nil {
            whereabouts.remoteContexts.insert(ctx)
        } else {
            whereabouts.remoteContexts.remove(ctx)
        }
    }
}
