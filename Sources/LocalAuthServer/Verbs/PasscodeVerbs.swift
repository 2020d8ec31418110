// set-passcode and clear-passcode (S-36). What a request must hold and
// whether the old passcode is needed are the core's rules (PasscodeSecret,
// PasscodeChange); a user changing their own passcode proves the old one
// first, as a counted attempt (S-5), whose verdict is recorded (and durable,
// S-40) before anybody hears it. Every slow passcode job (a check, a new
// hash) waits in the `PasscodeQueue` (S-46, S-47); its running and its
// verdict are in PasscodeChecks.swift.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

extension ServerCore {
    func setPasscode(_ request: Request, _ connection: Connection.ID) {
        secretSeen = true
        if refusesLoginPasswordChange(request, connection) { return }
        guard let uid = targetUID(request, connection), !refusedAsRootOnly(request, connection, subject: uid) else { return }
        // S-50: the secrets as the scanner decoded them, in wipeable bytes.
        let secret = request.secret("secret"), old = request.secret("old-secret")
        if let problem = judged(secret, { PasscodeSecret.refusal(ofNew: $0) }) {
            return reply(connection, request.tag, problem)
        }
        guard let secret else { return }  // refused above as missing
        // S-48: every attempt is recorded (passcode-refused during a delay,
        // the verdict otherwise): an unprivileged user pays from their budget,
        // whatever the attempt held (the refusal reveals nothing of it).
        if let refusal = loggedRequestRefusal(connection, events: 1) { return reply(connection, request.tag, refusal) }
        let plan = judged(old) { PasscodeChange.mustProveOldSecret(own: uid == peer(of: connection).uid, stored: passcodes.isSet(uid), oldSecret: $0) }
        switch plan {
        case .failure(let problem):
            reply(connection, request.tag, problem)
        case .success(true):
            guard let old else { return }  // mustProveOldSecret refuses a missing one
            // S-46: refused at once during a delay or a lock, unchecked, with
            // the one answer every attempt then gets.
            if refuseSetPasscodeAttempt(uid, connection, request.tag) { return }
            queuePasscodeJob(.oldPasscode(uid: uid, newSecret: secret, connection: connection, tag: request.tag),
                             uid: uid, secret: old, requester: connection, connection, request.tag)
        case .success(false):
            queuePasscodeJob(.newHash(uid: uid, connection: connection, tag: request.tag, by: peer(of: connection).uid),
                             uid: uid, secret: secret, requester: connection, connection, request.tag)
        }
    }

    /// The record goes first (the shell's `.commitPasscode`), then its
    /// event; the connection's later lines wait for the store's answer.
    func clearPasscode(_ request: Request, _ connection: Connection.ID) {
        if refusesLoginPasswordChange(request, connection) { return }
        guard let uid = targetUID(request, connection, required: true),
              !refusedAsRootOnly(request, connection, subject: uid) else { return }
        pauseReading(connection)
        removePasscodeRecord(PendingCommit(uid: uid, set: false, by: peer(of: connection).uid, connection: connection,
                                           tag: request.tag, parksConnection: true))
    }

    /// A core rule applied to a secret's bytes (nil: the key is absent).
    func judged<R>(_ secret: SecretBytes?, _ rule: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        guard let secret else { return rule(nil) }
        return secret.withUnsafeBytes { rule($0) }
    }

    /// Queues a job about `uid` (the subject) for the principal of
    /// `requester` (S-53: the user who asked), or answers `busy` when that
    /// principal already has as many waiting as allowed (S-47).
    func queuePasscodeJob(_ purpose: PendingCheck, uid: UserID, secret: SecretBytes, requester: Connection.ID,
                          _ connection: Connection.ID?, _ tag: String?) {
        let (principal, unlimited) = passcodeQueueKey(requester, subject: uid)
        guard passcodeJobs.enqueue(purpose, subject: uid, principal: principal, unlimited: unlimited, secret: secret) else {
            counters.passcodeBusy += 1
            if let connection, let tag { reply(connection, tag, Rejection.passcodeQueueFull) }
            return
        }
        startPasscodeJobs()
    }

    /// Whose queue a job of `requester` waits in (S-53): its principal, and
    /// whether it is root's own (no cap). A requester gone meanwhile (a
    /// job that continues its request) waits in its subject's.
    func passcodeQueueKey(_ requester: Connection.ID, subject: UserID) -> (principal: UserID, unlimited: Bool) {
        connections.withValue(requester) { ($0.principal.uid, $0.isPrivileged) } ?? (subject, false)
    }

    /// S-46 for set-passcode: true (and answered) when entry is refused now,
    /// with the core's answer, identical whatever the attempt held.
    func refuseSetPasscodeAttempt(_ uid: UserID, _ connection: Connection.ID?, _ tag: String?) -> Bool {
        let outcome = run(.admitPasscodeAttempt(uid: uid, ctx: nil, eval: nil), connection: connection, tag: tag, now: now)
        if case .events = outcome { return false }  // admitted: no event, no answer
        if case .answered = outcome { counters.passcodeRefused += 1 }
        if let connection, let tag { _ = events(outcome, connection, tag) }
        return true
    }
}
