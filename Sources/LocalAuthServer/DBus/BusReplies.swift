// From the core's reply lines to D-Bus values (PROTOCOL.md "The D-Bus
// API"): error names, the `details` of Prompt and Completed, a check's
// five values, and the context's and environment's properties. Each
// mapping is one table, so a new prompt kind needs nothing here and a new
// reply key at most one line (a key not listed travels as a string).
import LocalAuthCore
import LocalAuthHex
import LocalAuthProtocol
import LocalAuthSystem

enum BusReplies {
    /// How a wire key's value is typed in `details`; unlisted keys are `s`.
    enum DetailType { case uint32, int64, biometry, bytes }

    static let detailTypes: [String: DetailType] = [
        "attempt": .uint32, "attempts-left": .uint32, "retry-after": .uint32,
        "failed-attempts": .uint32, "failed-biometric": .uint32, "failed-passcode": .uint32, "refused-passcode": .uint32,
        "last-failed-at": .int64,
        "biometry": .biometry,
        "domain-state": .bytes,
    ]

    /// The D-Bus error name of a protocol error (PROTOCOL.md "Errors").
    static func errorName(protocol wire: String) -> String {
        if wire == ProtocolErrorName.unknownContext.wireName { return "org.freedesktop.DBus.Error.UnknownObject" }
        let words = wire.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }
        return BusNames.errorPrefix + (words.isEmpty ? "Internal" : words.joined())
    }

    /// A final `ERR` line as a D-Bus error (a protocol error by its name;
    /// an LAError, which no method answers with, as Internal).
    static func error(_ response: Response) -> (name: String, message: String) {
        let message = response.message ?? ""
        if response.errorDomain == "protocol", let name = response.errorName { return (errorName(protocol: name), message) }
        return (BusNames.errorPrefix + "Internal", message)
    }

    static func details(_ arguments: Arguments, excluding: Set<String>) -> DBusArgument {
        .dictionary(arguments.compactMap { argument in
            excluding.contains(argument.key) ? nil : DBusEntry(argument.key, value(argument.value, as: detailTypes[argument.key]))
        })
    }

    /// A value typed as the table says; one that does not parse stays a string.
    static func value(_ text: String, as type: DetailType?) -> DBusArgument {
        switch type {
        case .uint32?: return UInt32(text).map { .uint32($0) } ?? .string(text)
        case .int64?: return Int64(text).map { .int64($0) } ?? .string(text)
        case .biometry?: return .uint32(biometry(text))
        case .bytes?: return .bytes(bytes(text))
        case nil: return .string(text)
        }
    }

    /// LABiometryType's raw value of a wire name (0 for none or unknown).
    static func biometry(_ name: String?) -> UInt32 {
        UInt32(BiometryType(wireName: name ?? "none")?.rawValue ?? 0)
    }

    /// A domain state's bytes ("" or not hex: none).
    static func bytes(_ hex: String?) -> [UInt8] {
        guard let hex, !hex.isEmpty else { return [] }
        return Hex.bytes(Array(hex.utf8)) ?? []
    }

    // MARK: Signals of a request

    static func prompt(_ response: Response) -> [DBusArgument] {
        [.string(response.arguments.value(for: "kind") ?? ""), details(response.arguments, excluding: ["kind"])]
    }

    static func completed(_ response: Response) -> [DBusArgument] {
        if response.status == .ok {
            return [.boolean(true), .string(response.arguments.value(for: "method") ?? ""), .int32(0), .string(""),
                    details(response.arguments, excluding: ["method"])]
        }
        if response.errorDomain == "la" {
            return [.boolean(false), .string(""), .int32(Int32(clamping: response.errorCode ?? 0)),
                    .string(response.errorName ?? ""), details(response.arguments, excluding: ["code", "name"])]
        }
        return [.boolean(false), .string(""), .int32(0), .string(error(response).name),
                details(response.arguments, excluding: ["code", "name"])]
    }

    // MARK: can-evaluate

    /// A check's five values, or nil for a protocol error (a D-Bus error).
    static func check(_ response: Response) -> [DBusArgument]? {
        let biometry = DBusArgument.uint32(biometry(response.arguments.value(for: "biometry")))
        if response.status == .ok {
            return [.boolean(true), biometry, .int32(0), .string(""), .bytes(bytes(response.arguments.value(for: "domain-state")))]
        }
        guard response.errorDomain == "la" else { return nil }
        return [.boolean(false), biometry, .int32(Int32(clamping: response.errorCode ?? 0)),
                .string(response.errorName ?? ""), .bytes([])]
    }

    // MARK: Properties

    /// The context's properties: D-Bus name, wire key (`get` / `set`).
    static let contextProperties: [(name: String, wire: String)] = [
        ("LocalizedFallbackTitle", "fallback-title"), ("LocalizedCancelTitle", "cancel-title"),
        ("LocalizedReason", "localized-reason"), ("TouchIDAuthenticationAllowableReuseDuration", "reuse-duration"),
        ("InteractionNotAllowed", "interaction-not-allowed"), ("Prompts", "prompt"), ("BiometryType", "biometry"),
        ("EvaluatedPolicyDomainState", "domain-state"), ("State", "state"),
    ]

    /// A context property's value from a `get` reply.
    static func contextProperty(_ property: BusPropertySpec, wire: String, in get: Response) -> DBusArgument {
        let text = get.arguments.value(for: wire)
        switch property.type {
        case "u" where wire == "biometry": return .uint32(biometry(text))
        case "u": return .uint32(text.flatMap { UInt32($0) } ?? 0)
        case "b": return .boolean(text == "true")
        case "ay": return .bytes(bytes(text))
        default: return .string(text ?? (wire == "prompt" ? "client" : ""))
        }
    }

    /// A STATE line as the environment's properties, in the interface's order.
    static func environment(_ state: Response) -> [DBusEntry] {
        let value = { (key: String) in state.arguments.value(for: key) ?? "" }
        let enrolled = (Int(value("enrolled")) ?? 0) > 0
        let lockedOut = value("locked-out") == "true", passcodeSet = value("passcode-set") == "true"
        let inaccessible = value("sensor-inaccessible") == "true"
        return [
            DBusEntry("Uid", .uint32(UInt32(value("uid")) ?? UInt32.max)),
            DBusEntry("BiometryType", .uint32(biometry(value("biometry")))),
            DBusEntry("BiometryIsEnrolled", .boolean(enrolled)),
            DBusEntry("BiometryIsLockedOut", .boolean(lockedOut)),
            // LAEnvironment's isUsable, as the Swift client computes it.
            DBusEntry("BiometryIsUsable", .boolean(enrolled && !lockedOut && passcodeSet && !inaccessible)),
            DBusEntry("BiometryStateHash", .bytes(bytes(value("domain-state")))),
            DBusEntry("BuiltInSensorInaccessible", .boolean(inaccessible)),
            DBusEntry("UserPasswordIsSet", .boolean(passcodeSet)),
        ]
    }
}
