// set-passcode and clear-passcode (S-36), and the completion of every
// passcode check that ran on a worker. A user changing their own passcode
// proves the old one first, as a counted attempt (S-5); the verdict is
// recorded (and durable, S-40) before anybody hears it.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

/// A passcode check in flight on a worker, and what to do with its verdict.
enum PendingCheck {
    case evaluation(uid: UserID, ctx: ContextID, eval: EvaluationID)
    case oldPasscode(uid: UserID, newSecret: [UInt8], connection: Connection.ID, tag: String)
    case newHash(uid: UserID, connection: Connection.ID, tag: String, by: UserID)
}

extension Server {
    static let minimumPasscodeLength = 4

    func setPasscode(_ request: Request, _ connection: Connection) {
        guard let uid = targetUID(request, connection) else { return }
        guard let secret = request.arguments.value(for: "secret") else {
            return reply(connection, request.tag, ProtocolError(.missingArgument, "secret= is required."))
        }
        guard secret.count >= Server.minimumPasscodeLength else {
            return reply(connection, request.tag, ProtocolError(.badArgument,
                "A passcode needs at least \(Server.minimumPasscodeLength) characters."))
        }
        let token = nextCheckToken
        nextCheckToken += 1
        let ownPasscode = uid == connection.peer.uid
        if ownPasscode, passcodes.isSet(uid) {
            guard let old = request.arguments.value(for: "old-secret") else {
                return reply(connection, request.tag, ProtocolError(.missingArgument,
                    "old-secret= is required to change an existing passcode."))
            }
            if let refusal = authenticator.state.passcodeEntryRefusal(uid, now: now) {
                return reply(connection, request.tag, refusal)
            }
            pendingChecks[token] = .oldPasscode(uid: uid, newSecret: Array(secret.utf8), connection: connection.id, tag: request.tag)
            workers.submit(token: token, .verify(secret: Array(old.utf8), check: passcodes.checker(for: uid)))
        } else {
            pendingChecks[token] = .newHash(uid: uid, connection: connection.id, tag: request.tag, by: connection.peer.uid)
            workers.submit(token: token, .record(secret: Array(secret.utf8), make: passcodes.recordMaker))
        }
    }

    func clearPasscode(_ request: Request, _ connection: Connection) {
        guard let uid = targetUID(request, connection, required: true) else { return }
        do {
            try passcodes.commit(nil, for: uid)
        } catch {
            DaemonLog.error("Failed to write the passcode store: \(error)")
            return reply(connection, request.tag, ProtocolError(.internal, "Failed to write the passcode store."))
        }
        lastWrongPasscode[uid] = nil
        let outcome = run(.changePasscode(uid: uid, set: false, by: connection.peer.uid), connection: connection, tag: request.tag, now: now)
        guard events(outcome, connection, request.tag) != nil else { return }
        replyOK(connection, request.tag)
    }

    func completePasscodeChecks() {
        for completion in workers.drain() {
            guard let check = pendingChecks.removeValue(forKey: completion.token) else { continue }
            switch check {
            case .evaluation(let uid, let ctx, let eval):
                let repeated = judge(uid, completion)
                run(.passcodeChecked(uid: uid, ctx: ctx, eval: eval, correct: completion.correct, repeated: repeated),
                    connection: nil, tag: nil, now: now)
            case .oldPasscode(let uid, let newSecret, let id, let tag):
                let repeated = judge(uid, completion)
                let outcome = run(.passcodeChecked(uid: uid, ctx: nil, eval: nil, correct: completion.correct, repeated: repeated),
                                  connection: nil, tag: nil, now: now)
                let connection = connections[id]
                // Only a recorded acceptance lets the change go on: a correct
                // old passcode of an admin-locked user is still refused (S-6).
                var accepted = false
                if case .events(let events) = outcome {
                    accepted = events.contains { if case .passcodeAccepted = $0.body { return true } else { return false } }
                }
                guard accepted else {
                    if let connection, events(outcome, connection, tag) != nil {
                        var failure = Failure(.authenticationFailed,
                                              message: completion.correct ? "Passcode entry is disabled." : "The old passcode is wrong.")
                        let retry = authenticator.state.passcodeRetryAfter(uid, now: now)
                        if retry > 0 { failure.retryAfter = retry }
                        failure.adminLocked = authenticator.state.user(uid).adminLocked
                        reply(connection, tag, failure)
                    }
                    continue
                }
                let token = nextCheckToken
                nextCheckToken += 1
                pendingChecks[token] = .newHash(uid: uid, connection: id, tag: tag, by: uid)
                workers.submit(token: token, .record(secret: newSecret, make: passcodes.recordMaker))
            case .newHash(let uid, let id, let tag, let by):
                let connection = connections[id]
                guard let hash = completion.hash else {
                    DaemonLog.error("Failed to hash a passcode: \(completion.error ?? "unknown error")")
                    if let connection { reply(connection, tag, ProtocolError(.internal, "Failed to hash the passcode.")) }
                    continue
                }
                do {
                    try passcodes.commit(hash, for: uid)
                } catch {
                    DaemonLog.error("Failed to write the passcode store: \(error)")
                    if let connection { reply(connection, tag, ProtocolError(.internal, "Failed to write the passcode store.")) }
                    continue
                }
                lastWrongPasscode[uid] = nil
                let outcome = run(.changePasscode(uid: uid, set: true, by: by), connection: connection, tag: tag, now: now)
                if let connection, events(outcome, connection, tag) != nil { replyOK(connection, tag) }
            }
        }
    }

    /// S-7: whether this wrong attempt repeats the previous wrong one.
    private func judge(_ uid: UserID, _ completion: PasscodeWorkers.Completion) -> Bool {
        if completion.correct {
            lastWrongPasscode[uid] = nil
            return false
        }
        let repeated = lastWrongPasscode[uid] == completion.fingerprint
        lastWrongPasscode[uid] = completion.fingerprint
        return repeated
    }
}
