// The byte-level grammar shared by requests and responses (PROTOCOL.md,
// "Framing"): character classes, UTF-8 validation, and the scanner for
// `*(SP KEY "=" VALUE)`. Everything works on an UnsafeBufferPointer over the
// line so the hot path does no generic dispatch and no copying; Strings are
// made only for the tokens a message keeps.

enum ASCII {
    static let space = UInt8(ascii: " ")
    static let quote = UInt8(ascii: "\"")
    static let equals = UInt8(ascii: "=")
    static let backslash = UInt8(ascii: "\\")
    static let star = UInt8(ascii: "*")
}

enum Grammar {
    /// The longest TAG, VERB or KEY.
    static let maximumTokenLength = 32

    /// TAG characters: `A-Z a-z 0-9 . _ -`.
    @inline(__always)
    static func isTagByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    /// VERB and KEY: `[a-z][a-z0-9-]*`.
    @inline(__always)
    static func isNameByte(_ b: UInt8, first: Bool) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return true
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"): return !first
        default: return false
        }
    }

    /// U+0000..U+001F and U+007F.
    @inline(__always)
    static func isControl(_ b: UInt8) -> Bool { b < 0x20 || b == 0x7F }

    /// Bytes allowed in a bare VALUE: none of space, `"`, `=`, or a control.
    @inline(__always)
    static func isBareValueByte(_ b: UInt8) -> Bool {
        !(isControl(b) || b == ASCII.space || b == ASCII.quote || b == ASCII.equals)
    }

    /// Whether any of the eight bytes in `word` is a control, space, `"`,
    /// `=` or `\` (a value holding one is quoted). Bit tricks: x has a zero
    /// byte iff (x - 0x01..) & ~x & 0x80.. != 0; a byte below n (n <= 0x80)
    /// likewise with n in place of 0x01. Both are exact about existence.
    /// Why words: a bare value (a context id, a domain state) is scanned in
    /// 223 instructions instead of 651 bytewise (callgrind, -O, the values
    /// of a can-evaluate and its reply; docs/perf-notes/2026-12-03-grammar-words.md),
    /// on every request and every reply value the LineWriter quotes.
    @inline(__always)
    static func hasNonBareByte(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func below(_ x: UInt64, _ n: UInt64) -> UInt64 { (x &- ones &* n) & ~x & high }
        @inline(__always) func has(_ byte: UInt8) -> UInt64 { below(word ^ (ones &* UInt64(byte)), 1) }
        return below(word, 0x21) | has(0x7F) | has(ASCII.quote) | has(ASCII.equals) | has(ASCII.backslash) != 0
    }

    /// A TAG as a whole.
    static func isValidTag(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard (1...maximumTokenLength).contains(bytes.count) else { return false }
        for b in bytes where !isTagByte(b) { return false }
        return true
    }

    /// A VERB or KEY as a whole.
    static func isValidName(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard (1...maximumTokenLength).contains(bytes.count) else { return false }
        for (i, b) in bytes.enumerated() where !isNameByte(b, first: i == 0) { return false }
        return true
    }

    static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// Whether two ranges of `bytes` hold the same bytes.
    @inline(__always)
    static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ a: Range<Int>, _ b: Range<Int>) -> Bool {
        equal(UnsafeBufferPointer(rebasing: bytes[a]), UnsafeBufferPointer(rebasing: bytes[b]))
    }

    /// Byte equality, eight bytes at a time (the generic `elementsEqual`
    /// goes byte by byte through an iterator): 171 instructions against 199
    /// for the verbs and keys of a request (callgrind, -O;
    /// docs/perf-notes/2026-12-03-grammar-words.md), a small gain kept
    /// because every key of every request is compared with the table's.
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard let x = a.baseAddress, let y = b.baseAddress else { return true }
        let p = UnsafeRawPointer(x), q = UnsafeRawPointer(y)
        var i = 0
        while i + 8 <= a.count {
            if p.loadUnaligned(fromByteOffset: i, as: UInt64.self) != q.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
                return false
            }
            i += 8
        }
        while i < a.count {
            if x[i] != y[i] { return false }
            i += 1
        }
        return true
    }
}

/// What the whole-line check found.
enum TextCheck: Equatable {
    case valid
    case nul(at: Int)
    case invalidUTF8(at: Int)
}

extension Grammar {
    /// Checks that `bytes` are well-formed UTF-8 (Unicode 15, table 3-7: no
    /// overlongs, no surrogates, nothing above U+10FFFF, no truncated
    /// sequence) and hold no NUL. ASCII runs are skipped eight bytes at a
    /// time: a request line of ~75 bytes is checked in 328 instructions
    /// instead of 964 bytewise (callgrind, -O, three usual lines;
    /// docs/perf-notes/2026-12-03-grammar-words.md).
    static func checkText(_ bytes: UnsafeBufferPointer<UInt8>) -> TextCheck {
        let count = bytes.count
        var i = 0
        guard let base = bytes.baseAddress else { return .valid }
        let raw = UnsafeRawPointer(base)
        while i < count {
            // Fast path: eight ASCII bytes, none of them NUL.
            if i + 8 <= count {
                let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let highBits: UInt64 = 0x8080_8080_8080_8080
                let lowBits: UInt64 = 0x0101_0101_0101_0101
                let hasZeroByte = (word &- lowBits) & ~word & highBits
                if word & highBits == 0 && hasZeroByte == 0 {
                    i += 8
                    continue
                }
            }
            let b0 = bytes[i]
            if b0 < 0x80 {
                if b0 == 0 { return .nul(at: i) }
                i += 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch b0 {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return .invalidUTF8(at: i)
            }
            guard i + length <= count else { return .invalidUTF8(at: i) }
            let b1 = bytes[i + 1]
            guard b1 >= low && b1 <= high else { return .invalidUTF8(at: i) }
            for k in 2..<length where bytes[i + k] & 0xC0 != 0x80 { return .invalidUTF8(at: i) }
            i += length
        }
        return .valid
    }
}

/// Where one `KEY=VALUE` sits in a line: byte ranges, nothing copied.
/// `value` excludes the quotes of a quoted value; `escaped` says it holds
/// backslash escapes (already checked) that `ArgumentScanner.value` undoes.
public struct ArgumentSpan: Sendable, Equatable {
    public var key: Range<Int>
    public var value: Range<Int>
    public var escaped: Bool
}

/// The argument spans of one line, in wire order, in storage that is reused
/// from line to line: emptying is setting the count (an array's
/// `removeAll(keepingCapacity:)` is a generic call per line).
public struct ArgumentSpans: RandomAccessCollection {
    private var storage: [ArgumentSpan] = []
    public private(set) var endIndex = 0

    public init() {}

    public var startIndex: Int { 0 }
    public subscript(position: Int) -> ArgumentSpan {
        precondition(position < endIndex, "span index out of range")
        return storage[position]
    }

    mutating func removeAll() { endIndex = 0 }

    mutating func append(_ span: ArgumentSpan) {
        if endIndex < storage.count { storage[endIndex] = span } else { storage.append(span) }
        endIndex += 1
    }
}

/// Reads `*(SP KEY "=" VALUE)` from a line, after the part before it.
struct ArgumentScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index: Int

    /// Parses arguments up to the end of the line. Errors: `bad-syntax` for
    /// the grammar, `bad-argument` for a repeated key or too many arguments.
    mutating func scanArguments() throws(ProtocolError) -> Arguments {
        var spans = ArgumentSpans()
        try scanSpans(into: &spans)
        return ArgumentScanner.arguments(spans, in: bytes)
    }

    /// The arguments as Strings (values unescaped).
    static func arguments(_ spans: ArgumentSpans, in bytes: UnsafeBufferPointer<UInt8>) -> Arguments {
        var arguments = Arguments()
        // One allocation for the usual handful of pairs, not a regrowth per pair.
        arguments.storage.reserveCapacity(max(4, spans.count))
        for span in spans {
            arguments.storage.append(Argument(key: Grammar.string(bytes, span.key), value: value(span, in: bytes)))
        }
        return arguments
    }

    /// A value as a String, escapes undone.
    static func value(_ span: ArgumentSpan, in bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard span.escaped else { return Grammar.string(bytes, span.value) }
        return String(unsafeUninitializedCapacity: span.value.count) { unescape(span, in: bytes, into: $0) }
    }

    /// A secret's value (S-50), escapes undone: from the line's bytes
    /// straight into wipeable memory, through no String or array.
    static func secretValue(_ span: ArgumentSpan, in bytes: UnsafeBufferPointer<UInt8>) -> SecretBytes {
        guard span.escaped else { return SecretBytes(UnsafeBufferPointer(rebasing: bytes[span.value])) }
        return SecretBytes(capacity: span.value.count) { unescape(span, in: bytes, into: $0) }
    }

    /// Writes the value of `span` with its escapes undone into `out` (room
    /// for the escaped length at least); returns the bytes written.
    private static func unescape(_ span: ArgumentSpan, in bytes: UnsafeBufferPointer<UInt8>,
                                 into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var written = 0
        var index = span.value.lowerBound
        while index < span.value.upperBound {
            let b = bytes[index]
            guard b == ASCII.backslash else {
                out[written] = b
                written += 1
                index += 1
                continue
            }
            switch bytes[index + 1] {
            case UInt8(ascii: "n"): out[written] = UInt8(ascii: "\n")
            case UInt8(ascii: "r"): out[written] = UInt8(ascii: "\r")
            case UInt8(ascii: "t"): out[written] = UInt8(ascii: "\t")
            case let other: out[written] = other  // \\ and \" (the scan allowed nothing else)
            }
            written += 1
            index += 2
        }
        return written
    }

    /// Checks the arguments up to the end of the line and appends where each
    /// sits to `spans` (emptied first), making no String.
    mutating func scanSpans(into spans: inout ArgumentSpans) throws(ProtocolError) {
        spans.removeAll()
        while index < bytes.count {
            guard bytes[index] == ASCII.space else {
                throw ProtocolError(.badSyntax, "Expected a space at byte \(index + 1).")
            }
            index += 1
            let keyStart = index
            while index < bytes.count, bytes[index] != ASCII.equals, bytes[index] != ASCII.space {
                index += 1
            }
            let keyRange = keyStart..<index
            guard keyRange.count > 0 else {
                throw ProtocolError(.badSyntax, "Expected KEY=VALUE at byte \(keyStart + 1).")
            }
            guard Grammar.isValidName(UnsafeBufferPointer(rebasing: bytes[keyRange])) else {
                throw ProtocolError(
                    .badSyntax, "Bad key at byte \(keyStart + 1): keys are [a-z][a-z0-9-]*, at most 32 characters.")
            }
            guard index < bytes.count, bytes[index] == ASCII.equals else {
                throw ProtocolError(.badSyntax, "Expected '=' after the key at byte \(keyStart + 1).")
            }
            index += 1
            let (value, escaped) = try scanValue()
            if spans.count >= Arguments.maximumCount {
                throw ProtocolError(.badArgument, "Too many arguments (at most \(Arguments.maximumCount)).")
            }
            for earlier in spans where Grammar.equal(bytes, earlier.key, keyRange) {
                throw ProtocolError(.badArgument, "The key '\(Grammar.string(bytes, keyRange))' appears more than once.")
            }
            spans.append(ArgumentSpan(key: keyRange, value: value, escaped: escaped))
        }
    }

    /// A bare or quoted VALUE; `index` is just after the `=`.
    private mutating func scanValue() throws(ProtocolError) -> (Range<Int>, escaped: Bool) {
        if index < bytes.count, bytes[index] == ASCII.quote { return try scanQuotedValue() }
        let start = index
        // A local cursor (scanning through `self.index` stored every step).
        // Whole words of bare bytes are skipped eight at a time; the word
        // holding the end (a space) or a bad byte is then scanned bytewise.
        var end = start
        let count = bytes.count
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while end + 8 <= count, !Grammar.hasNonBareByte(raw.loadUnaligned(fromByteOffset: end, as: UInt64.self)) {
                end += 8
            }
        }
        while end < count, bytes[end] != ASCII.space {
            guard Grammar.isBareValueByte(bytes[end]) else {
                index = end
                throw ProtocolError(
                    .badSyntax,
                    "Bad character in the value at byte \(end + 1): quote values that hold spaces, '\"', '=' or control characters.")
            }
            end += 1
        }
        index = end
        guard index > start else {
            throw ProtocolError(.badSyntax, "Empty value at byte \(start + 1): write \"\" for an empty value.")
        }
        return (start..<index, false)
    }

    private mutating func scanQuotedValue() throws(ProtocolError) -> (Range<Int>, escaped: Bool) {
        let open = index
        index += 1
        let start = index
        var escaped = false
        while true {
            guard index < bytes.count else {
                throw ProtocolError(.badSyntax, "Unterminated quoted value starting at byte \(open + 1).")
            }
            let b = bytes[index]
            if b == ASCII.quote { break }
            if Grammar.isControl(b) {
                throw ProtocolError(
                    .badSyntax, "Raw control character in a quoted value at byte \(index + 1): use \\n, \\r or \\t.")
            }
            if b == ASCII.backslash {
                guard index + 1 < bytes.count else {
                    throw ProtocolError(.badSyntax, "Unterminated quoted value starting at byte \(open + 1).")
                }
                switch bytes[index + 1] {
                case ASCII.backslash, ASCII.quote, UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    escaped = true
                default:
                    throw ProtocolError(
                        .badSyntax, "Unknown escape at byte \(index + 1): only \\\\ \\\" \\n \\r \\t are allowed.")
                }
                index += 2
                continue
            }
            index += 1
        }
        let end = index
        index += 1  // the closing quote
        guard index == bytes.count || bytes[index] == ASCII.space else {
            throw ProtocolError(.badSyntax, "Expected a space after the quoted value at byte \(index + 1).")
        }
        return (start..<end, escaped)
    }
}
