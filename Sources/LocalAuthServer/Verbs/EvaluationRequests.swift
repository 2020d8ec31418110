// What an `evaluate` or `right-authorize` asks for beyond v1 (PROTOCOL.md
// 1.2): `prompt=sequential|combined` (S-60) and `notice=failures` (S-64).
// A v1 client sends neither and sees neither's prompts or fields.
import LocalAuthCore
import LocalAuthProtocol

/// The parsed keys.
struct EvaluationRequest {
    var options = EvaluationOptions()
    /// S-64: the success reply carries the failures since the previous sign-in.
    var notice = false
}

extension ServerCore {
    /// The request's `prompt=` and `notice=`; nil (answered bad-argument)
    /// for a value PROTOCOL.md does not list.
    func evaluationRequest(_ request: Request, _ connection: Connection.ID) -> EvaluationRequest? {
        var parsed = EvaluationRequest()
        switch request.arguments.value(for: "prompt") {
        case nil, "sequential": break
        case "combined": parsed.options.combined = true
        case let other?:
            reply(connection, request.tag, ProtocolError(.badArgument, "Unknown prompt \"\(other)\" (sequential or combined)."))
            return nil
        }
        switch request.arguments.value(for: "notice") {
        case nil: break
        case "failures": parsed.notice = true
        case let other?:
            reply(connection, request.tag, ProtocolError(.badArgument, "Unknown notice \"\(other)\" (failures)."))
            return nil
        }
        return parsed
    }
}
