// One table maps each verb to its handler and the keys it accepts. Handlers
// check the peer, call the core through `run`, and map outcomes to wire
// replies. Unknown keys are refused before any handler runs (PROTOCOL.md).
import LocalAuthCore
import LocalAuthProtocol

struct VerbSpec: Sendable {
    /// The wire name and the keys it takes come from the protocol's own table.
    var verb: Verb
    var admin: Bool = false
    /// Called directly (not `(ServerCore) -> handler`), so no partially applied
    /// method closure is allocated per request.
    var handler: @Sendable (ServerCore, Request, Connection.ID) -> Void

    var keys: [String] { verb.allowedKeys }
}

extension ServerCore {
    /// Searched linearly: verbs are small strings, so each comparison is a
    /// couple of word compares, cheaper than hashing the verb for a
    /// dictionary. The hot verbs come first.
    static let verbs: [(verb: String, spec: VerbSpec)] = [
        VerbSpec(verb: .canEvaluate, handler: { $0.canEvaluate($1, $2) }),
        VerbSpec(verb: .evaluate, handler: { $0.evaluate($1, $2) }),
        VerbSpec(verb: .hello, handler: { $0.hello($1, $2) }),
        VerbSpec(verb: .ping, handler: { $0.ping($1, $2) }),
        VerbSpec(verb: .quit, handler: { $0.quit($1, $2) }),
        VerbSpec(verb: .new, handler: { $0.newContext($1, $2) }),
        VerbSpec(verb: .set, handler: { $0.setProperties($1, $2) }),
        VerbSpec(verb: .get, handler: { $0.getContext($1, $2) }),
        VerbSpec(verb: .fallback, handler: { $0.fallback($1, $2) }),
        VerbSpec(verb: .passcode, handler: { $0.passcode($1, $2) }),
        VerbSpec(verb: .cancel, handler: { $0.cancel($1, $2) }),
        VerbSpec(verb: .invalidate, handler: { $0.invalidate($1, $2) }),
        VerbSpec(verb: .status, handler: { $0.status($1, $2) }),
        VerbSpec(verb: .setPasscode, handler: { $0.setPasscode($1, $2) }),
        VerbSpec(verb: .clearPasscode, admin: true, handler: { $0.clearPasscode($1, $2) }),
        VerbSpec(verb: .enroll, admin: true, handler: { $0.enroll($1, $2) }),
        VerbSpec(verb: .unenroll, admin: true, handler: { $0.unenroll($1, $2) }),
        VerbSpec(verb: .sensor, admin: true, handler: { $0.sensor($1, $2) }),
        VerbSpec(verb: .unlocked, admin: true, handler: { $0.unlocked($1, $2) }),
        VerbSpec(verb: .reset, admin: true, handler: { $0.reset($1, $2) }),
        VerbSpec(verb: .stats, admin: true, handler: { $0.stats($1, $2) }),
        VerbSpec(verb: .watch, handler: { $0.watch($1, $2) }),
        VerbSpec(verb: .cancelWatch, handler: { $0.cancelWatch($1, $2) }),
        VerbSpec(verb: .rightSave, handler: { if $0.rightsAccountKnown($1, $2) { $0.rightSave($1, $2) } }),
        VerbSpec(verb: .rightState, handler: { if $0.rightsAccountKnown($1, $2) { $0.rightState($1, $2) } }),
        VerbSpec(verb: .rightRemove, handler: { if $0.rightsAccountKnown($1, $2) { $0.rightRemove($1, $2) } }),
        VerbSpec(verb: .rightAuthorize, handler: { if $0.rightsAccountKnown($1, $2) { $0.rightAuthorize($1, $2) } }),
        VerbSpec(verb: .rightDeauthorize, handler: { $0.rightDeauthorize($1, $2) }),
        VerbSpec(verb: .rightSecret, handler: { if $0.rightsAccountKnown($1, $2) { $0.rightSecret($1, $2) } }),
        VerbSpec(verb: .rightPublicKey, handler: { if $0.rightsAccountKnown($1, $2) { $0.rightPublicKey($1, $2) } }),
        VerbSpec(verb: .rightSign, handler: { if $0.rightsAccountKnown($1, $2) { $0.rightSign($1, $2) } }),
        VerbSpec(verb: .rightDecrypt, handler: { if $0.rightsAccountKnown($1, $2) { $0.rightDecrypt($1, $2) } }),
        VerbSpec(verb: .rightExchange, handler: { if $0.rightsAccountKnown($1, $2) { $0.rightExchange($1, $2) } }),
        VerbSpec(verb: .rightList, handler: { if $0.rightsAccountKnown($1, $2) { $0.rightList($1, $2) } }),
        VerbSpec(verb: .registerAgent, handler: { $0.registerAgent($1, $2) }),
        VerbSpec(verb: .loginSecret, handler: { $0.loginSecret($1, $2) }),
        VerbSpec(verb: .keyringEnable, handler: { $0.keyringEnable($1, $2) }),
        VerbSpec(verb: .keyringDisable, handler: { $0.keyringDisable($1, $2) }),
        VerbSpec(verb: .keyringStatus, handler: { $0.keyringStatus($1, $2) }),
    ].map { ($0.verb.rawValue, $0) }

    /// What still works while the log cannot record (fail closed).
    static let verbsWithoutLog: Set<String> = ["hello", "ping", "quit", "stats"]

    func dispatch(_ request: Request, on connection: Connection.ID) {
        guard let spec = ServerCore.verbs.first(where: { $0.verb == request.verb })?.spec else {
            return reply(connection, request.tag, ProtocolError(.unknownVerb, "Unknown verb \"\(request.verb)\"."))
        }
        if let error = request.arguments.check(allowedKeys: spec.keys, verb: request.verb) {
            return reply(connection, request.tag, error)
        }
        if !logHealth.isRecording, !ServerCore.verbsWithoutLog.contains(request.verb) {
            // The state in memory may hold facts the log never took: act on nothing.
            return reply(connection, request.tag, ProtocolError(.unavailable,
                "The event log cannot record events; localauthd refuses to act until it can."))
        }
        var parked = false
        if spec.admin && !isAdmin(connection, for: request, parked: &parked) {
            if parked { return }  // runs again once AdminGroup answered (AdminRights.swift)
            counters.permissionDenied += 1
            return reply(connection, request.tag, ProtocolError(.permissionDenied, "\(request.verb) needs an administrator."))
        }
        spec.handler(self, request, connection)
    }

    // MARK: - Reply helpers

    func reply(_ connection: Connection.ID, _ tag: String, _ error: ProtocolError) {
        writer.bytes.removeAll(keepingCapacity: true)
        writer.appendProtocolError(tag: tag, error)
        send(writer.bytes, to: connection)
    }

    func replyOK(_ connection: Connection.ID, _ tag: String, _ pairs: [(String, String)] = []) {
        replyOK(connection, tag) { line in
            for (key, value) in pairs { line.append(key: key, value: value) }
        }
    }

    /// `TAG OK` with the arguments `write` appends: hot verbs write their
    /// values straight in, with no pairs array, into the connection's
    /// output when nothing holds it back (`sendLine`).
    func replyOK(_ connection: Connection.ID, _ tag: String, _ write: (inout LineWriter) -> Void) {
        var tag = tag
        tag.withUTF8 { replyOK(connection, tag: $0, write) }
    }

    /// The same, with the tag's bytes as the request had them.
    func replyOK(_ connection: Connection.ID, tag: UnsafeBufferPointer<UInt8>, _ write: (inout LineWriter) -> Void) {
        sendLine(to: connection) { line in
            line.beginResponse(tag: tag, status: .ok)
            write(&line)
            line.endLine()
        }
    }

    func reply(_ connection: Connection.ID, _ tag: String, _ failure: Failure, biometry: BiometryType? = nil) {
        writer.bytes.removeAll(keepingCapacity: true)
        appendFailure(tag: tag, failure, biometry: biometry)
        send(writer.bytes, to: connection)
    }

    func reply(_ connection: Connection.ID, _ tag: String, _ rejection: Rejection) {
        switch rejection.kind {
        case .protocolError(let name):
            reply(connection, tag, ProtocolError(ProtocolErrorName(rawValue: name.rawValue) ?? .internal, rejection.message))
        case .localAuthentication(let failure):
            reply(connection, tag, failure)
        }
    }

    /// Replies to an outcome that is the request's answer (a rejection, the
    /// log's failure, a decision's own LAError); returns the events when the
    /// verb's reply is still to come.
    func events(_ outcome: Authenticator.Outcome, _ connection: Connection.ID, _ tag: String) -> [Event]? {
        switch outcome {
        case .events(let events):
            return events
        case .answered(_, let failure):
            reply(connection, tag, failure)
        case .rejected(let rejection):
            reply(connection, tag, rejection)
        case .unavailable(let why):
            // The cause (paths, errno) goes to the journal, not to clients.
            _ = why
            reply(connection, tag, ProtocolError(.unavailable, "The event log cannot record events; refusing to act."))
        }
        return nil
    }

    // MARK: - Arguments

    /// The context named by `ctx=`, if this connection owns it (S-12).
    func ownedContext(_ request: Request, _ connection: Connection.ID) -> ContextID? {
        guard let text = request.arguments.value(for: "ctx") else {
            reply(connection, request.tag, ProtocolError(.missingArgument, "ctx= is required."))
            return nil
        }
        guard let ctx = ContextID(hex: text), connections.withValue(connection, { $0.contexts.contains(ctx) }) == true else {
            reply(connection, request.tag, ProtocolError(.unknownContext, "No such context."))
            return nil
        }
        return ctx
    }

    func policy(_ request: Request, _ connection: Connection.ID) -> Policy? {
        guard let text = request.arguments.value(for: "policy") else {
            reply(connection, request.tag, ProtocolError(.missingArgument, "policy= is required."))
            return nil
        }
        guard let policy = Policy(wireName: text) else {
            reply(connection, request.tag, ProtocolError(.badArgument, "Unknown policy \"\(text)\"."))
            return nil
        }
        return policy
    }

    /// `uid=N`, defaulting to the caller; another uid needs an administrator.
    func targetUID(_ request: Request, _ connection: Connection.ID, required: Bool = false) -> UserID? {
        guard let text = request.arguments.value(for: "uid") else {
            if required {
                reply(connection, request.tag, ProtocolError(.missingArgument, "uid= is required."))
                return nil
            }
            return peer(of: connection).uid
        }
        guard let uid = parseUserID(text) else {
            reply(connection, request.tag, ProtocolError(.badArgument,
                "uid= must be a user id in canonical decimal (no sign, no leading zero)."))
            return nil
        }
        var parked = false
        if uid != peer(of: connection).uid && !isAdmin(connection, for: request, parked: &parked) {
            if parked { return nil }  // runs again once AdminGroup answered (AdminRights.swift)
            counters.permissionDenied += 1
            reply(connection, request.tag, ProtocolError(.permissionDenied, "Another user's uid needs an administrator."))
            return nil
        }
        return uid
    }
}
