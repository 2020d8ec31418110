// The request path of the simulated daemon: bytes from a client through the
// real LineSplitter and RequestScanner, the verbs the simulator exercises
// mapped to core commands, and their answers written with the real
// LineWriter. A restatement of Dispatch.swift and the Verbs/ files in small
// (the next step, docs/ARCHITECTURE.md, is to run the server's own).
import LocalAuthCore
import LocalAuthProtocol
@testable import LocalAuthServer

extension SimulatedDaemon {
    /// Bytes read on a connection: every complete line is handled. False
    /// when the daemon no longer reads it (after `quit`, a protocol close or
    /// a failure): what they asked is never answered.
    @discardableResult
    func receive(_ bytes: [UInt8], on id: UInt64) -> Bool {
        guard let connection = connections[id], connection.state == .open else { return false }
        connection.splitter.append(contentsOf: bytes)
        var scanner = RequestScanner()
        while connection.state == .open, let event = connection.splitter.next() {
            switch event {
            case .lineTooLong:
                send(errorLine("*", ProtocolError(.lineTooLong, "Lines are limited to 8192 bytes.")), to: connection)
                beginClose(connection, bye: "protocol")
            case .line(let line):
                // The scanner's spans point into the line: the request is
                // made while the line's bytes are still there.
                let scanned: Result<Request, RequestFailure> = Array(line).withUnsafeBufferPointer { bytes in
                    if let failure = scanner.scan(bytes) { return .failure(failure) }
                    return .success(scanner.request)
                }
                switch scanned {
                case .failure(let failure):
                    var writer = LineWriter()
                    writer.append(failure)
                    send(writer.bytes, to: connection)
                case .success(let request):
                    dispatch(request, connection)
                }
            }
        }
        return true
    }

    /// Stops reading; the connection's contexts end first, so their
    /// evaluations get their final answers before the BYE (S-14, S-33).
    func beginClose(_ connection: SimConnection, bye: String) {
        guard connection.state == .open else { return }
        connection.state = .closing
        for ctx in connection.contexts where failed == nil {
            run(.invalidate(ctx: ctx, reason: .disconnect))
        }
        connection.contexts.removeAll()
        var line = LineWriter()
        line.appendBye(reason: bye)
        send(line.bytes, to: connection)
    }

    static let verbsWithoutLog: Set<String> = ["hello", "ping", "quit", "stats"]
    static let adminVerbs: Set<String> = ["enroll", "reset", "sensor", "unlocked"]

    private func dispatch(_ request: Request, _ connection: SimConnection) {
        let tag = request.tag
        guard let verb = Verb(rawValue: request.verb) else {
            return send(errorLine(tag, ProtocolError(.unknownVerb, "Unknown verb.")), to: connection)
        }
        if let error = request.arguments.check(allowedKeys: verb.allowedKeys, verb: request.verb) {
            return send(errorLine(tag, error), to: connection)
        }
        if failed != nil, !Self.verbsWithoutLog.contains(request.verb) {
            oracle.refusedWhileFailed()
            return send(errorLine(tag, ProtocolError(.unavailable, "The event log cannot record events.")), to: connection)
        }
        if Self.adminVerbs.contains(request.verb), !connection.isAdmin {
            return send(errorLine(tag, ProtocolError(.permissionDenied, "\(request.verb) needs an administrator.")), to: connection)
        }
        let context = request.arguments.value(for: "ctx").flatMap { ContextID(hex: $0) }
        let mine = context.flatMap { connection.contexts.contains($0) ? $0 : nil }
        switch verb {
        case .ping, .hello:
            ok(tag, connection)
        case .quit:
            ok(tag, connection)
            beginClose(connection, bye: "quit")
        case .new:
            let ctx = ContextID(high: random(), low: random())
            if answer(run(.createContext(ctx: ctx, uid: connection.uid, pid: 1)), tag, connection) {
                connection.contexts.append(ctx)
                ok(tag, connection, ("ctx", ctx.hex))
            }
        case .canEvaluate:
            guard let ctx = owned(mine, tag, connection), let policy = policy(request, tag, connection) else { return }
            switch authenticator.canEvaluate(ctx, policy: policy, now: now) {
            case .success(let check):
                oracle.checked()
                if let code = check.result {
                    laError(tag, Failure(code, reason: check.reason), connection)
                } else {
                    ok(tag, connection, ("biometry", check.biometry.wireName))
                }
            case .failure(.rejected(let rejection)): reject(rejection, tag, connection)
            case .failure(.unavailable): unavailable(tag, connection)
            }
        case .evaluate:
            guard let ctx = owned(mine, tag, connection), let policy = policy(request, tag, connection) else { return }
            guard connection.evaluationTags[ctx] == nil else {
                return send(errorLine(tag, ProtocolError(.busy, "An evaluation is running.")), to: connection)
            }
            connection.evaluationTags[ctx] = tag
            let outcome = run(.evaluate(ctx: ctx, policy: policy, reason: request.arguments.value(for: "reason") ?? ""))
            if case .events = outcome { return }
            connection.evaluationTags[ctx] = nil
            _ = answer(outcome, tag, connection)
        case .fallback, .cancel:
            // As EvaluationVerbs: the OK precedes the PROMPT or final answer it causes.
            guard let ctx = owned(mine, tag, connection) else { return }
            let command: Command = verb == .fallback ? .fallback(ctx: ctx) : .cancel(ctx: ctx)
            if case .failure(let rejection) = decide(command, authenticator.state, now: now) {
                return reject(rejection, tag, connection)
            }
            ok(tag, connection)
            run(command)
        case .invalidate:
            // As ContextVerbs: the evaluation's final answer, then the OK.
            guard let ctx = owned(mine, tag, connection) else { return }
            if answer(run(.invalidate(ctx: ctx, reason: .app)), tag, connection) { ok(tag, connection) }
        case .passcode:
            guard let ctx = owned(mine, tag, connection) else { return }
            let outcome = run(.submitPasscode(ctx: ctx))
            guard answer(outcome, tag, connection) else { return }
            ok(tag, connection)
            if case .events(let events) = outcome, case .passcodeSubmitted(let uid, _, let eval)? = events.last?.body {
                jobs.append(PasscodeJob(uid: uid, ctx: ctx, eval: eval,
                                        correct: request.arguments.value(for: "secret") == Simulation.passcode(of: uid)))
            }
        case .enroll:
            guard let uid = request.arguments.value(for: "uid").flatMap(parseUserID) else {
                return send(errorLine(tag, ProtocolError(.missingArgument, "uid= is required.")), to: connection)
            }
            let token = String(random() % 1_000_000)
            if answer(run(.enroll(uid: uid, template: "finger-\(token)", by: connection.uid, domainState: token)), tag, connection),
               answer(run(.changePasscode(uid: uid, set: true, by: connection.uid)), tag, connection) {
                ok(tag, connection)
            }
        case .reset:
            guard let uid = request.arguments.value(for: "uid").flatMap(parseUserID) else {
                return send(errorLine(tag, ProtocolError(.missingArgument, "uid= is required.")), to: connection)
            }
            if answer(run(.reset(uid: uid, by: connection.uid)), tag, connection) { ok(tag, connection) }
        case .set:
            guard let ctx = owned(mine, tag, connection) else { return }
            for argument in request.arguments where argument.key != "ctx" {
                guard let property = ContextProperty(name: argument.key, value: argument.value) else {
                    return send(errorLine(tag, ProtocolError(.badArgument, "Bad value for \(argument.key).")), to: connection)
                }
                guard answer(run(.setProperty(ctx: ctx, property: property)), tag, connection) else { return }
            }
            ok(tag, connection)
        case .unlocked:
            guard let uid = request.arguments.value(for: "uid").flatMap(parseUserID) else {
                return send(errorLine(tag, ProtocolError(.missingArgument, "uid= is required.")), to: connection)
            }
            if answer(run(.reportUnlock(uid: uid, by: connection.uid)), tag, connection) { ok(tag, connection) }
        case .status:
            let user = authenticator.state.user(connection.uid)
            ok(tag, connection, ("biometric-failures", String(user.biometricFailures)),
               ("passcode-failures", String(user.passcodeFailures)), ("locked-out", user.biometryLockedOut ? "true" : "false"))
        default:
            send(errorLine(tag, ProtocolError(.unknownVerb, "Not simulated.")), to: connection)
        }
    }

    private func owned(_ ctx: ContextID?, _ tag: String, _ connection: SimConnection) -> ContextID? {
        if ctx == nil { send(errorLine(tag, ProtocolError(.unknownContext, "No such context.")), to: connection) }
        return ctx
    }

    private func policy(_ request: Request, _ tag: String, _ connection: SimConnection) -> Policy? {
        guard let policy = request.arguments.value(for: "policy").flatMap({ Policy(wireName: $0) }) else {
            send(errorLine(tag, ProtocolError(.badArgument, "Unknown policy.")), to: connection)
            return nil
        }
        return policy
    }

    /// Answers a refused or failed outcome; true when there were events.
    private func answer(_ outcome: Authenticator.Outcome, _ tag: String, _ connection: SimConnection) -> Bool {
        switch outcome {
        case .events: return true
        case .answered(_, let failure): laError(tag, failure, connection)
        case .rejected(let rejection): reject(rejection, tag, connection)
        case .unavailable: unavailable(tag, connection)
        }
        return false
    }

    private func reject(_ rejection: Rejection, _ tag: String, _ connection: SimConnection) {
        switch rejection.kind {
        case .protocolError(let name):
            send(errorLine(tag, ProtocolError(ProtocolErrorName(rawValue: name.rawValue) ?? .internal, rejection.message)), to: connection)
        case .localAuthentication(let failure):
            laError(tag, failure, connection)
        }
    }

    private func unavailable(_ tag: String, _ connection: SimConnection) {
        oracle.refusedWhileFailed()
        send(errorLine(tag, ProtocolError(.unavailable, "The event log cannot record events; refusing to act.")), to: connection)
    }

    private func laError(_ tag: String, _ failure: Failure, _ connection: SimConnection) {
        var line = LineWriter()
        line.beginLAError(tag: tag, code: failure.code.rawValue, name: failure.code.wireName, message: failure.message)
        line.endLine()
        send(line.bytes, to: connection)
    }

    private func ok(_ tag: String, _ connection: SimConnection, _ pairs: (String, String)...) {
        var line = LineWriter()
        line.beginResponse(tag: tag, status: .ok)
        for (key, value) in pairs { line.append(key: key, value: value) }
        line.endLine()
        send(line.bytes, to: connection)
    }
}
