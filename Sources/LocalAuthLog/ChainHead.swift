// SHA-256 values and the hash chain of FORMAT.md (format version 2):
//   chain[0] = 32 zero bytes;
//   chain[n] = SHA-256(chain[f-1] || records f..n as on disk), where f is the
//   first seq of the segment that holds n; chain[f-1] is in its header.

import LocalAuthHex
import LocalAuthSystem

/// A SHA-256 value: a chain head, or a payload digest. Stored as raw bytes.
public struct ChainHead: Hashable, Sendable, CustomStringConvertible {
    var w0: UInt64 = 0, w1: UInt64 = 0, w2: UInt64 = 0, w3: UInt64 = 0

    /// chain[0]: the head before the first record.
    public static let zero = ChainHead()

    public init() {}

    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 32 else { return nil }
        let array = Array(bytes)
        self.init()
        withUnsafeMutableBytes(of: &self) { $0.copyBytes(from: array) }
    }

    init(digest: [UInt8]) {
        precondition(digest.count == 32)
        self.init()
        digest.withUnsafeBytes { source in withUnsafeMutableBytes(of: &self) { $0.copyMemory(from: source) } }
    }

    init(_ raw: UnsafeRawBufferPointer) {
        precondition(raw.count >= 32)
        self.init()
        withUnsafeMutableBytes(of: &self) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[0..<32])) }
    }

    /// From 64 hex digits (either case); nil otherwise.
    public init?(hex: String) {
        guard hex.utf8.count == 64, let bytes = Hex.bytes(hex.utf8) else { return nil }
        self.init(bytes: bytes)
    }

    public var bytes: [UInt8] { withUnsafeBytes(of: self) { Array($0) } }

    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    public var description: String { hex }
}

/// The chain of one segment (FORMAT.md "Hash chain"): SHA-256 fed the head
/// before the segment and then its records' bytes as they come. A value:
/// `head` reads chain[last record fed] from a copy, so the stream goes on.
/// Records may be fed one at a time or many at once (a writer's chunk, a
/// reader's run of checked records); the head is the same.
struct ChainStream: Sendable {
    /// chain[firstSeq - 1], the head the segment starts from.
    let before: ChainHead
    private var sha = SHA256.Stream()
    /// Whether any record was fed: the head of a segment without records is
    /// `before` itself, not a hash of it.
    private(set) var hasRecords = false

    init(before: ChainHead) {
        self.before = before
        withUnsafeBytes(of: before) { sha.update($0) }
    }

    /// Feeds whole records (one or more, exactly as on disk).
    mutating func append(_ records: UnsafeRawBufferPointer) {
        guard !records.isEmpty else { return }
        sha.update(records)
        hasRecords = true
    }

    /// chain[the last seq fed]; `before` when none was.
    var head: ChainHead {
        guard hasRecords else { return before }
        var head = ChainHead()
        withUnsafeMutableBytes(of: &head) { sha.digest(into: $0) }
        return head
    }
}

/// SHA-256 of one buffer, as a ChainHead (a snapshot's payload digest).
enum PayloadDigest {
    static func of(_ bytes: UnsafeRawBufferPointer) -> ChainHead {
        var head = ChainHead()
        withUnsafeMutableBytes(of: &head) { SHA256.hash(UnsafeRawBufferPointer(start: nil, count: 0), bytes, into: $0) }
        return head
    }
}
