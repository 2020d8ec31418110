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
    /// S-50: the values of `Verb.secretKeys` when the line was scanned with
    /// its secrets apart (`RequestScanner.requestWithSecretsApart`, the
    /// server's); `arguments` then holds those keys, in their place, with
    /// empty values. Empty for a request of Strings (`Request.parse`).
    public var secrets: RequestSecrets

    public init(tag: String, verb: String, arguments: Arguments = Arguments(), secrets: RequestSecrets = RequestSecrets()) {
        self.tag = tag
        self.verb = verb
        self.arguments = arguments
        self.secrets = secrets
    }

    /// The value of a secret key as bytes: the one held apart, or (a request
    /// of Strings, e.g. a test's) made from its String; nil when absent.
    public func secret(_ key: String) -> SecretBytes? {
        if let held = secrets.value(for: key) { return held }
        return arguments.value(for: key).map { SecretBytes($0) }
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

/// The secret values of one request, in wire order (a line holds at most
/// two: `Verb.secretKeys`).
public struct RequestSecrets: Sendable, Equatable {
    private var storage: [(key: String, value: SecretBytes)] = []

    public init() {}

    public var isEmpty: Bool { storage.isEmpty }
    public var keys: [String] { storage.map(\.key) }

    public func value(for key: String) -> SecretBytes? {
        for entry in storage where entry.key == key { return entry.value }
        return nil
    }

    mutating func append(_ key: String, _ value: SecretBytes) { storage.append((key, value)) }

    /// Same keys and bytes, in order (for tests: not a constant-time check).
    public static func == (lhs: RequestSecrets, rhs: RequestSecrets) -> Bool {
        lhs.storage.count == rhs.storage.count
            && zip(lhs.storage, rhs.storage).allSatisfy { $0.key == $1.key && $0.value.sameBytes(as: $1.value) }
    }
}
