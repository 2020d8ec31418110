// `can-evaluate`: Apple's canEvaluatePolicy from a shell, through the
// LocalAuthentication module (a fresh LAContext, as an app would): whether a
// policy could be evaluated now, with the biometry type and, for biometrics,
// the domain state. Never prompts, never changes a counter (S-20).

import LocalAuthCore
import LocalAuthentication

struct CanEvaluateCommand: Command {
    static let name = "can-evaluate"
    static let summary = "Check whether a policy could be evaluated now (no prompt, no counter changes)"
    static let details = """
        Policies: biometrics, owner (default), companion, biometrics-or-companion, wrist,
        or Apple's names. Exit status 0 when it could, 1 with the LAError when not,
        or when localauthd refuses the request (a protocol error, e.g. bad-argument
        for wrist; -o json prints {"error":NAME,"domain":"protocol","message":...}).
        """
    static let isLive = true
    static let options = [
        OptionSpec("--policy", value: "P", help: "the LAPolicy (default: owner)"),
        OptionSpec("-o", "--output", value: "text|json", help: "the output format (default: text)"),
        SocketOption.spec,
    ]

    var policy: LAPolicy
    var format: String
    var socket: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requireNoPositionals()
        let text = arguments.value("--policy") ?? "owner"
        guard let parsed = Policy(wireName: text), let policy = LAPolicy(rawValue: Int(parsed.rawValue)) else {
            throw UsageError("invalid value '\(text)' for --policy: expected one of "
                + Policy.allCases.map(\.wireName).joined(separator: ", "))
        }
        self.policy = policy
        format = try arguments.choice("--output", ["text", "json"])
        socket = SocketOption.path(arguments)
    }

    func run() throws(CommandFailure) -> Int32 {
        let context = LAContext(socketPath: socket)
        var error: NSError?
        let can = context.canEvaluatePolicy(policy, error: &error)
        let laError = error.flatMap { $0 as Error as? LAError }
        let domainState = context.evaluatedPolicyDomainState.map { $0.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined() }
        if laError?.reason == "daemon-unreachable" {
            throw CommandFailure(laError?.localizedDescription ?? "localauthd is not reachable at \(socket)",
                                 status: ExitStatus.unreachable)
        }
        if let refusal = DaemonRefusal(laError) {
            guard format == "json" else { throw CommandFailure(refusal.text, status: ExitStatus.refused) }
            Console.out(refusal.json([("policy", .string(policyName))]).text)
            return ExitStatus.refused
        }
        if format == "json" {
            var fields: [(String, JSONValue)] = [("policy", .string(policyName)),
                                                 ("biometry", .string(Self.name(context.biometryType)))]
            if can {
                fields.append(("result", .string("ok")))
                if let domainState { fields.append(("domain_state", .string(domainState))) }
            } else if let laError {
                fields += [("result", .string(laError.code.name)), ("code", .number(laError.code.rawValue)),
                           ("message", .string(laError.localizedDescription))]
                if let reason = laError.reason { fields.append(("reason", .string(reason))) }
            }
            Console.out(JSONValue.object(fields).text)
        } else if can {
            Console.out("Yes: \(policyName) can be evaluated (biometry \(Self.name(context.biometryType))"
                + (domainState.map { ", domain state \($0)" } ?? "") + ").")
        } else {
            let name = laError?.code.name ?? "error"
            Console.out("No: \(laError?.localizedDescription ?? "unknown error") (\(name), code \(error?.code ?? 0); "
                + "biometry \(Self.name(context.biometryType))).")
        }
        return can ? 0 : 1
    }

    /// The policy's wire name (`biometrics`), as everywhere in the output.
    var policyName: String { Policy(rawValue: policy.rawValue).map(\.wireName) ?? String(policy.rawValue) }

    static func name(_ type: LABiometryType) -> String {
        switch type {
        case .none: return "none"
        case .touchID: return "touchID"
        case .faceID: return "faceID"
        case .opticID: return "opticID"
        }
    }
}
