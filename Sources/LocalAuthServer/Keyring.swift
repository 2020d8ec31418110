// The login secret in the daemon (S-74..S-77): its state, the store's
// writes off the loop, and the work of each tick. The verbs are in
// Verbs/KeyringVerbs.swift; offers, sealing and releases in
// KeyringRelease.swift; the file in LoginSecretStore.swift; what reads the
// shadow file or the disk in LoginSecretJobs.swift.
//
// The store changes in memory at once and is answered (and its events
// recorded) once a write that holds the change is durable, as the right
// store is (RightStoreWrites.swift): one write in flight, the changes made
// meanwhile in the next. A failed write rolls every change not yet on disk
// back and answers each waiter `internal`.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

struct Keyring {
    var store = LoginSecretStore(path: "/dev/null")
    /// Derived from the daemon's key at start (nil: the daemon has not opened the store).
    var keys: LoginSecretKeys?
    /// Why the store found at start was not used, recorded at the first tick.
    var startDistrust: LoginSecretStore.Distrust?
    var started = false
    /// The latest success of each open on-behalf context, and whether its
    /// offer was taken (S-75).
    var successes: [ContextID: KeyringSuccess] = [:]
    /// The store's write in flight, and the changes waiting for the next.
    var inFlight: (token: UInt64, snapshot: [UserID: LoginSecretCopy?], waiters: [KeyringWriteWaiter])?
    var waiting: [KeyringWriteWaiter] = []
    /// Jobs on the keyring thread, by token: releases and checks.
    var opening: [UInt64: ReleaseWaiter] = [:]
    var checking: [UInt64: CheckWaiter] = [:]
    var nextToken: UInt64 = 1
    /// Released secrets whose record is not durable yet (S-77).
    var releases: [PendingRelease] = []
    /// The shadow scanner's generation the copies were last checked against.
    var checkedGeneration: UInt64?

    /// No write, opening, check or release waits or runs (S-83).
    var isIdle: Bool { inFlight == nil && waiting.isEmpty && opening.isEmpty && checking.isEmpty && releases.isEmpty }
}

/// The latest success of an on-behalf context.
struct KeyringSuccess {
    var eval: EvaluationID
    var method: SuccessMethod
    var taken = false
}

/// A change of the store waiting for its write: who to answer, what to record.
struct KeyringWriteWaiter {
    var reply: (connection: Connection.ID, tag: String)?
    var facts: [LoginSecretFact]
}

/// A `login-secret` whose copy is being opened.
struct ReleaseWaiter {
    var connection: Connection.ID
    var tag: String
    var uid: UserID
    var ctx: ContextID
    var eval: EvaluationID
    var service: String
    var binding: [UInt8]
}

/// A check of copies against the shadow file: a status to answer, or the
/// copies to void when they changed.
enum CheckWaiter {
    case status(connection: Connection.ID, tag: String, fields: [(String, String)])
    case revalidation
}

/// A released password waiting for `login-secret-released` to be durable.
struct PendingRelease {
    var connection: Connection.ID
    var tag: String
    var seq: UInt64
    /// Wiped when the last reference goes (sent, or dropped with its connection).
    var secret: SecretBytes
}

extension ServerCore {
    /// ReleaseLoginPassword=yes under Backend=shadow (and the store open).
    var keyringIsOn: Bool {
        configuration.keyring.releaseLoginPassword && passcodes is ShadowPasscodes && keyring.keys != nil
    }

    /// Whether an on-behalf context's sign-ins may seal and receive the secret:
    /// opened by root over the socket, for a listed service (S-74, S-75).
    func keyringListed(_ origin: ContextOrigin) -> Bool {
        guard origin.caller == 0, origin.transport == .socket, let service = origin.service else { return false }
        return configuration.keyring.services.contains(service)
    }

    var shadowPath: String { (passcodes as? ShadowPasscodes)?.path ?? configuration.passcode.shadowFile }

    /// At start, after the right store and the key: the login secret's store.
    /// A store that is not to be trusted is not used (S-76); the journal
    /// says why now, the log at the first tick.
    func openLoginSecrets(stateDirectory: String) {
        let keys = LoginSecretKeys(daemonKey: rights.secretKey)
        let (store, distrust) = LoginSecretStore.open(directory: stateDirectory, keys: keys)
        keyring.keys = keys
        keyring.store = store
        keyring.startDistrust = distrust
        if let distrust {
            DaemonLog.error("The login-secret store \(store.path) is not used: \(distrust.why). Nobody's login password is "
                + "released until they sign in with it again (after `localauthctl keyring enable`); the next change replaces the file.")
        }
        if configuration.keyring.releaseLoginPassword, !(passcodes is ShadowPasscodes) {
            DaemonLog.notice("[Keyring] ReleaseLoginPassword=yes needs [Passcode] Backend=shadow (the passcode is not the login "
                + "password otherwise); the release stays off.")
        }
    }

    // MARK: - At start, at a reload, when the shadow file changed

    /// Whether the start's work (`keyringCheck`) is still to do: a deadline
    /// of now for the loop's timer (Deadlines.swift), once.
    var keyringStartIsDue: Bool { keyring.keys != nil && !keyring.started }

    /// Records the start's refusal, removes copies the release being off
    /// may not keep, and checks the copies again whenever the shadow file
    /// changed (S-76). Runs at the first timer after the start, after a
    /// reload, and after each scan of a changed shadow file.
    func keyringCheck() {
        guard logHealth.isRecording, keyring.keys != nil else { return }
        if !keyring.started {
            keyring.started = true
            if let distrust = keyring.startDistrust {
                keyring.startDistrust = nil
                run(.recordLoginSecret(.refused(LoginSecretRefusal(uid: daemonUID, caller: daemonUID, reason: distrust.reason))),
                    connection: nil, tag: nil, now: now)
            }
        }
        let copies = keyring.store.copies
        guard !copies.isEmpty else { return }
        if !keyringIsOn {
            // S-76: with the release off, nothing sealed stays on disk.
            var facts: [LoginSecretFact] = []
            for (uid, copy) in copies where keyring.store.void(uid, binding: copy.binding) {
                facts.append(.voided(uid: uid, reason: .turnedOff))
            }
            if !facts.isEmpty { awaitKeyringWrite(KeyringWriteWaiter(reply: nil, facts: facts)) }
            return
        }
        guard let shadow = passcodes as? ShadowPasscodes, keyring.checking.values.allSatisfy({
            if case .revalidation = $0 { return false } else { return true }
        }) else { return }
        let generation = shadow.fileGeneration
        guard generation != keyring.checkedGeneration else { return }
        keyring.checkedGeneration = generation
        let expected = Dictionary(uniqueKeysWithValues: copies.map { ($0.0, $0.1.binding) })
        startKeyringJob(.check(expected), checking: .revalidation)
    }

    // MARK: - Jobs

    func startKeyringJob(_ work: KeyringJob.Work, checking waiter: CheckWaiter? = nil, opening release: ReleaseWaiter? = nil) {
        guard let keys = keyring.keys else { return }
        let token = keyring.nextToken
        keyring.nextToken += 1
        if let waiter { keyring.checking[token] = waiter }
        if let release { keyring.opening[token] = release }
        actions.append(.keyring(KeyringJob(token: token, work: work, shadowPath: shadowPath, keys: keys)))
    }

    /// The keyring thread's answers (or the shell's, in place).
    package func keyringAnswered(_ answers: [(KeyringJob, KeyringAnswer)]) {
        for (job, answer) in answers {
            switch answer {
            case .written(let failure): keyringWritten(job.token, failure: failure)
            case .opened(let opened):
                guard let waiter = keyring.opening.removeValue(forKey: job.token) else { continue }
                copyOpened(waiter, opened)
            case .checked(let verdicts):
                guard let waiter = keyring.checking.removeValue(forKey: job.token) else { continue }
                copiesChecked(waiter, verdicts)
            }
        }
    }

    /// A check's verdicts: a status is answered; changed or gone copies
    /// that are still the ones checked are voided (S-76).
    private func copiesChecked(_ waiter: CheckWaiter, _ verdicts: [UserID: Currency]) {
        switch waiter {
        case .status(let connection, let tag, let fields):
            guard connections.contains(connection) else { return }
            let current = verdicts.values.first.map { $0 == .current ? "true" : $0 == .unknown ? "unknown" : "false" } ?? "false"
            replyOK(connection, tag, fields + [("current", current)])
        case .revalidation:
            var facts: [LoginSecretFact] = []
            for (uid, verdict) in verdicts.sorted(by: { $0.key < $1.key }) where verdict == .changed || verdict == .gone {
                guard let copy = keyring.store.copy(of: uid), keyring.store.void(uid, binding: copy.binding) else { continue }
                facts.append(.voided(uid: uid, reason: verdict == .gone ? .accountGone : .passwordChanged))
            }
            if !facts.isEmpty { awaitKeyringWrite(KeyringWriteWaiter(reply: nil, facts: facts)) }
        }
    }

    // MARK: - The store's writes

    /// A change is in the store's memory: recorded (and answered) once a
    /// write that holds it is durable.
    func awaitKeyringWrite(_ waiter: KeyringWriteWaiter) {
        keyring.waiting.append(waiter)
        if keyring.inFlight == nil { startKeyringWrite() }
    }

    private func startKeyringWrite() {
        guard let keys = keyring.keys else { return }
        let token = keyring.nextToken
        keyring.nextToken += 1
        keyring.inFlight = (token, keyring.store.current, keyring.waiting)
        keyring.waiting = []
        actions.append(.keyring(KeyringJob(token: token, work: .write(path: keyring.store.path, bytes: keyring.store.encoded(keys)),
                                           shadowPath: shadowPath, keys: keys)))
    }

    private func keyringWritten(_ token: UInt64, failure: SystemError?) {
        guard let inFlight = keyring.inFlight, inFlight.token == token else { return }
        keyring.inFlight = nil
        if let failure {
            journal(.error, "Failed to write the login-secret store \(keyring.store.path): \(failure)")
            keyring.store.rollBack()
            let dropped = inFlight.waiters + keyring.waiting
            keyring.waiting = []
            for waiter in dropped {
                guard let (connection, tag) = waiter.reply, connections.contains(connection) else { continue }
                reply(connection, tag, ProtocolError(.internal, "The login-secret store could not be written."))
            }
            return
        }
        keyring.store.written(inFlight.snapshot)
        for waiter in inFlight.waiters {
            // Recorded whether or not the one who asked is still there.
            let answer = waiter.reply.flatMap { connections.contains($0.connection) ? $0 : nil }
            var recorded = true
            for fact in waiter.facts where recorded {
                let outcome = run(.recordLoginSecret(fact), connection: answer?.connection, tag: answer?.tag, now: now)
                if let answer { recorded = events(outcome, answer.connection, answer.tag) != nil }
            }
            if recorded, let answer { replyOK(answer.connection, answer.tag) }
        }
        if !keyring.waiting.isEmpty { startKeyringWrite() }
    }
}
