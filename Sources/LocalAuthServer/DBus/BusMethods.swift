// Each method of the D-Bus API as the request line a socket client would
// send for it (PROTOCOL.md "The D-Bus API", the table), after the call's
// shape was checked (S-72): the object is the caller's own, the signature
// exact, every string one a line can carry. What the line's replies answer
// is recorded by its tag (`Pending`); BusOutput.swift takes them.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

/// An object of the API, from its path.
enum BusObject: Equatable {
    case root
    /// `context`, `request`, `user`: nodes that only hold others.
    case node(String)
    case context(String)
    case request(UInt64)
    case userSelf

    init?(path: String) {
        guard path.hasPrefix(BusNames.root) else { return nil }
        let rest = path.dropFirst(BusNames.root.count)
        if rest.isEmpty { self = .root; return }
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].isEmpty else { return nil }
        switch (parts.count, parts[1]) {
        case (2, "context"), (2, "request"), (2, "user"): self = .node(String(parts[1]))
        case (3, "context") where parts[2].utf8.count == 32 && parts[2].utf8.allSatisfy(BusObject.isLowerHex):
            self = .context(String(parts[2]))
        case (3, "request"):
            guard let number = UInt64(parts[2]), String(number) == parts[2] else { return nil }
            self = .request(number)
        case (3, "user") where parts[2] == "self": self = .userSelf
        default: return nil
        }
    }

    var interface: BusInterfaceSpec? {
        switch self {
        case .root: return BusInterfaces.root
        case .context: return BusInterfaces.context
        case .request: return BusInterfaces.request
        case .userSelf: return BusInterfaces.environment
        case .node: return nil
        }
    }

    private static func isLowerHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}

extension BusFront {
    static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    /// Strings an argument may hold: what a request line carries.
    static let maximumStringBytes = LineSplitter.defaultMaximumLineLength

    func dispatch(_ call: DBusOwnedMessage, _ caller: BusCaller) {
        let message = call.message
        guard let path = message.path, let object = BusObject(path: path), owns(caller, object) else {
            return fail(caller, call, BusFront.unknownObject, "No such object.")
        }
        let member = message.member ?? ""
        if message.interface == BusNames.properties { return properties(call, caller, object, member) }
        guard let spec = object.interface, message.interface == nil || message.interface == spec.name else {
            return fail(caller, call, "org.freedesktop.DBus.Error.UnknownInterface", "No such interface on this object.")
        }
        guard let method = spec.method(member) else {
            return fail(caller, call, "org.freedesktop.DBus.Error.UnknownMethod", "No method \(member) in \(spec.name).")
        }
        guard message.signature == method.signature else {
            return fail(caller, call, BusFront.invalidArgs, "\(member) takes (\(method.signature)), not (\(message.signature)).")
        }
        var body = message.body()
        switch (object, member) {
        case (.root, "CreateContext"):
            request(caller, .created(call)) { $0.beginRequest(tag: $1, verb: "new") }
        case (.root, "CanEvaluatePolicy"):
            let policy = body.uint32() ?? 0
            request(caller, .oneShotNew(call, policy: policy)) { $0.beginRequest(tag: $1, verb: "new") }
        case (.root, "SaveRight"):
            saveRight(call, caller, &body)
        case (.root, "RightState"), (.root, "RemoveRight"):
            guard let identifier = text(&body, caller, call) else { return }
            let verb = member == "RightState" ? "right-state" : "right-remove"
            request(caller, member == "RightState" ? .rightState(call) : .plain(call)) { line, tag in
                line.beginRequest(tag: tag, verb: verb)
                line.append(key: "identifier", value: identifier)
            }
        case (.root, "RemoveAllRights"):
            request(caller, .plain(call)) { line, tag in
                line.beginRequest(tag: tag, verb: "right-remove")
                line.append(key: "all", value: true)
            }
        case (.context(let ctx), "CanEvaluatePolicy"):
            let policy = body.uint32() ?? 0
            request(caller, .check(call)) { line, tag in
                line.beginRequest(tag: tag, verb: "can-evaluate")
                line.append(key: "ctx", value: ctx)
                line.append(key: "policy", value: Int(policy))
            }
        case (.context(let ctx), "EvaluatePolicy"), (.context(let ctx), "Authorize"):
            evaluate(call, caller, ctx: ctx, member, &body)
        case (.context(let ctx), "Invalidate"):
            request(caller, .plain(call)) { line, tag in
                line.beginRequest(tag: tag, verb: "invalidate")
                line.append(key: "ctx", value: ctx)
            }
        case (.context(let ctx), "Deauthorize"), (.context(let ctx), "Secret"):
            guard let identifier = text(&body, caller, call) else { return }
            let secret = member == "Secret"
            request(caller, secret ? .secret(call) : .plain(call)) { line, tag in
                line.beginRequest(tag: tag, verb: secret ? "right-secret" : "right-deauthorize")
                line.append(key: "ctx", value: ctx)
                line.append(key: "identifier", value: identifier)
            }
        case (.request(let number), _):
            answerPrompt(call, caller, number, member, &body)
        default:
            fail(caller, call, "org.freedesktop.DBus.Error.UnknownMethod", "No method \(member) here.")
        }
    }

    /// Whether the object exists for this caller (S-71: only its creator
    /// reaches a context or a request; another name finds nothing).
    private func owns(_ caller: BusCaller, _ object: BusObject) -> Bool {
        switch object {
        case .context(let ctx): return caller.contexts.contains(ctx)
        case .request(let number): return caller.requests[number]?.call == nil && caller.requests[number] != nil
        case .root, .node, .userSelf: return true
        }
    }

    // MARK: Methods with more than one line or a secret

    private func evaluate(_ call: DBusOwnedMessage, _ caller: BusCaller, ctx: String, _ member: String, _ body: inout DBusBody) {
        let authorize = member == "Authorize"
        var policy: UInt32 = 0
        var identifier = ""
        if authorize {
            guard let text = text(&body, caller, call) else { return }
            identifier = text
        } else {
            policy = body.uint32() ?? 0
        }
        guard let reason = text(&body, caller, call) else { return }
        guard let options = body.options(limit: 8, maximumBytes: 64) else {
            return fail(caller, call, BusFront.invalidArgs, "options: at most 8 entries.")
        }
        var keys: [(String, String)] = []
        for option in options {
            guard ["prompt", "notice"].contains(option.key), let value = option.value?.string, !keys.contains(where: { $0.0 == option.key }) else {
                return fail(caller, call, BusFront.invalidArgs, "options: only \"prompt\" and \"notice\", once each, as strings.")
            }
            guard BusFront.isCarried(value) else { return fail(caller, call, BusFront.invalidArgs, "options: a control character.") }
            keys.append((option.key, value))
        }
        // S-71: one request per context until its Completed was sent (S-22).
        guard caller.requestOfContext[ctx] == nil else {
            return fail(caller, call, BusNames.errorPrefix + "Busy", "An evaluation of this context is still running.")
        }
        let number = nextRequest
        nextRequest += 1
        let tag = caller.tag(), ping = caller.tag()
        writer.bytes.removeAll(keepingCapacity: true)
        writer.beginRequest(tag: tag, verb: authorize ? "right-authorize" : "evaluate")
        writer.append(key: "ctx", value: ctx)
        if authorize { writer.append(key: "identifier", value: identifier) } else { writer.append(key: "policy", value: Int(policy)) }
        writer.append(key: "reason", value: reason)
        for (key, value) in keys { writer.append(key: key, value: value) }
        writer.endLine()
        guard writer.bytes.count <= LineSplitter.defaultMaximumLineLength else {
            return fail(caller, call, BusFront.invalidArgs, "The request does not fit in one line (8192 bytes).")
        }
        // The ping's OK says the request was taken (docs/decisions/0011).
        writer.beginRequest(tag: ping, verb: "ping")
        writer.endLine()
        caller.requests[number] = BusRequest(context: ctx, tag: tag, pingTag: ping, call: call)
        caller.requestOfContext[ctx] = number
        caller.pending[tag] = .evaluation(number)
        caller.pending[ping] = .taken(number)
        feed(caller)
    }

    private func saveRight(_ call: DBusOwnedMessage, _ caller: BusCaller, _ body: inout DBusBody) {
        guard let identifier = text(&body, caller, call), let requirement = text(&body, caller, call) else { return }
        let tag = caller.tag()
        writer.bytes.removeAll(keepingCapacity: true)
        writer.beginRequest(tag: tag, verb: "right-save")
        writer.append(key: "identifier", value: identifier)
        writer.append(key: "requirement", value: requirement)
        // S-50: base64 straight from the message into the line; both wiped.
        let fits = body.bytes(maximumCount: 6000) { secret -> Bool in
            if secret.count > 0 { writer.append(key: "secret", base64Of: UnsafeRawBufferPointer(secret)) }
            SecretMemory.wipe(secret)
            return true
        }
        writer.endLine()
        guard fits == true, writer.bytes.count <= LineSplitter.defaultMaximumLineLength else {
            SecretMemory.wipe(&writer.bytes)
            return fail(caller, call, BusFront.invalidArgs, "The secret does not fit in one request line.")
        }
        caller.pending[tag] = .plain(call)
        feed(caller, secret: true)
    }

    /// Cancel, Fallback and Passcode of request `number`: the same verbs on its context.
    private func answerPrompt(_ call: DBusOwnedMessage, _ caller: BusCaller, _ number: UInt64, _ member: String,
                              _ body: inout DBusBody) {
        guard let ctx = caller.requests[number]?.context else { return fail(caller, call, BusFront.unknownObject, "No such object.") }
        let tag = caller.tag()
        writer.bytes.removeAll(keepingCapacity: true)
        writer.beginRequest(tag: tag, verb: member.lowercased())
        writer.append(key: "ctx", value: ctx)
        guard member == "Passcode" else {
            writer.endLine()
            caller.pending[tag] = .plain(call)
            return feed(caller)
        }
        // S-50: quoted straight from the message into the line; both wiped.
        let carried = body.bytes(maximumCount: BusFront.maximumStringBytes) { secret -> Bool in
            defer { SecretMemory.wipe(secret) }
            guard BusFront.isCarried(UnsafeRawBufferPointer(secret)) else { return false }
            writer.append(key: "secret", quotedSecret: UnsafeRawBufferPointer(secret))
            return true
        }
        writer.endLine()
        guard carried == true, writer.bytes.count <= LineSplitter.defaultMaximumLineLength else {
            SecretMemory.wipe(&writer.bytes)
            return fail(caller, call, BusFront.invalidArgs, "A passcode is UTF-8 text without control characters, at most a line long.")
        }
        caller.pending[tag] = .plain(call)
        feed(caller, secret: true)
    }

    // MARK: Lines to the core

    /// One request line: `write` gets the writer and a fresh tag.
    func request(_ caller: BusCaller, _ pending: Pending, _ write: (inout LineWriter, String) -> Void) {
        let tag = caller.tag()
        writer.bytes.removeAll(keepingCapacity: true)
        write(&writer, tag)
        writer.endLine()
        guard writer.bytes.count <= LineSplitter.defaultMaximumLineLength else {
            if let call = pending.call { fail(caller, call, BusFront.invalidArgs, "The request does not fit in one line (8192 bytes).") }
            return
        }
        caller.pending[tag] = pending
        feed(caller)
    }

    /// The writer's lines, as the caller's connection's input.
    func feed(_ caller: BusCaller, secret: Bool = false) {
        guard let id = caller.connection else { return }
        fed = true
        writer.bytes.withUnsafeBytes { _ = core.received($0, on: id) }
        if secret || core.lastInputHeldSecret { SecretMemory.wipe(&writer.bytes) }
    }

    /// A string argument a request line can carry, or nil after InvalidArgs.
    func text(_ body: inout DBusBody, _ caller: BusCaller, _ call: DBusOwnedMessage) -> String? {
        guard let text = body.string(maximumBytes: BusFront.maximumStringBytes), BusFront.isCarried(text) else {
            fail(caller, call, BusFront.invalidArgs, "Strings are at most 8192 bytes, without control characters other than TAB, LF, CR.")
            return nil
        }
        return text
    }

    /// S-72: no control character but TAB, LF and CR (a line has no way to
    /// carry the others), UTF-8 text without NUL.
    static func isCarried(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isCarried(UnsafeRawBufferPointer($0)) }
    }

    static func isCarried(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self) != nil else { return false }
        return !bytes.contains { ($0 < 0x20 && $0 != 0x09 && $0 != 0x0a && $0 != 0x0d) || $0 == 0x7f }
    }

    // MARK: Answers

    func reply(_ caller: BusCaller, _ call: DBusOwnedMessage, _ arguments: [DBusArgument] = []) {
        caller.unanswered = max(0, caller.unanswered - 1)
        bus?.reply(to: call.message, arguments)
    }

    func fail(_ caller: BusCaller, _ call: DBusOwnedMessage, _ name: String, _ text: String) {
        caller.unanswered = max(0, caller.unanswered - 1)
        bus?.replyError(to: call.message, name: name, message: text)
    }

    /// Introspect: the object's interfaces (the caller's own objects only).
    func introspect(_ message: DBusMessage, sender: String) {
        guard let path = message.path, let object = BusObject(path: path) else {
            bus?.replyError(to: message, name: BusFront.unknownObject, message: "No such object.")
            return
        }
        let caller = callers[sender] ?? BusCaller(name: sender)
        guard owns(caller, object) else {
            bus?.replyError(to: message, name: BusFront.unknownObject, message: "No such object.")
            return
        }
        let children: [String]
        switch object {
        case .root: children = ["user"]
        case .node("user"): children = ["self"]
        default: children = []
        }
        bus?.reply(to: message, [.string(BusInterfaces.introspection(object.interface, children: children))])
    }
}

extension Pending {
    /// The call this pending entry answers, if one.
    var call: DBusOwnedMessage? {
        switch self {
        case .plain(let call), .created(let call), .check(let call), .oneShotNew(let call, _), .oneShotCheck(let call),
             .rightState(let call), .secret(let call), .properties(let call, _):
            return call
        case .ignored, .evaluation, .taken, .watch:
            return nil
        }
    }
}
