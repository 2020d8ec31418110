// set-passcode and clear-passcode (S-36). A user changing their own passcode
// proves the old one first, as a counted attempt (S-5); the verdict is
// recorded (and durable, S-40) before anybody hears it. Every slow passcode
// job (a check, a new hash) waits in the `PasscodeQueue` (S-46, S-47); its
// running and its verdict are in PasscodeChecks.swift.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

/// A passcode job in flight or waiting, and what to do with its result.
enum PendingCheck {
    case evaluation(uid: UserID, ctx: ContextID, eval: EvaluationID)
    case oldPasscode(uid: UserID, newSecret: SecretBytes, connection: Connection.ID, tag: String)
    case newHash(uid: UserID, connection: Connection.ID, tag: String, by: UserID)
}

extension PendingCheck {
    /// The user whose passcode the job is about (the queue's key).
    var uid: UserID {
        switch self {
        case .evaluation(let uid, _, _), .oldPasscode(let uid, _, _, _), .newHash(let uid, _, _, _): return uid
        }
    }
}

/// A queued job: its purpose and the secret it needs (wiped in memory when
/// the job is done or dropped: `SecretBytes`).
struct PasscodeJob {
    var token: UInt64
    var purpose: PendingCheck
    var secret: SecretBytes
}

extension Server {
    static let minimumPasscodeLength = 4
    /// Bytes of a passcode (and of `old-secret=`): what crypt_rn takes
    /// (CRYPT_MAX_PASSPHRASE_SIZE with its NUL), and PAM's answer limit.
    static let maximumPasscodeLength = 511

    func setPasscode(_ request: Request, _ connection: Connection) {
        secretSeen = true
        if refusesLoginPasswordChange(request, connection) { return }
        guard let uid = targetUID(request, connection) else { return }
        guard let secret = request.arguments.value(for: "secret") else {
            return reply(connection, request.tag, ProtocolError(.missingArgument, "secret= is required."))
        }
        guard secret.count >= Server.minimumPasscodeLength else {
            return reply(connection, request.tag, ProtocolError(.badArgument,
                "A passcode needs at least \(Server.minimumPasscodeLength) characters."))
        }
        if let error = Server.passcodeLengthError(secret, key: "secret") { return reply(connection, request.tag, error) }
        // S-48: every attempt is recorded (passcode-refused during a delay,
        // the verdict otherwise): an unprivileged user pays from their budget,
        // whatever the attempt held (the refusal reveals nothing of it).
        if let refusal = loggedRequestRefusal(connection, events: 1) { return reply(connection, request.tag, refusal) }
        let ownPasscode = uid == connection.peer.uid
        if ownPasscode, passcodes.isSet(uid) {
            guard let old = request.arguments.value(for: "old-secret") else {
                return reply(connection, request.tag, ProtocolError(.missingArgument,
                    "old-secret= is required to change an existing passcode."))
            }
            if let error = Server.passcodeLengthError(old, key: "old-secret") { return reply(connection, request.tag, error) }
            // S-46: refused at once during a delay or a lock, unchecked, with
            // the one answer every attempt then gets.
            if refuseSetPasscodeAttempt(uid, connection, request.tag) { return }
            queuePasscodeJob(.oldPasscode(uid: uid, newSecret: SecretBytes(secret), connection: connection.id, tag: request.tag),
                             uid: uid, secret: SecretBytes(old), connection, request.tag)
        } else {
            queuePasscodeJob(.newHash(uid: uid, connection: connection.id, tag: request.tag, by: connection.peer.uid),
                             uid: uid, secret: SecretBytes(secret), connection, request.tag)
        }
    }

    /// `bad-argument` naming the limit for a secret longer than the protocol allows.
    static func passcodeLengthError(_ secret: String, key: String) -> ProtocolError? {
        guard secret.utf8.count > maximumPasscodeLength else { return nil }
        return ProtocolError(.badArgument, "\(key)= is limited to \(maximumPasscodeLength) bytes.")
    }

    func clearPasscode(_ request: Request, _ connection: Connection) {
        if refusesLoginPasswordChange(request, connection) { return }
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

    /// Queues a job for `uid` (the subject, whoever asked), or answers
    /// `busy` when the user already has as many waiting as allowed (S-47).
    func queuePasscodeJob(_ purpose: PendingCheck, uid: UserID, secret: SecretBytes,
                          _ connection: Connection?, _ tag: String?) {
        let token = nextCheckToken
        nextCheckToken += 1
        guard passcodeQueue.enqueue(PasscodeJob(token: token, purpose: purpose, secret: secret), for: uid) else {
            counters.passcodeBusy += 1
            if let connection, let tag { reply(connection, tag, Server.passcodeQueueFull) }
            return
        }
        startPasscodeJobs()
    }

    static let passcodeQueueFull = ProtocolError(.busy,
        "Too many passcode checks are waiting for this user; wait for their answers.")

    /// S-46 for set-passcode: true (and answered) when entry is refused now.
    func refuseSetPasscodeAttempt(_ uid: UserID, _ connection: Connection?, _ tag: String?) -> Bool {
        let outcome = run(.admitPasscodeAttempt(uid: uid, ctx: nil, eval: nil), connection: connection, tag: tag, now: now)
        switch outcome {
        case .events(let events) where events.isEmpty:
            return false
        case .events:
            counters.passcodeRefused += 1
            if let connection, let tag { replyPasscodeRefusal(uid, connection, tag) }
        case .rejected, .unavailable:
            if let connection, let tag { _ = events(outcome, connection, tag) }
        }
        return true
    }

    /// The answer to any set-passcode attempt during a delay or a lock: the
    /// core's, identical whatever the attempt held (S-46).
    func replyPasscodeRefusal(_ uid: UserID, _ connection: Connection, _ tag: String) {
        let failure = authenticator.state.passcodeEntryRefusal(uid, now: now)
            ?? Failure(.authenticationFailed, message: "Passcode entry is disabled.")
        reply(connection, tag, failure)
    }
}
