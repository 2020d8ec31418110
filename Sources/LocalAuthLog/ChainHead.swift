// SHA-256 values and the hash chain of FORMAT.md:
//   chain[0] = 32 zero bytes; chain[n] = SHA-256(chain[n-1] || record n's bytes).

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

/// The chain step: SHA-256 straight into a ChainHead, nothing allocated.
struct ChainHasher {
    /// chain[n] = SHA-256(chain[n-1] || record).
    func chain(_ previous: ChainHead, _ record: UnsafeRawBufferPointer) -> ChainHead {
        var head = ChainHead()
        withUnsafeBytes(of: previous) { before in
            withUnsafeMutableBytes(of: &head) { SHA256.hash(before, record, into: $0) }
        }
        return head
    }

    func digest(_ bytes: UnsafeRawBufferPointer) -> ChainHead {
        var head = ChainHead()
        withUnsafeMutableBytes(of: &head) { SHA256.hash(UnsafeRawBufferPointer(start: nil, count: 0), bytes, into: $0) }
        return head
    }
}
