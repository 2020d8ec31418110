// The protocol-level errors of PROTOCOL.md ("Errors"): one Swift case per
// wire name, and the value a parser hands back instead of a message.

/// The `name=` of a `domain=protocol` error. The raw value is the wire name.
public enum ProtocolErrorName: String, Sendable, CaseIterable, Hashable {
    case badSyntax = "bad-syntax"
    case unknownVerb = "unknown-verb"
    case badArgument = "bad-argument"
    case missingArgument = "missing-argument"
    case unknownContext = "unknown-context"
    case permissionDenied = "permission-denied"
    case badState = "bad-state"
    case busy = "busy"
    case limitExceeded = "limit-exceeded"
    case lineTooLong = "line-too-long"
    case unavailable = "unavailable"
    case `internal` = "internal"
    /// Version 1.1: no right of that identifier (`right-state`, `right-*`).
    case unknownRight = "unknown-right"
    /// Version 1.1: `right-secret` on a context where the right is not authorized.
    case notAuthorized = "not-authorized"
    /// Version 1.3: no open request of that number on this agent's connection (S-68).
    case unknownRequest = "unknown-request"

    public var wireName: String { rawValue }

    public init?(wireName: String) { self.init(rawValue: wireName) }
}

/// A protocol error: what goes into `ERR domain=protocol name=... message=...`.
public struct ProtocolError: Error, Sendable, Equatable {
    public var name: ProtocolErrorName
    /// A human sentence, sent as `message=`.
    public var message: String

    public init(_ name: ProtocolErrorName, _ message: String) {
        self.name = name
        self.message = message
    }
}

/// A request line that could not be turned into a `Request`.
public struct RequestFailure: Error, Sendable, Equatable {
    /// The line's tag when it could be read; nil when the line could not be
    /// parsed at all and must be answered with tag `*`.
    public var tag: String?
    public var error: ProtocolError

    public init(tag: String?, error: ProtocolError) {
        self.tag = tag
        self.error = error
    }

    public var name: ProtocolErrorName { error.name }
    public var message: String { error.message }
    /// The tag to answer with: the request's, or `*`.
    public var replyTag: String { tag ?? "*" }
}
