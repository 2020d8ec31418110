// What the core writes for a bus connection, back to the bus: the shell
// hands each `.send` of a bus connection here instead of to a socket, and
// every reply line becomes what its tag's call waits for (`Pending`): a
// method return or error, a request's Prompt and Completed signals, the
// environment's PropertiesChanged. Only output the ReplyGate released
// arrives here, so no signal reveals a failure before its fsync (S-40).
import LocalAuthProtocol
import LocalAuthSystem

extension BusFront {
    /// Whether `id` is a bus connection (its output comes here, not to a socket).
    func holds(_ id: Connection.ID) -> Bool { byConnection[id] != nil }

    /// A bus connection's `.send`: its output is taken whole (the shell's
    /// `write`, inside the core's output call: nothing of the core is
    /// touched here); `deliver` turns it into messages.
    func take(_ bytes: UnsafeRawBufferPointer, for id: Connection.ID) -> Int? {
        guard let caller = byConnection[id] else { return nil }
        caller.inbox.append(contentsOf: bytes)
        if !delivering.contains(where: { $0 === caller }) { delivering.append(caller) }
        return bytes.count
    }

    /// Every whole line taken becomes what its tag's call waits for.
    func deliver() {
        let callers = delivering
        delivering.removeAll(keepingCapacity: true)
        for caller in callers {
            var start = 0
            while let end = caller.inbox[start...].firstIndex(of: UInt8(ascii: "\n")) {
                if caller.phase != .gone {
                    caller.inbox.withUnsafeBufferPointer { answer(UnsafeBufferPointer(rebasing: $0[start..<end]), from: caller) }
                }
                start = end + 1
            }
            // A secret's reply passed through: the inbox is wiped, not just emptied.
            caller.inbox.withUnsafeMutableBytes { SecretMemory.wipe(UnsafeMutableRawBufferPointer(rebasing: $0[0..<start])) }
            caller.inbox.removeFirst(start)
        }
    }

    /// One reply line of the caller's connection.
    private func answer(_ line: UnsafeBufferPointer<UInt8>, from caller: BusCaller) {
        if let tag = BusFront.tag(of: line), case .secret(let call)? = caller.pending[tag] {
            caller.pending[tag] = nil
            return secret(line, call, caller)
        }
        guard let response = try? Response.parse(line) else { return }
        if response.tag == "*" {
            if response.status == .err { caller.refusal = BusReplies.error(response) }
            return
        }
        guard let pending = caller.pending[response.tag] else { return }
        if response.isFinal, !pending.isLasting { caller.pending[response.tag] = nil }
        switch pending {
        case .plain(let call):
            response.status == .ok ? reply(caller, call) : fail(caller, call, response)
        case .created(let call):
            guard response.status == .ok, let ctx = response.arguments.value(for: "ctx") else { return fail(caller, call, response) }
            caller.contexts.insert(ctx)
            reply(caller, call, [.objectPath(BusNames.root + "/context/" + ctx)])
        case .check(let call), .oneShotCheck(let call):
            guard let values = BusReplies.check(response) else { return fail(caller, call, response) }
            reply(caller, call, values)
        case .oneShotNew(let call, let policy):
            guard response.status == .ok, let ctx = response.arguments.value(for: "ctx") else { return fail(caller, call, response) }
            oneShotCheck(call, caller, ctx: ctx, policy: policy)
        case .ignored:
            break
        case .rightState(let call):
            guard response.status == .ok else { return fail(caller, call, response) }
            reply(caller, call, [.string(response.arguments.value(for: "requirement") ?? ""),
                                 .boolean(response.arguments.value(for: "has-secret") == "true")])
        case .secret:
            break  // taken above, from the line's bytes
        case .properties(let call, let property):
            guard response.status == .ok else { return fail(caller, call, response) }
            contextProperties(call, caller, property, response)
        case .evaluation(let number):
            evaluationLine(response, caller, number)
        case .taken(let number):
            taken(caller, number)
        case .watch:
            watchLine(response, caller)
        }
    }

    private func fail(_ caller: BusCaller, _ call: DBusOwnedMessage, _ response: Response) {
        let error = BusReplies.error(response)
        fail(caller, call, error.name, error.message)
    }

    /// The root's CanEvaluatePolicy: the check on the context just made, then its end.
    private func oneShotCheck(_ call: DBusOwnedMessage, _ caller: BusCaller, ctx: String, policy: UInt32) {
        let check = caller.tag(), end = caller.tag()
        writer.bytes.removeAll(keepingCapacity: true)
        writer.beginRequest(tag: check, verb: "can-evaluate")
        writer.append(key: "ctx", value: ctx)
        writer.append(key: "policy", value: Int(policy))
        writer.endLine()
        writer.beginRequest(tag: end, verb: "invalidate")
        writer.append(key: "ctx", value: ctx)
        writer.endLine()
        caller.pending[check] = .oneShotCheck(call)
        caller.pending[end] = .ignored
        feed(caller)
    }

    private func contextProperties(_ call: DBusOwnedMessage, _ caller: BusCaller, _ property: BusPropertySpec?, _ get: Response) {
        let value = { (spec: BusPropertySpec) -> DBusArgument? in
            guard spec.access != .write, let wire = BusReplies.contextProperties.first(where: { $0.name == spec.name })?.wire else {
                return nil
            }
            return BusReplies.contextProperty(spec, wire: wire, in: get)
        }
        if let property {
            guard let found = value(property) else { return fail(caller, call, BusFront.unknownProperty, "No such property.") }
            return reply(caller, call, [.variant(found)])
        }
        reply(caller, call, [.dictionary(BusInterfaces.context.properties.compactMap { spec in value(spec).map { DBusEntry(spec.name, $0) } })])
    }

    // MARK: Requests

    /// A line of request N's evaluation: held until the request was taken,
    /// a refusal before that is the call's error (S-71), then signals.
    private func evaluationLine(_ response: Response, _ caller: BusCaller, _ number: UInt64) {
        guard var request = caller.requests[number] else { return }
        if let call = request.call {
            if response.status == .err, response.errorDomain == "protocol" {
                forget(caller, number)
                return fail(caller, call, response)
            }
            request.early.append(response)
            caller.requests[number] = request
            return
        }
        signal(response, caller, number)
    }

    /// The ping behind request N answered: the request exists (its path is
    /// the call's return), and what its evaluation said meanwhile follows.
    private func taken(_ caller: BusCaller, _ number: UInt64) {
        guard var request = caller.requests[number], let call = request.call else { return }
        request.call = nil
        let early = request.early
        request.early = []
        caller.requests[number] = request
        reply(caller, call, [.objectPath(BusNames.root + "/request/\(number)")])
        for response in early { signal(response, caller, number) }
    }

    private func signal(_ response: Response, _ caller: BusCaller, _ number: UInt64) {
        let path = BusNames.root + "/request/\(number)"
        if response.status == .prompt {
            bus?.emitSignal(to: caller.name, path: path, interface: BusNames.requestInterface, member: "Prompt",
                            BusReplies.prompt(response))
        } else if response.isFinal {
            bus?.emitSignal(to: caller.name, path: path, interface: BusNames.requestInterface, member: "Completed",
                            BusReplies.completed(response))
            forget(caller, number)
        }
    }

    private func forget(_ caller: BusCaller, _ number: UInt64) {
        guard let request = caller.requests.removeValue(forKey: number) else { return }
        if caller.requestOfContext[request.context] == number { caller.requestOfContext[request.context] = nil }
        caller.pending[request.tag] = nil
    }

    // MARK: The environment

    private func watchLine(_ response: Response, _ caller: BusCaller) {
        switch response.status {
        case .state:
            let fresh = BusReplies.environment(response)
            let old = caller.environment
            caller.environment = fresh
            let waiters = caller.environmentWaiters
            caller.environmentWaiters = []
            for (call, property) in waiters { answerEnvironment(call, caller, property, fresh) }
            guard let old else { return }
            let changed = fresh.filter { entry in !old.contains(entry) }
            guard !changed.isEmpty else { return }
            bus?.emitSignal(to: caller.name, path: BusNames.root + "/user/self", interface: BusNames.properties,
                            member: "PropertiesChanged",
                            [.string(BusNames.environmentInterface), .dictionary(changed), .strings([])])
        case .err:
            caller.watchTag = nil
            caller.pending = caller.pending.filter { if case .watch = $0.value { return false } else { return true } }
            let waiters = caller.environmentWaiters
            caller.environmentWaiters = []
            for (call, _) in waiters { fail(caller, call, response) }
        default:
            break
        }
    }

    // MARK: Secrets

    /// `OK secret=B64`: decoded from the line's bytes into a buffer that is
    /// wiped once the return is queued (S-50: no String of it).
    private func secret(_ line: UnsafeBufferPointer<UInt8>, _ call: DBusOwnedMessage, _ caller: BusCaller) {
        guard BusFront.isOK(line) else {
            if let failure = try? Response.parse(line) { fail(caller, call, failure) }
            return
        }
        guard let value = BusFront.value(of: "secret", in: line),
              case .success(var secret) = Base64.decode(value, maximumBytes: 1 << 16) else {
            return fail(caller, call, BusNames.errorPrefix + "Internal", "The secret's reply could not be read.")
        }
        caller.unanswered = max(0, caller.unanswered - 1)
        secret.withUnsafeBytes { _ = bus?.reply(to: call.message, secret: $0) }
        SecretMemory.wipe(&secret)
    }

    /// The tag of a reply line (its first word).
    static func tag(of line: UnsafeBufferPointer<UInt8>) -> String? {
        guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: line[0..<space]), as: UTF8.self)
    }

    /// Whether the line is `TAG OK ...` (read without parsing its values).
    private static func isOK(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return false }
        return line[(space + 1)...].prefix { $0 != UInt8(ascii: " ") }.elementsEqual("OK".utf8)
    }

    /// The bytes of ` KEY=VALUE`'s value (bare, or quoted without escapes:
    /// base64 needs none), lent in place.
    private static func value(of key: String, in line: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        let needle = Array((" " + key + "=").utf8)
        guard line.count > needle.count else { return nil }
        for start in 0...(line.count - needle.count) where line[start..<(start + needle.count)].elementsEqual(needle) {
            var from = start + needle.count
            var to = line[from...].firstIndex(of: UInt8(ascii: " ")) ?? line.count
            if from < to, line[from] == UInt8(ascii: "\""), line[to - 1] == UInt8(ascii: "\""), to - from >= 2 {
                from += 1
                to -= 1
            }
            return UnsafeBufferPointer(rebasing: line[from..<to])
        }
        return nil
    }
}

extension Pending {
    /// Entries that answer more than one line (the watch's STATE lines, a
    /// request's PROMPTs): kept after a final line.
    var isLasting: Bool {
        switch self {
        case .watch, .evaluation: return true
        default: return false
        }
    }
}
