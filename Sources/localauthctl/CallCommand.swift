// localauthctl call: Send one raw protocol request and print the replies up to the final one.
import LocalAuthProtocol

struct CallCommand: Command {
    static let name = "call"
    static let operands = "VERB [KEY=VALUE...]"
    static let summary = "Send one raw protocol request and print the replies up to the final one"
    static let details = """
        Values are quoted for the wire as needed: call set-passcode is possible but
        puts the secret on the command line, where every user can read it; use
        set-passcode instead. Exit status 1 when the final reply is ERR.
        """
    static let isLive = true
    static let options = [SocketOption.spec]

    var verb: String
    var arguments: [(String, String)] = []
    var socket: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let verb = arguments.positionals.first else { throw UsageError("missing VERB") }
        self.verb = verb
        for pair in arguments.positionals.dropFirst() {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw UsageError("expected KEY=VALUE, got '\(pair)'")
            }
            self.arguments.append((String(pair[..<equals]), String(pair[pair.index(after: equals)...])))
        }
        socket = SocketOption.path(arguments)
    }

    func run() throws(CommandFailure) -> Int32 {
        let client = try DaemonClient.connect(socket)
        let final = try client.call(verb, arguments) { Console.out(Self.line($0)) }
        Console.out(Self.line(final))
        return DaemonClient.exitStatus(final)
    }

    static func line(_ response: Response) -> String {
        var writer = LineWriter()
        writer.append(response)
        return String(decoding: writer.bytes.dropLast(), as: UTF8.self)
    }
}

extension String {
    func replacingOccurrences(_ target: Character, _ replacement: Character) -> String {
        String(map { $0 == target ? replacement : $0 })
    }
}
