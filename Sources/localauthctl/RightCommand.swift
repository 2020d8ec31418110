// `localauthctl right list|show|remove`: the calling user's rights (LARightStore's,
// PROTOCOL.md v1.1 and v1.4), as the daemon keeps them for the uid that runs
// the command: `right-list`, `right-state` with `right-public-key`, and
// `right-remove`. Never a secret or a private key: the daemon gives out
// neither (S-78). One type per action; PasscodeCommand's way of dispatching.
import LocalAuthProtocol
import LocalAuthSystem

struct RightCommand: Command {
    static let name = "right"
    static let operands = "list | show IDENTIFIER | remove IDENTIFIER|--all"
    static let summary = "List, show or remove your own rights (LARightStore's) and their keys"
    static let details = """
        Rights belong to the Unix user whose program saved them; this command shows and
        removes those of the user who runs it (root's own, when run as root).
        right list: one line per right: identifier, requirement, whether it holds a
        secret, whether it has a key (rights saved before keys existed have none).
        right show IDENTIFIER: the same, and the right's public key (P-256, PEM) with the
        SHA-256 of its 65 bytes, as the log's right-key-created records it.
        right remove IDENTIFIER (or --all): removes the right, its secret and its key.
        With -o json: one JSON object per right (list), or per request.
        """
    static let isLive = true
    static let options = [
        OptionSpec("--all", help: "remove: every right of yours"),
        adminOutputOption,
        SocketOption.spec,
    ]

    var action: any Command

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let verb = arguments.positionals.first else { throw UsageError("missing the action (list, show or remove)") }
        var rest = arguments
        rest.positionals.removeFirst()
        if verb != "remove", arguments.flag("--all") { throw UsageError("--all applies to 'right remove' only") }
        switch verb {
        case "list": action = try RightListCommand(rest)
        case "show": action = try RightShowCommand(rest)
        case "remove": action = try RightRemoveCommand(rest)
        default: throw UsageError("invalid action '\(verb)': expected list, show or remove")
        }
    }

    func run() throws(CommandFailure) -> Int32 { try action.run() }

    /// The one identifier operand.
    static func identifier(_ arguments: ParsedArguments, _ action: String) throws(UsageError) -> String {
        guard let identifier = arguments.positionals.first else { throw UsageError("right \(action): missing the IDENTIFIER") }
        guard arguments.positionals.count == 1 else { throw UsageError("unexpected argument '\(arguments.positionals[1])'") }
        return identifier
    }
}

struct RightListCommand: Command {
    static let name = "right list"
    static let summary = RightCommand.summary
    static let isLive = true
    static let options = RightCommand.options

    var format: String
    var socket: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requireNoPositionals()
        format = try arguments.choice("--output", ["text", "json"])
        socket = SocketOption.path(arguments)
    }

    func run() throws(CommandFailure) -> Int32 {
        let client = try DaemonClient.connect(socket)
        var rights: [Arguments] = []
        let reply = try client.call("right-list") { line in if line.status == .right { rights.append(line.arguments) } }
        if reply.status == .err { throw CommandFailure(DaemonClient.describe(error: reply), status: DaemonClient.exitStatus(reply)) }
        if format == "json" {
            for right in rights { Console.out(StatusCommand.json(right).text) }
            return 0
        }
        if rights.isEmpty {
            Console.out("No rights.")
            return 0
        }
        let rows = [("IDENTIFIER", "REQUIREMENT", "SECRET", "KEY")] + rights.map { right in
            (DisplayText.field(right.value(for: "identifier") ?? "?"), right.value(for: "requirement") ?? "?",
             right.value(for: "has-secret") == "true" ? "yes" : "no", right.value(for: "has-key") == "true" ? "P-256" : "none")
        }
        let first = rows.map(\.0.count).max()! + 2, second = rows.map(\.1.count).max()! + 2
        for row in rows {
            Console.out(row.0 + String(repeating: " ", count: first - row.0.count) + row.1
                + String(repeating: " ", count: second - row.1.count) + row.2 + String(repeating: " ", count: 8 - row.2.count) + row.3)
        }
        return 0
    }
}

struct RightShowCommand: Command {
    static let name = "right show"
    static let summary = RightCommand.summary
    static let isLive = true
    static let options = RightCommand.options
    /// SubjectPublicKeyInfo for id-ecPublicKey / prime256v1, before the 65-byte key (RFC 5480).
    static let spkiPrefix: [UInt8] = [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
                                      0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00]

    var identifier: String
    var format: String
    var socket: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        identifier = try RightCommand.identifier(arguments, "show")
        format = try arguments.choice("--output", ["text", "json"])
        socket = SocketOption.path(arguments)
    }

    func run() throws(CommandFailure) -> Int32 {
        let client = try DaemonClient.connect(socket)
        let state = try client.expectOK("right-state", [("identifier", identifier)])
        var publicKey: [UInt8]?
        if state.arguments.value(for: "has-key") == "true" {
            let reply = try client.expectOK("right-public-key", [("identifier", identifier)])
            guard let text = reply.arguments.value(for: "public-key"), case .success(let bytes) = Base64.decode(text, maximumBytes: 65),
                  bytes.count == 65 else {
                throw CommandFailure("localauthd sent a malformed public key for '\(identifier)'")
            }
            publicKey = bytes
        }
        let digest = publicKey.map { SHA256.hash($0).map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined() }
        if format == "json" {
            var fields = [("identifier", JSONValue.string(identifier))]
            if case .object(let stateFields) = StatusCommand.json(state.arguments) { fields += stateFields }
            fields.append(("public_key", JSONValue.optional(publicKey.map { Base64.encode($0) })))
            fields.append(("public_key_sha256", JSONValue.optional(digest)))
            Console.out(JSONValue.object(fields).text)
            return 0
        }
        Console.out("Identifier:  \(DisplayText.field(identifier))")
        Console.out("Requirement: \(state.arguments.value(for: "requirement") ?? "?")")
        Console.out("Secret:      \(state.arguments.value(for: "has-secret") == "true" ? "yes" : "no")")
        guard let publicKey, let digest else {
            Console.out("Key:         none (saved before rights had keys; save the right again to make one)")
            return 0
        }
        Console.out("Key:         P-256, public key SHA-256 \(digest)")
        Console.out("-----BEGIN PUBLIC KEY-----")
        let base64 = Base64.encode(Self.spkiPrefix + publicKey)
        var start = base64.startIndex
        while start < base64.endIndex {
            let end = base64.index(start, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            Console.out(String(base64[start..<end]))
            start = end
        }
        Console.out("-----END PUBLIC KEY-----")
        return 0
    }
}

struct RightRemoveCommand: Command {
    static let name = "right remove"
    static let summary = RightCommand.summary
    static let isLive = true
    static let options = RightCommand.options

    var identifier: String?
    var format: String
    var socket: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        if arguments.flag("--all") {
            try arguments.requireNoPositionals()
            identifier = nil
        } else {
            identifier = try RightCommand.identifier(arguments, "remove")
        }
        format = try arguments.choice("--output", ["text", "json"])
        socket = SocketOption.path(arguments)
    }

    func run() throws(CommandFailure) -> Int32 {
        let client = try DaemonClient.connect(socket)
        _ = try client.expectOK("right-remove", identifier.map { [("identifier", $0)] } ?? [("all", "true")])
        if format == "json" {
            Console.out(JSONValue.object([("removed", identifier.map(JSONValue.string) ?? .string("all"))]).text)
        } else {
            Console.out(identifier.map { "Removed the right '\(DisplayText.field($0))', its secret and its key." }
                ?? "Removed every right of yours, their secrets and their keys.")
        }
        return 0
    }
}
