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
        do throws(RequestFailure) {
            return .request(try parseOrThrow(line))
        } catch {
            return .failure(error)
        }
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

    private static func parseOrThrow(_ bytes: UnsafeBufferPointer<UInt8>) throws(RequestFailure) -> Request {
        guard !bytes.isEmpty else {
            throw RequestFailure(tag: nil, error: ProtocolError(.badSyntax, "Empty line."))
        }
        var index = 0
        while index < bytes.count, bytes[index] != ASCII.space { index += 1 }
        guard Grammar.isValidTag(UnsafeBufferPointer(rebasing: bytes[0..<index])) else {
            throw RequestFailure(
                tag: nil,
                error: ProtocolError(
                    .badSyntax, "Bad tag: a tag is 1 to 32 characters of A-Z a-z 0-9 . _ -, then a space and a verb."))
        }
        let tag = Grammar.string(bytes, 0..<index)
        func failure(_ error: ProtocolError) -> RequestFailure { RequestFailure(tag: tag, error: error) }

        switch Grammar.checkText(bytes) {
        case .valid: break
        case .nul(let at): throw failure(ProtocolError(.badSyntax, "NUL byte at byte \(at + 1)."))
        case .invalidUTF8(let at): throw failure(ProtocolError(.badSyntax, "Invalid UTF-8 at byte \(at + 1)."))
        }
        guard index < bytes.count else { throw failure(ProtocolError(.badSyntax, "Missing verb after the tag.")) }
        index += 1
        let verbStart = index
        while index < bytes.count, bytes[index] != ASCII.space { index += 1 }
        guard Grammar.isValidName(UnsafeBufferPointer(rebasing: bytes[verbStart..<index])) else {
            throw failure(
                ProtocolError(.badSyntax, "Bad verb: verbs are [a-z][a-z0-9-]*, at most 32 characters."))
        }
        let verb = Grammar.string(bytes, verbStart..<index)
        var scanner = ArgumentScanner(bytes: bytes, index: index)
        do throws(ProtocolError) {
            return Request(tag: tag, verb: verb, arguments: try scanner.scanArguments())
        } catch {
            throw failure(error)
        }
    }
}

/// A request, or why the line is not one.
public enum RequestParseResult: Sendable, Equatable {
    case request(Request)
    case failure(RequestFailure)
}
