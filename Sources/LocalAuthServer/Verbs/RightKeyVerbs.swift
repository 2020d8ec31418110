// right-public-key, right-sign, right-decrypt, right-exchange, right-list
// (PROTOCOL.md v1.4, S-78..S-81): the rights' keys.
//
// - A private-key operation is checked when it arrives (the right, its key,
//   the grant on the caller's context, S-79; the algorithm and the sizes,
//   S-80), charged one event of the user's budget (S-48), and queued:
//   users take turns, one operation per user runs at a time, at most
//   `keyJobsPerUser` wait (S-81, `busy` beyond). When its turn comes it is
//   judged again (a right removed or saved again, a grant ended, an
//   enrollment changed meanwhile refuse it), `right-key-used` is recorded,
//   and a KeyWorkers thread runs it (RightKeyJob.swift). Its answer, the
//   signature, plaintext or shared secret, goes into the reply line from
//   memory that is then wiped (S-50).
// - The public key is the owner's at any time; `right-list` shows the
//   caller's rights, one RIGHT line each.
import LocalAuthCore
import LocalAuthKeys
import LocalAuthProtocol
import LocalAuthSystem

/// A key operation admitted and waiting for its turn, or running.
struct PendingKeyJob {
    var connection: Connection.ID
    var tag: String
    var uid: UserID
    var ctx: ContextID
    var identifier: String
    /// The save it was admitted for: another save of the identifier (a new key) refuses it.
    var generation: UInt64
    var algorithm: KeyAlgorithm
    var input: [UInt8]
    var sharedInfo: [UInt8] = []
    var requestedSize = 0
}

extension ServerCore {
    /// PROTOCOL.md v1.4: `data=` and `requested-size=` at most this many bytes.
    static let maximumKeyDataBytes = 4096

    /// S-78: a fresh P-256 key for a right being saved, its scalar sealed
    /// under the daemon's key at once and wiped (EC_KEY_free clears it);
    /// nil where the daemon has no key (a core driven without one).
    func makeRightKey(_ uid: UserID, _ identifier: String, _ account: RightAccount) -> StoredKey? {
        guard rights.secretKey.count == AESGCM.keySize else { return nil }
        let key = P256PrivateKey.generate()
        let publicKey = key.publicKey
        let sealed = key.withScalar {
            AESGCM.seal($0, key: rights.secretKey, additionalData: RightStore.keyAdditionalData(uid, identifier, account, publicKey: publicKey))
        }
        return StoredKey(publicKey: publicKey, sealedScalar: sealed)
    }

    func rightPublicKey(_ request: Request, _ connection: Connection.ID) {
        guard let identifier = rightIdentifier(request, connection) else { return }
        guard let right = callersRight(connection, identifier) else { return unknownRight(connection, request.tag) }
        guard let key = right.key else { return reply(connection, request.tag, Self.keylessRight) }
        replyOK(connection, request.tag) { line in line.append(key: "public-key", base64Of: key.publicKey) }
    }

    func rightList(_ request: Request, _ connection: Connection.ID) {
        // S-59: the caller's account's rights only.
        let owned = (rights.store.rights[peer(of: connection).uid] ?? [:]).filter { isCallers($0.value, connection) }
        for (identifier, right) in owned.sorted(by: { $0.key < $1.key }) {
            sendLine(to: connection) { line in
                line.beginResponse(tag: request.tag, status: .right)
                line.append(key: "identifier", value: identifier)
                line.append(key: "requirement", value: right.requirement.wireName)
                line.append(key: "has-secret", value: right.sealed == nil ? "false" : "true")
                line.append(key: "has-key", value: right.key == nil ? "false" : "true")
                line.endLine()
            }
        }
        replyOK(connection, request.tag, [("count", String(owned.count))])
    }

    func rightSign(_ request: Request, _ connection: Connection.ID) { admitKeyOperation(.sign, request, connection) }
    func rightDecrypt(_ request: Request, _ connection: Connection.ID) { admitKeyOperation(.decrypt, request, connection) }
    func rightExchange(_ request: Request, _ connection: Connection.ID) { admitKeyOperation(.exchange, request, connection) }

    private func admitKeyOperation(_ operation: KeyOperation, _ request: Request, _ connection: Connection.ID) {
        guard let ctx = ownedContext(request, connection), let identifier = rightIdentifier(request, connection),
              let uid = rightContextUser(ctx, request, connection) else { return }
        guard let right = callersRight(connection, identifier) else { return unknownRight(connection, request.tag) }
        guard let name = request.arguments.value(for: "algorithm") else {
            return reply(connection, request.tag, ProtocolError(.missingArgument, "algorithm= is required (a SecKeyAlgorithm raw value)."))
        }
        let inputKey = operation == .exchange ? "public-key" : "data"
        guard let input = keyBytes(request, inputKey, connection, required: true) else { return }
        guard let algorithm = KeyAlgorithm.named(name, for: operation) else {
            return replySecurityError(connection, request.tag, "\(name): algorithm not supported by the key")
        }
        var job = PendingKeyJob(connection: connection, tag: request.tag, uid: uid, ctx: ctx, identifier: identifier,
                                generation: right.generation, algorithm: algorithm, input: input)
        if operation == .exchange {
            guard let sharedInfo = keyBytes(request, "shared-info", connection, required: false) else { return }
            job.sharedInfo = sharedInfo
            if case .keyExchange(.some) = algorithm.form {
                guard let text = request.arguments.value(for: "requested-size"), let size = Int(text),
                      (1...Self.maximumKeyDataBytes).contains(size) else {
                    return replySecurityError(connection, request.tag,
                        "\(name) needs requested-size= (SecKeyKeyExchangeParameter.requestedSize), 1 to \(Self.maximumKeyDataBytes) bytes")
                }
                job.requestedSize = size
            }
        }
        if let refusal = keyUseRefusal(uid, ctx, identifier, right) { return reply(connection, request.tag, refusal) }
        let busy = ProtocolError(.busy, "At most \(SavedRights.keyJobsPerUser) key operations of a user wait at once; wait for their answers.")
        // S-53: a user's key operations wait in their principal's queue.
        let (principal, unlimited) = passcodeQueueKey(connection, subject: uid)
        guard rights.keyQueueHasRoom(for: principal, unlimited: unlimited) else { return reply(connection, request.tag, busy) }
        // S-48: charged now, so that a flood is refused before it queues.
        if let refusal = loggedRequestRefusal(connection, events: 1) { return reply(connection, request.tag, refusal) }
        guard rights.enqueueKeyJob(job, principal: principal, unlimited: unlimited) else {
            return reply(connection, request.tag, busy)
        }
        startKeyJobs()
    }

    /// Why the right's key may not be used on `ctx` now (S-79), or nil.
    func keyUseRefusal(_ uid: UserID, _ ctx: ContextID, _ identifier: String, _ right: StoredRight) -> ProtocolError? {
        guard right.key != nil else { return Self.keylessRight }
        guard authenticator.state.contexts[ctx]?.isOpen == true, rights.isGranted(identifier, on: ctx, generation: right.generation) else {
            return ProtocolError(.notAuthorized, "The right is not authorized on this context; authorize it first (right-authorize).")
        }
        if right.requirement == .biometryCurrentSet {
            let user = authenticator.state.user(uid)
            guard !user.templates.isEmpty, user.domainState.description == right.domainState else {
                return ProtocolError(.notAuthorized,
                    "The enrolled biometry changed since the right was saved; a biometry-current-set right's key is no longer usable.")
            }
        }
        return nil
    }

    static let keylessRight = ProtocolError(.badState,
        "The right has no key: it was saved before localauthd made keys for rights; save it again.")

    /// Starts waiting key operations while workers are free, each judged again first.
    func startKeyJobs() {
        while let job = rights.nextKeyJob() {
            let uid = job.uid
            guard connections.contains(job.connection) else {
                rights.keyJobDropped(job)
                continue
            }
            guard let right = rights.store.right(uid, job.identifier), right.generation == job.generation, let key = right.key,
                  isCallers(right, job.connection) else {
                rights.keyJobDropped(job)
                reply(job.connection, job.tag, ProtocolError(.notAuthorized,
                    "The right was removed or saved again (a new key) while the operation waited."))
                continue
            }
            if let refusal = keyUseRefusal(uid, job.ctx, job.identifier, right) {
                rights.keyJobDropped(job)
                reply(job.connection, job.tag, refusal)
                continue
            }
            let outcome = run(.recordRight(.keyUsed(uid: uid, ctx: job.ctx, identifier: job.identifier, algorithm: job.algorithm)),
                              connection: job.connection, tag: job.tag, now: now)
            guard events(outcome, job.connection, job.tag) != nil else {
                rights.keyJobDropped(job)
                continue
            }
            let token = rights.keyJobStarted(job)
            actions.append(.runKeyJob(token: token, KeyJob(
                algorithm: job.algorithm, key: key,
                additionalData: RightStore.keyAdditionalData(uid, job.identifier, right.account, publicKey: key.publicKey),
                daemonKey: rights.secretKey, input: job.input, sharedInfo: job.sharedInfo, requestedSize: job.requestedSize)))
        }
    }

    /// The workers' answers: each written into its reply and wiped (S-50).
    func keyJobsFinished(_ completions: [KeyCompletion]) {
        for completion in completions {
            guard let job = rights.keyJobFinished(completion.token) else { continue }
            guard connections.contains(job.connection) else { continue }
            if !logHealth.isRecording {
                reply(job.connection, job.tag, ProtocolError(.unavailable,
                    "The event log cannot record events; localauthd refuses to act until it can."))
                continue
            }
            switch completion.outcome {
            case .data(let result):
                let key = job.algorithm.operation == .sign ? "signature" : "data"
                replyOK(job.connection, job.tag) { line in result.withUnsafeBytes { line.append(key: key, base64Of: $0) } }
            case .refused(let why):
                replySecurityError(job.connection, job.tag, why)
            case .unopenable:
                journal(.error, "A key in the right store \(rights.store.path) does not open with the daemon's key.")
                reply(job.connection, job.tag, ProtocolError(.internal, "The right's key cannot be opened with this daemon's key."))
            }
        }
        startKeyJobs()
    }

    /// `TAG ERR domain=sec code=-50 name=errSecParam message=...` (S-80).
    func replySecurityError(_ connection: Connection.ID, _ tag: String, _ message: String) {
        sendLine(to: connection) { line in
            line.beginResponse(tag: tag, status: .err)
            line.append(key: "domain", value: "sec")
            line.append(key: "code", value: "-50")
            line.append(key: "name", value: "errSecParam")
            line.append(key: "message", value: message)
            line.endLine()
        }
    }

    /// A base64 argument of at most `maximumKeyDataBytes` bytes; nil after replying.
    private func keyBytes(_ request: Request, _ key: String, _ connection: Connection.ID, required: Bool) -> [UInt8]? {
        guard let text = request.arguments.value(for: key) else {
            if !required { return [] }
            reply(connection, request.tag, ProtocolError(.missingArgument, "\(key)= is required (standard base64)."))
            return nil
        }
        switch Base64.decode(text, maximumBytes: Self.maximumKeyDataBytes) {
        case .success(let bytes): return bytes
        case .failure(.tooLong):
            reply(connection, request.tag, ProtocolError(.limitExceeded, "\(key)= holds more than \(Self.maximumKeyDataBytes) bytes."))
        case .failure(.malformed):
            reply(connection, request.tag, ProtocolError(.badArgument, "\(key)= must be standard base64."))
        }
        return nil
    }
}
