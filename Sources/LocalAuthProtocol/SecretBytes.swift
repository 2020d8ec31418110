// S-50: a secret's bytes in memory of their own, wiped when the last
// reference goes. A request's secrets (`Request.secretKeys`) are decoded from
// the line's bytes straight into one (RequestScanner), and the daemon hands
// that on to its passcode workers, yescrypt and the right store: a Swift
// String cannot be wiped, and an array, once shared, copies on write and
// wipes the copy.
//
// Here, not in LocalAuthSystem beside SecretMemory, because the protocol
// makes them and cannot see the system layer (the module graph: the codec is
// pure). So the wipe is Swift's own: zeroing stores in a function the
// optimizer may neither inline nor reason about (`@_optimize(none)`), so they
// cannot be dropped as dead before the memory is freed — explicit_bzero's
// promise, without Glibc. SecretMemoryScanTests checks the result in the
// running daemon.

/// A secret's bytes, wiped when the last reference goes. Immutable, so Sendable.
public final class SecretBytes: @unchecked Sendable, CustomStringConvertible {
    private let storage: UnsafeMutableRawBufferPointer
    public let count: Int

    public init(_ text: some StringProtocol) {
        let utf8 = text.utf8
        storage = .allocate(byteCount: max(1, utf8.count), alignment: 1)
        var index = 0
        for byte in utf8 {
            storage[index] = byte
            index += 1
        }
        count = utf8.count
    }

    /// A copy of `bytes` (the caller wipes its own, if it must).
    public init(_ bytes: UnsafeBufferPointer<UInt8>) {
        storage = .allocate(byteCount: max(1, bytes.count), alignment: 1)
        if let base = bytes.baseAddress { storage.baseAddress!.copyMemory(from: base, byteCount: bytes.count) }
        count = bytes.count
    }

    /// At most `capacity` bytes written by `fill`, which returns how many it
    /// wrote: a value decoded in place, with no copy on the way.
    init(capacity: Int, _ fill: (UnsafeMutableBufferPointer<UInt8>) -> Int) {
        storage = .allocate(byteCount: max(1, capacity), alignment: 1)
        let written = fill(storage.bindMemory(to: UInt8.self))
        precondition(written <= capacity, "a secret's value outgrew its buffer")
        count = written
    }

    /// The bytes, for as long as `body` runs.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        try body(UnsafeBufferPointer(start: storage.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count))
    }

    /// A copy as an array that only the caller holds: the caller wipes it
    /// (`SecretMemory.wipe`) once done.
    public func copy() -> [UInt8] { Array(storage.prefix(count)) }

    /// Same bytes (not in constant time: for tests and the parser's
    /// equality, never to check a secret).
    func sameBytes(as other: SecretBytes) -> Bool {
        count == other.count && withUnsafeBytes { a in other.withUnsafeBytes { b in Grammar.equal(a, b) } }
    }

    /// Never the bytes, nor their count (a log line or a crash report must not carry them).
    public var description: String { "SecretBytes(…)" }

    deinit {
        SecretBytes.wipe(storage)
        storage.deallocate()
    }

    /// Zeroes `bytes`; not optimized, so the stores stay (see the top of the file).
    @_optimize(none)
    static func wipe(_ bytes: UnsafeMutableRawBufferPointer) {
        var index = 0
        while index < bytes.count {
            bytes[index] = 0
            index += 1
        }
    }
}
