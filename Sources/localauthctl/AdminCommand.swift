// The administrator's verbs (PROTOCOL.md: enroll, unenroll, sensor,
// unlocked, reset): one request each, `--uid` required, a
// one-line confirmation on success.

/// What the admin commands share: parse `--uid`, send one request, print one
/// line (or, with `-o json`, the reply's fields as one JSON object).
protocol AdminCommand: Command {
    var uid: UInt32 { get }
    var socket: String { get }
    var format: String { get }
    var verb: String { get }
    var extraArguments: [(String, String)] { get }
    func confirmation(_ reply: [String: String]) -> String
}

extension AdminCommand {
    static var isLive: Bool { true }
    var extraArguments: [(String, String)] { [] }

    func run() throws(CommandFailure) -> Int32 {
        let client = try DaemonClient.connect(socket)
        let reply = try client.expectOK(verb, [("uid", String(uid))] + extraArguments)
        if format == "json" {
            let fields = [("uid", JSONValue.number(uid))] + reply.arguments.map { argument in
                (argument.key.replacingOccurrences("-", "_"), StatusCommand.typed(argument.value))
            }
            Console.out(JSONValue.object(fields).text)
            return 0
        }
        var values: [String: String] = [:]
        for argument in reply.arguments { values[argument.key] = argument.value }
        Console.out(confirmation(values))
        return 0
    }
}

let uidOption = OptionSpec("--uid", value: "N", help: "the user (id or name); required")
let adminOutputOption = OptionSpec("-o", "--output", value: "text|json", help: "the output format (default: text)")

func adminFormat(_ arguments: ParsedArguments) throws(UsageError) -> String {
    try arguments.choice("--output", ["text", "json"])
}

func requiredUID(_ arguments: ParsedArguments) throws(UsageError) -> UInt32 {
    guard let uid = try arguments.uid("--uid") else { throw UsageError("missing --uid") }
    return uid
}
