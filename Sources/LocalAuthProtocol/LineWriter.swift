// Writing protocol lines into a reusable byte buffer. The server keeps one
// `LineWriter` per connection, appends replies, hands `bytes` to write(2) and
// drops what was written; nothing here allocates once the buffer has grown.
//
// Values are quoted exactly when a bare value could not carry them: empty, or
// holding a space, `"`, `=`, `\` or a control character. Inside quotes `\`,
// `"`, LF, CR and TAB are escaped; the other control characters
// (U+0000..U+001F, U+007F) have no representation on the wire and are
// dropped. Tags, verbs, statuses and keys are the caller's (constants or
// already validated) and are written as given.

public struct LineWriter: Sendable {
    /// Complete lines, LF-terminated, not yet sent.
    public var bytes: [UInt8]

    public init(capacity: Int = 0) {
        bytes = []
        // Even reserveCapacity(0) allocates: the server makes a writer per reply.
        if capacity > 0 { bytes.reserveCapacity(capacity) }
    }

    /// Drops the first `count` bytes (those write(2) took), keeping capacity.
    public mutating func removeFirst(_ count: Int) {
        if count == bytes.count {
            bytes.removeAll(keepingCapacity: true)
        } else {
            bytes.removeSubrange(0..<count)
        }
    }

    // MARK: Lines piece by piece: begin, append arguments, end.

    /// Starts `TAG STATUS`. Follow with `append(key:value:)` calls and `endLine()`.
    public mutating func beginResponse(tag: String, status: Response.Status) {
        appendRaw(tag)
        bytes.append(ASCII.space)
        appendRaw(status.rawValue)
    }

    /// Starts `TAG STATUS` with the tag's bytes as the request had them
    /// (already checked by `RequestScanner`).
    public mutating func beginResponse(tag: UnsafeBufferPointer<UInt8>, status: Response.Status) {
        bytes.append(contentsOf: tag)
        bytes.append(ASCII.space)
        appendRaw(status.rawValue)
    }

    /// Starts `TAG VERB` (clients).
    public mutating func beginRequest(tag: String, verb: String) {
        appendRaw(tag)
        bytes.append(ASCII.space)
        appendRaw(verb)
    }

    /// Appends ` KEY=VALUE`, quoting the value when needed.
    public mutating func append(key: String, value: String) {
        bytes.append(ASCII.space)
        appendRaw(key)
        bytes.append(ASCII.equals)
        appendValue(value)
    }

    /// Appends ` KEY=B64`, the standard base64 of `secret`, encoded straight
    /// into the line (S-50: no String of it); quoted when it ends in `=`,
    /// as `append(key:value:)` would write the same text.
    public mutating func append(key: String, base64Of secret: some Collection<UInt8>) {
        bytes.append(ASCII.space)
        appendRaw(key)
        bytes.append(ASCII.equals)
        let quoted = secret.isEmpty || secret.count % 3 != 0
        bytes.reserveCapacity(bytes.count + Base64.encodedCount(secret.count) + 3)
        if quoted { bytes.append(ASCII.quote) }
        Base64.encode(secret, appendingTo: &bytes)
        if quoted { bytes.append(ASCII.quote) }
    }

    /// Appends ` KEY="..."`, the secret's UTF-8 bytes quoted and escaped
    /// straight into the line (S-50: no String of it). The caller checked
    /// that they are UTF-8 text without a control character other than
    /// TAB, LF, CR (any other is dropped, as for every quoted value).
    public mutating func append(key: String, quotedSecret secret: UnsafeRawBufferPointer) {
        bytes.append(ASCII.space)
        appendRaw(key)
        bytes.append(ASCII.equals)
        bytes.append(ASCII.quote)
        appendQuotedBody(UnsafeBufferPointer(start: secret.baseAddress?.assumingMemoryBound(to: UInt8.self), count: secret.count))
        bytes.append(ASCII.quote)
    }

    /// Appends ` KEY=N` in decimal.
    public mutating func append(key: String, value: Int) {
        bytes.append(ASCII.space)
        appendRaw(key)
        bytes.append(ASCII.equals)
        appendDecimal(value)
    }

    /// Appends ` KEY=true` or ` KEY=false`.
    public mutating func append(key: String, value: Bool) {
        bytes.append(ASCII.space)
        appendRaw(key)
        bytes.append(ASCII.equals)
        appendRaw(value ? "true" : "false")
    }

    public mutating func append(_ arguments: Arguments) {
        for argument in arguments { append(key: argument.key, value: argument.value) }
    }

    public mutating func endLine() { bytes.append(UInt8(ascii: "\n")) }

    // MARK: Whole lines.

    public mutating func append(_ response: Response) {
        beginResponse(tag: response.tag, status: response.status)
        append(response.arguments)
        endLine()
    }

    public mutating func append(_ request: Request) {
        beginRequest(tag: request.tag, verb: request.verb)
        append(request.arguments)
        endLine()
    }

    /// `TAG OK` and a line end.
    public mutating func appendOK(tag: String) {
        beginResponse(tag: tag, status: .ok)
        endLine()
    }

    /// `TAG ERR domain=protocol name=NAME message="..."` and a line end.
    public mutating func appendProtocolError(tag: String, _ error: ProtocolError) {
        beginResponse(tag: tag, status: .err)
        append(key: "domain", value: "protocol")
        append(key: "name", value: error.name.rawValue)
        append(key: "message", value: error.message)
        endLine()
    }

    /// The answer to a line that did not parse, tagged `*` when it had no tag.
    public mutating func append(_ failure: RequestFailure) {
        appendProtocolError(tag: failure.replyTag, failure.error)
    }

    /// Starts `TAG ERR domain=la code=N name=NAME message="..."`; the caller
    /// may add `biometry=`, `retry-after=`, `reason=` and must call `endLine()`.
    public mutating func beginLAError(tag: String, code: Int, name: String, message: String) {
        beginResponse(tag: tag, status: .err)
        append(key: "domain", value: "la")
        append(key: "code", value: code)
        append(key: "name", value: name)
        append(key: "message", value: message)
    }

    /// `* BYE reason=REASON` and a line end (`shutdown`, `limit`, `protocol`).
    public mutating func appendBye(reason: String) {
        beginResponse(tag: "*", status: .bye)
        append(key: "reason", value: reason)
        endLine()
    }

    // MARK: Bytes.

    private mutating func appendRaw(_ text: String) {
        // One bulk copy of the UTF-8 (small strings from the stack, native
        // ones in place); `utf8.withContiguousStorageIfAvailable` costs
        // ~150 instructions of generic dispatch per call, `withUTF8` a few.
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// Appends a VALUE alone (after a key the caller wrote), quoted when needed.
    public mutating func append(value: String) { appendValue(value) }

    private mutating func appendValue(_ value: String) {
        // One `withUTF8` for the check and the copy (each of
        // `utf8.withContiguousStorageIfAvailable` and `withUTF8` on a
        // shared string costs more than scanning a token).
        var value = value
        value.withUTF8 { utf8 in
            if !utf8.isEmpty, !LineWriter.containsNonBareByte(utf8) {
                bytes.append(contentsOf: utf8)
                return
            }
            bytes.append(ASCII.quote)
            appendQuotedBody(utf8)
            bytes.append(ASCII.quote)
        }
    }

    /// The inside of a quoted value: runs of plain bytes copied in bulk,
    /// escapes written, other control characters dropped.
    private mutating func appendQuotedBody(_ utf8: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        for i in 0..<utf8.count {
            let b = utf8[i]
            let escaped: UInt8
            switch b {
            case ASCII.backslash, ASCII.quote: escaped = b
            case UInt8(ascii: "\n"): escaped = UInt8(ascii: "n")
            case UInt8(ascii: "\r"): escaped = UInt8(ascii: "r")
            case UInt8(ascii: "\t"): escaped = UInt8(ascii: "t")
            default:
                if !Grammar.isControl(b) { continue }
                escaped = 0  // dropped
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i]))
            if escaped != 0 {
                bytes.append(ASCII.backslash)
                bytes.append(escaped)
            }
            runStart = i + 1
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
    }

    @inline(__always)
    private static func isNonBareByte(_ b: UInt8) -> Bool { !Grammar.isBareValueByte(b) || b == ASCII.backslash }

    /// Eight bytes at a time (values such as domain-state tokens are long),
    /// then the tail byte by byte.
    private static func containsNonBareByte(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        if let base = utf8.baseAddress {
            let raw = UnsafeRawPointer(base)
            while i + 8 <= utf8.count {
                if Grammar.hasNonBareByte(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { return true }
                i += 8
            }
        }
        while i < utf8.count {
            if isNonBareByte(utf8[i]) { return true }
            i += 1
        }
        return false
    }

    private mutating func appendDecimal(_ value: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        // Digits of the magnitude, in a fixed stack buffer; handles Int.min.
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes >= 20 digits
        let count = withUnsafeMutableBytes(of: &digits) { buffer -> Int in
            var n = 0
            repeat {
                buffer[buffer.count - 1 - n] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                n += 1
            } while magnitude > 0
            return n
        }
        withUnsafeBytes(of: &digits) { buffer in
            bytes.append(contentsOf: buffer[(buffer.count - count)...])
        }
    }
}
