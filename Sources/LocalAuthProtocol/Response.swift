// A daemon's reply line as a client reads it: `TAG SP STATUS *(SP KEY "=" VALUE)`,
// with the same value grammar as requests. The tag may be `*` (messages not
// tied to a request, such as `* BYE reason=shutdown`).

/// A parsed reply.
public struct Response: Sendable, Equatable {
    public enum Status: String, Sendable, CaseIterable, Hashable {
        case ok = "OK"
        case err = "ERR"
        case prompt = "PROMPT"
        /// Only as `* BYE reason=...` before the daemon closes.
        case bye = "BYE"
        /// Version 1.1: a `watch`'s state line, on the watch's tag (not final).
        case state = "STATE"
        /// Version 1.3: one of `right-list`'s rights, on its tag (not final).
        case right = "RIGHT"
        /// Version 1.3: a session agent's request ended, on its
        /// `register-agent` tag (not final).
        case done = "DONE"
    }

    /// The request's tag, or `*`.
    public var tag: String
    public var status: Status
    public var arguments: Arguments

    public init(tag: String, status: Status, arguments: Arguments = Arguments()) {
        self.tag = tag
        self.status = status
        self.arguments = arguments
    }

    /// OK and ERR end a request; PROMPT does not.
    public var isFinal: Bool { status == .ok || status == .err }

    /// For ERR: the `domain=` (`la`, `protocol`, or v1.3's `sec`).
    public var errorDomain: String? { arguments.value(for: "domain") }
    /// For ERR: the `name=` (an LAError name or a `ProtocolErrorName` wire name).
    public var errorName: String? { arguments.value(for: "name") }
    /// For `ERR domain=la` and `domain=sec`: the numeric `code=`.
    public var errorCode: Int? { arguments.value(for: "code").flatMap { Int($0) } }
    public var message: String? { arguments.value(for: "message") }

    /// Parses one line (without its LF). Errors are `bad-syntax`, or
    /// `bad-argument` for a repeated key.
    public static func parse(_ line: UnsafeBufferPointer<UInt8>) throws(ProtocolError) -> Response {
        switch Grammar.checkText(line) {
        case .valid: break
        case .nul(let at): throw ProtocolError(.badSyntax, "NUL byte at byte \(at + 1).")
        case .invalidUTF8(let at): throw ProtocolError(.badSyntax, "Invalid UTF-8 at byte \(at + 1).")
        }
        var index = 0
        while index < line.count, line[index] != ASCII.space { index += 1 }
        let tagBytes = UnsafeBufferPointer(rebasing: line[0..<index])
        guard (tagBytes.count == 1 && tagBytes[0] == ASCII.star) || Grammar.isValidTag(tagBytes) else {
            throw ProtocolError(.badSyntax, "Bad tag in reply.")
        }
        guard index < line.count else { throw ProtocolError(.badSyntax, "Missing status in reply.") }
        index += 1
        let statusStart = index
        while index < line.count, line[index] != ASCII.space { index += 1 }
        guard let status = Status(rawValue: Grammar.string(line, statusStart..<index)) else {
            throw ProtocolError(.badSyntax, "Unknown status in reply: expected OK, ERR, PROMPT, BYE, STATE, RIGHT or DONE.")
        }
        var scanner = ArgumentScanner(bytes: line, index: index)
        let arguments = try scanner.scanArguments()
        return Response(tag: Grammar.string(line, 0..<tagBytes.count), status: status, arguments: arguments)
    }

    public static func parse(_ line: some Collection<UInt8>) throws(ProtocolError) -> Response {
        let result: Result<Response, ProtocolError>? = line.withContiguousStorageIfAvailable { buffer in
            do throws(ProtocolError) { return .success(try parse(buffer)) } catch { return .failure(error) }
        }
        if let result { return try result.get() }
        return try parse(Array(line))
    }

    public static func parse(_ line: String) throws(ProtocolError) -> Response {
        try parse(Array(line.utf8))
    }
}
