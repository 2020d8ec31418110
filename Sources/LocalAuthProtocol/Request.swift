// A client's request line: `TAG SP VERB *(SP KEY "=" VALUE)`.
//
// Which error a bad line gets (the spec only fixes the tag `*` for a line
// that cannot be parsed at all):
//   - empty line, or a first word that is not a valid TAG -> tag nil (`*`), bad-syntax;
//   - a valid TAG, then invalid UTF-8 or a NUL anywhere -> that tag, bad-syntax;
//   - a valid TAG, then a malformed VERB, KEY, VALUE or spacing -> that tag, bad-syntax;
//   - a repeated key, or more than `Arguments.maximumCount` -> that tag, bad-argument.
// Unknown verbs and keys are not the codec's business: see `Verb` and
// `Arguments.check(allowedKeys:verb:)`. Single spaces only: a doubled or
// trailing space is bad-syntax, so a line has one spelling.

/// A parsed request.
public struct Request: Sendable, Equatable {
    public var tag: String
    /// The verb as written; `Verb(rawValue:)` maps the known ones.
    public var verb: String
    public var arguments: Arguments

    public init(tag: String, verb: String, arguments: Arguments = Arguments()) {
        self.tag = tag
        self.verb = verb
        self.arguments = arguments
    }

    /// Parses one line (without its LF).
    public static func parse(_ line: UnsafeBufferPointer<UInt8>) -> RequestParseResult {
        var scanner = RequestScanner()
        if let failure = scanner.scan(line) { return .failure(failure) }
        return .request(scanner.request)
    }

    /// Parses one line (without its LF), e.g. a `LineSplitter` slice.
    public static func parse(_ line: some Collection<UInt8>) -> RequestParseResult {
        if let result = line.withContiguousStorageIfAvailable({ parse($0) }) { return result }
        return Array(line).withUnsafeBufferPointer { parse($0) }
    }

    public static func parse(_ line: String) -> RequestParseResult {
        var line = line
        return line.withUTF8 { parse($0) }
    }
}

/// A request, or why the line is not one.
public enum RequestParseResult: Sendable, Equatable {
    case request(Request)
    case failure(RequestFailure)
}
