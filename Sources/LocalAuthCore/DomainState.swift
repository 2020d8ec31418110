// S-10's domain state: the opaque token that changes whenever a user's
// enrolled templates change. The daemon makes it from 16 random bytes as 32
// hex digits; it is kept here inline (up to 32 bytes of text, no heap), so
// that copying it, which every successful biometric check does several
// times (rule, reply, the context it is handed to), costs no atomic
// reference counting. Longer text is not a domain state: the codecs refuse
// it as corrupt.

public struct DomainState: Sendable, Hashable, CustomStringConvertible {
    public static let capacity = 32

    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var count: UInt8 = 0

    /// "": never enrolled.
    public init() {}

    /// nil when `text` has more than `capacity` UTF-8 bytes.
    public init?(_ text: String) {
        var text = text
        let fits: Bool = text.withUTF8 { utf8 in
            guard utf8.count <= DomainState.capacity else { return false }
            count = UInt8(utf8.count)
            withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(utf8)) }
            return true
        }
        if !fits { return nil }
    }

    public var isEmpty: Bool { count == 0 }

    /// The token as text (its wire and storage form).
    public var description: String {
        withUnsafeBytes(of: words) { String(decoding: $0.prefix(Int(count)), as: UTF8.self) }
    }

    /// The token's UTF-8 bytes, lent to `body`.
    public func withUTF8<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        withUnsafeBytes(of: words) { body(UnsafeRawBufferPointer(rebasing: $0.prefix(Int(count)))) }
    }

    public static func == (a: DomainState, b: DomainState) -> Bool {
        a.count == b.count && a.words == b.words
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}

extension DomainState: ExpressibleByStringLiteral, ExpressibleByStringInterpolation {
    /// Tests and constants; a literal longer than `capacity` is a programming error.
    public init(stringLiteral text: String) {
        guard let state = DomainState(text) else { preconditionFailure("a domain state is at most \(DomainState.capacity) bytes: \(text)") }
        self = state
    }
}
