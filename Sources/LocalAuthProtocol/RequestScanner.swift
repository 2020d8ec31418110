// A request line parsed in place: where the tag, the verb and each argument
// sit in the caller's bytes, checked against the whole grammar, with no
// String made. `Request.parse` is this plus `request`; the server keeps one
// scanner (its span buffer is reused) for every line that is not the usual
// can-evaluate (`CanEvaluateLine` takes those).

/// Scans request lines; reusable (no allocation once its buffer has grown).
public struct RequestScanner {
    /// The line scanned last. Valid only while the caller's buffer is: use
    /// the scanner's results before the next `scan` and before that buffer
    /// changes.
    public private(set) var bytes = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    public private(set) var tag: Range<Int> = 0..<0
    public private(set) var verb: Range<Int> = 0..<0
    public private(set) var arguments = ArgumentSpans()

    public init() {}

    /// Checks one line (without its LF); nil when it is a request, else why
    /// not, with the same tag and error `Request.parse` gives:
    ///   - empty line, or a first word that is not a valid TAG -> tag nil (`*`), bad-syntax;
    ///   - a valid TAG, then invalid UTF-8 or a NUL anywhere -> that tag, bad-syntax;
    ///   - a valid TAG, then a malformed VERB, KEY, VALUE or spacing -> that tag, bad-syntax;
    ///   - a repeated key, or more than `Arguments.maximumCount` -> that tag, bad-argument.
    public mutating func scan(_ line: UnsafeBufferPointer<UInt8>) -> RequestFailure? {
        bytes = line
        tag = 0..<0
        verb = 0..<0
        arguments.removeAll()
        guard !line.isEmpty else {
            return RequestFailure(tag: nil, error: ProtocolError(.badSyntax, "Empty line."))
        }
        var index = 0
        while index < line.count, line[index] != ASCII.space { index += 1 }
        guard Grammar.isValidTag(UnsafeBufferPointer(rebasing: line[0..<index])) else {
            return RequestFailure(
                tag: nil,
                error: ProtocolError(
                    .badSyntax, "Bad tag: a tag is 1 to 32 characters of A-Z a-z 0-9 . _ -, then a space and a verb."))
        }
        tag = 0..<index
        switch Grammar.checkText(line) {
        case .valid: break
        case .nul(let at): return failure(ProtocolError(.badSyntax, "NUL byte at byte \(at + 1)."))
        case .invalidUTF8(let at): return failure(ProtocolError(.badSyntax, "Invalid UTF-8 at byte \(at + 1)."))
        }
        guard index < line.count else { return failure(ProtocolError(.badSyntax, "Missing verb after the tag.")) }
        index += 1
        let verbStart = index
        while index < line.count, line[index] != ASCII.space { index += 1 }
        guard Grammar.isValidName(UnsafeBufferPointer(rebasing: line[verbStart..<index])) else {
            return failure(ProtocolError(.badSyntax, "Bad verb: verbs are [a-z][a-z0-9-]*, at most 32 characters."))
        }
        verb = verbStart..<index
        var scanner = ArgumentScanner(bytes: line, index: index)
        do throws(ProtocolError) {
            try scanner.scanSpans(into: &arguments)
        } catch {
            arguments.removeAll()  // a failed line has no arguments, not the ones before its error
            return failure(error)
        }
        return nil
    }

    private func failure(_ error: ProtocolError) -> RequestFailure {
        RequestFailure(tag: tagString, error: error)
    }

    /// The tag as a String.
    public var tagString: String { Grammar.string(bytes, tag) }

    /// The request with Strings, as `Request.parse` returns it.
    public var request: Request {
        Request(tag: tagString, verb: Grammar.string(bytes, verb), arguments: ArgumentScanner.arguments(arguments, in: bytes))
    }

    /// The request as the server takes it (S-50): the values of
    /// `Verb.secretKeys` go from the line's bytes straight into
    /// `SecretBytes` (`Request.secrets`), never into a String; `arguments`
    /// keeps their keys, in wire order, with empty values, so the verb
    /// table's key checks and their errors are the same as for `request`.
    public var requestWithSecretsApart: Request {
        var values = Arguments()
        values.storage.reserveCapacity(max(4, arguments.count))
        var secrets = RequestSecrets()
        for span in arguments {
            let key = Grammar.string(bytes, span.key)
            if RequestScanner.isSecretKey(UnsafeBufferPointer(rebasing: bytes[span.key])) {
                secrets.append(key, ArgumentScanner.secretValue(span, in: bytes))
                values.storage.append(Argument(key: key, value: ""))
            } else {
                values.storage.append(Argument(key: key, value: ArgumentScanner.value(span, in: bytes)))
            }
        }
        return Request(tag: tagString, verb: Grammar.string(bytes, verb), arguments: values, secrets: secrets)
    }

    /// Whether a key's bytes spell one of `Verb.secretKeys` (compared as
    /// bytes: every argument of every line that is not the usual
    /// can-evaluate passes here, `policy=` as long as `secret=`).
    private static func isSecretKey(_ key: UnsafeBufferPointer<UInt8>) -> Bool {
        for name in secretKeyBytes where name.count == key.count {
            if name.withUnsafeBufferPointer({ Grammar.equal($0, key) }) { return true }
        }
        return false
    }

    private static let secretKeyBytes: [[UInt8]] = Verb.secretKeys.map { Array($0.utf8) }
}
