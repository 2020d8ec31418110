// org.freedesktop.DBus.Properties on the API's objects: a context's are
// read with `get` and written with `set` (S-16), the environment's
// (`user/self`) come from the caller's `watch` (S-71: the first Get or
// GetAll starts it, every later change is a PropertiesChanged to the
// caller alone). The root and requests have none.
import LocalAuthProtocol
import LocalAuthSystem

extension BusFront {
    static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"

    func properties(_ call: DBusOwnedMessage, _ caller: BusCaller, _ object: BusObject, _ member: String) {
        let message = call.message
        let signatures = ["Get": "ss", "GetAll": "s", "Set": "ssv"]
        guard let signature = signatures[member] else {
            return fail(caller, call, "org.freedesktop.DBus.Error.UnknownMethod", "No method \(member) in \(BusNames.properties).")
        }
        guard message.signature == signature else {
            return fail(caller, call, BusFront.invalidArgs, "\(member) takes (\(signature)).")
        }
        var body = message.body()
        let interface = body.string(maximumBytes: 256) ?? ""
        let name = member == "GetAll" ? nil : body.string(maximumBytes: 256)
        guard let spec = object.interface, !spec.properties.isEmpty, interface.isEmpty || interface == spec.name else {
            if member == "GetAll" { return reply(caller, call, [.dictionary([])]) }
            return fail(caller, call, BusFront.unknownProperty, "No such property.")
        }
        var property: BusPropertySpec?
        if member != "GetAll" {
            guard let name, let found = spec.property(name) else { return fail(caller, call, BusFront.unknownProperty, "No such property.") }
            property = found
        }
        switch (object, member) {
        case (.userSelf, "Set"):
            fail(caller, call, "org.freedesktop.DBus.Error.PropertyReadOnly", "The environment's properties are read-only.")
        case (.userSelf, _):
            environment(call, caller, property?.name)
        case (.context(let ctx), "Set"):
            setContextProperty(call, caller, ctx, property!, &body)
        case (.context(let ctx), _):
            if let property, property.access == .write {
                return fail(caller, call, BusFront.invalidArgs, "\(property.name) can only be set.")
            }
            request(caller, .properties(call, property: property)) { line, tag in
                line.beginRequest(tag: tag, verb: "get")
                line.append(key: "ctx", value: ctx)
            }
        default:
            fail(caller, call, BusFront.unknownProperty, "No such property.")
        }
    }

    private func setContextProperty(_ call: DBusOwnedMessage, _ caller: BusCaller, _ ctx: String, _ property: BusPropertySpec,
                                    _ body: inout DBusBody) {
        guard property.access != .read else {
            return fail(caller, call, "org.freedesktop.DBus.Error.PropertyReadOnly", "\(property.name) is read-only.")
        }
        guard let wire = BusReplies.contextProperties.first(where: { $0.name == property.name })?.wire else {
            return fail(caller, call, BusFront.unknownProperty, "No such property.")
        }
        let value = body.variant(maximumBytes: BusFront.maximumStringBytes)
        let written: String
        switch (property.type, value) {
        case ("s", .string(let text)?) where BusFront.isCarried(text): written = text
        case ("u", .uint32(let number)?): written = String(number)
        case ("b", .boolean(let flag)?): written = flag ? "true" : "false"
        default:
            return fail(caller, call, BusFront.invalidArgs, "\(property.name) is of type \(property.type), without control characters.")
        }
        request(caller, .plain(call)) { line, tag in
            line.beginRequest(tag: tag, verb: "set")
            line.append(key: "ctx", value: ctx)
            line.append(key: wire, value: written)
        }
    }

    /// The environment now, or once the watch's first STATE line came.
    private func environment(_ call: DBusOwnedMessage, _ caller: BusCaller, _ property: String?) {
        if let environment = caller.environment { return answerEnvironment(call, caller, property, environment) }
        caller.environmentWaiters.append((call, property))
        guard caller.watchTag == nil else { return }
        let tag = caller.tag()
        caller.watchTag = tag
        caller.pending[tag] = .watch
        writer.bytes.removeAll(keepingCapacity: true)
        writer.beginRequest(tag: tag, verb: "watch")
        writer.endLine()
        feed(caller)
    }

    func answerEnvironment(_ call: DBusOwnedMessage, _ caller: BusCaller, _ property: String?, _ environment: [DBusEntry]) {
        guard let property else { return reply(caller, call, [.dictionary(environment)]) }
        guard let entry = environment.first(where: { $0.key == property }) else {
            return fail(caller, call, BusFront.unknownProperty, "No such property.")
        }
        reply(caller, call, [.variant(entry.value)])
    }
}
