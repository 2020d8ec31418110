// A protocol error (PROTOCOL.md "Errors", `ERR domain=protocol`) met through
// LAContext: Apple's API has no place for one, so the LocalAuthentication
// module hands it to apps as an LAError (systemCancel; invalidContext for
// unknown-context) whose `reason` is the error's wire name. It is not an
// LAError, so the CLI reports it as what it is: localauthd refusing the
// request (exit 1, as every refusal). The LA domain's reasons (timeout,
// passcode-required, disconnect, ...) are never protocol error names.

import LocalAuthentication
import LocalAuthProtocol

struct DaemonRefusal {
    /// The protocol error's name (`bad-argument`, `busy`, ...).
    var name: String
    var message: String

    init?(_ error: LAError?) {
        guard let error, error.code == .systemCancel || error.code == .invalidContext,
              let reason = error.reason, ProtocolErrorName(wireName: reason) != nil else { return nil }
        name = reason
        message = error.localizedDescription
    }

    /// One line, in DaemonClient's format for protocol errors: `MESSAGE (NAME)`.
    var text: String { "localauthd refused the request: \(message) (\(name))" }

    /// `{"error":NAME,"domain":"protocol","message":...}` after `leading`.
    func json(_ leading: [(String, JSONValue)] = []) -> JSONValue {
        .object(leading + [("error", .string(name)), ("domain", .string("protocol")), ("message", .string(message))])
    }
}
