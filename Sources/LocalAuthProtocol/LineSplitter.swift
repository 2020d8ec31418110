// Framing of PROTOCOL.md: bytes in, LF-terminated lines out, with a hard cap.
// In the manner of swift-nio's NIOSplitLinesMessageDecoder: the server keeps
// one splitter per connection, appends whatever read(2) returned, and drains
// `next()` until it returns nil. The buffer is compacted in place (its
// capacity is kept), so a steady connection does not allocate per line.

/// Splits a byte stream into lines.
///
/// A line is the bytes before an LF; a single CR right before the LF is
/// dropped. A line may be at most `maximumLineLength` bytes *including* its LF
/// (and its CR, if any). The first line that exceeds the cap is reported once
/// as `.lineTooLong`; after that the splitter has failed: it ignores input and
/// yields nothing more (the server answers and closes the connection).
///
/// A `.line` slice shares storage with the splitter's buffer. Use it (parse
/// it) before the next `append`; holding it across an append still works but
/// makes the append copy the buffer.
public struct LineSplitter: Sendable {
    public enum Event: Sendable, Equatable {
        /// A complete line, without its LF (and without a CR before the LF).
        case line(ArraySlice<UInt8>)
        /// A line longer than the cap; reported once, then the splitter is done.
        case lineTooLong
    }

    /// The protocol's cap: 8192 bytes including the LF.
    public static let defaultMaximumLineLength = 8192

    public let maximumLineLength: Int
    private var buffer: [UInt8] = []
    /// Start of the first line not yet returned.
    private var readIndex = 0
    /// Bytes in `readIndex..<scanIndex` are known to hold no LF.
    private var scanIndex = 0
    /// True once `.lineTooLong` was returned.
    public private(set) var hasFailed = false

    /// - Parameter maximumLineLength: the cap including the LF, at least 1.
    public init(maximumLineLength: Int = LineSplitter.defaultMaximumLineLength) {
        precondition(maximumLineLength >= 1, "a line needs room for its LF")
        self.maximumLineLength = maximumLineLength
    }

    /// Bytes received and not yet returned as lines.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// True when bytes of an unfinished line are buffered (the server times
    /// such a line out). The buffer ends in LF exactly when every buffered
    /// byte belongs to a complete line, so this is O(1).
    public var hasPartialLine: Bool {
        readIndex < buffer.count && buffer[buffer.count - 1] != lf
    }

    /// Appends received bytes. Ignored once the splitter has failed.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !hasFailed, !bytes.isEmpty else { return }
        compact()
        reserve(bytes.count)
        buffer.append(contentsOf: bytes)
    }

    /// Appends received bytes. Ignored once the splitter has failed.
    public mutating func append(contentsOf bytes: some Sequence<UInt8>) {
        guard !hasFailed else { return }
        compact()
        reserve(bytes.underestimatedCount)
        buffer.append(contentsOf: bytes)
    }

    /// Room for `more` bytes, grown here rather than by the append (F-25):
    /// an array that regrows itself frees its old storage as it is, and a
    /// partial line in it (the first part of a `secret=` that came in two
    /// reads) would stay in freed memory. The old storage is zeroed first.
    private mutating func reserve(_ more: Int) {
        let needed = buffer.count + more
        guard needed > buffer.capacity else { return }
        var larger: [UInt8] = []
        larger.reserveCapacity(Swift.max(needed, 2 * buffer.capacity))
        larger.append(contentsOf: buffer)
        buffer.withUnsafeMutableBytes { raw in
            for index in raw.indices { raw[index] = 0 }
        }
        buffer = larger
    }

    /// The next complete line, `.lineTooLong` once, or nil when more input is needed.
    public mutating func next() -> Event? {
        switch nextRange() {
        case nil: return nil
        case .tooLong: return .lineTooLong
        case .line(let range): return .line(buffer[range])
        }
    }

    /// Where the next line is, for both forms of `next`.
    private enum Found {
        case line(Range<Int>)
        /// A line longer than the cap (reported once).
        case tooLong
    }

    /// The next line's range in `buffer`, a line too long, or nil when more
    /// input is needed.
    private mutating func nextRange() -> Found? {
        guard !hasFailed else { return nil }
        // An LF may sit at most at readIndex + cap - 1.
        let limit = min(buffer.count, readIndex + maximumLineLength)
        if scanIndex < limit, let lfIndex = LineSplitter.firstLF(in: buffer, from: scanIndex, to: limit) {
            var end = lfIndex
            if end > readIndex && buffer[end - 1] == cr { end -= 1 }
            let line = readIndex..<end
            readIndex = lfIndex + 1
            scanIndex = readIndex
            return .line(line)
        }
        if buffer.count - readIndex >= maximumLineLength {
            hasFailed = true
            // Its bytes are never returned, so never wiped by the server.
            buffer.withUnsafeMutableBytes { raw in
                for index in raw.indices { raw[index] = 0 }
            }
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
            scanIndex = 0
            return .tooLong
        }
        scanIndex = limit
        return nil
    }

    /// What `next(copyingInto:)` yields.
    public enum CopiedLine {
        /// A complete line, copied into the caller's buffer.
        case line(UnsafeBufferPointer<UInt8>)
        case lineTooLong
    }

    /// `next()`, with a line's bytes copied into `buffer` (at least
    /// `maximumLineLength` bytes) rather than handed out as a slice of the
    /// splitter's storage: a slice retains that storage and releases it
    /// twice, atomic operations the server paid per request. `.line` holds
    /// the copy, valid until the caller reuses `buffer`.
    public mutating func next(copyingInto buffer: UnsafeMutableRawBufferPointer) -> CopiedLine? {
        precondition(buffer.count >= maximumLineLength, "a line buffer holds the longest line")
        let range: Range<Int>
        switch nextRange() {
        case nil: return nil
        case .tooLong: return .lineTooLong
        case .line(let found): range = found
        }
        let count = range.count
        if count > 0 {
            self.buffer.withUnsafeBytes { source in
                buffer.baseAddress!.copyMemory(from: source.baseAddress! + range.lowerBound, byteCount: count)
            }
        }
        return .line(UnsafeBufferPointer(start: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count))
    }

    /// Zeroes the bytes of the lines already returned (S-50: a line that
    /// carried a secret leaves no copy in the splitter's storage). Call it
    /// before the next `append`, which may move those bytes.
    public mutating func wipeReturned() {
        guard readIndex > 0 else { return }
        let count = readIndex
        buffer.withUnsafeMutableBytes { raw in
            for index in 0..<count { raw[index] = 0 }
        }
    }

    /// Zeroes every byte the splitter holds, returned or not, and forgets
    /// them (S-50: a connection that goes away in the middle of a line with
    /// a secret leaves no copy in freed memory).
    public mutating func wipeAll() {
        buffer.withUnsafeMutableBytes { SecretBytes.wipe($0) }
        reset()
    }

    /// Forgets all input and the failure, keeping the buffer's capacity, so
    /// the splitter can serve a new connection.
    public mutating func reset() {
        buffer.removeAll(keepingCapacity: true)
        readIndex = 0
        scanIndex = 0
        hasFailed = false
    }

    /// The index of the first LF in `buffer[from..<to]`, eight bytes at a
    /// time: t = (x - 0x01..) & ~x & 0x80.., x = word ^ LFs, has its lowest
    /// set bit in the first byte of x that is zero (a borrow only starts at
    /// a zero byte, so only bytes after the first can be false positives),
    /// which its trailing zero count gives without a second, bytewise look
    /// (loads are little-endian: the first byte is the lowest). The last
    /// bytes, fewer than eight, are read as the word that ends at `to`, whose
    /// bytes before them were already found to hold no LF.
    @inline(__always)
    private static func firstLF(in buffer: [UInt8], from: Int, to: Int) -> Int? {
        buffer.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return nil }
            @inline(__always) func lfBits(at index: Int) -> UInt64 {
                let x = base.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ 0x0A0A_0A0A_0A0A_0A0A
                return (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080
            }
            let lastWord = to &- 8  // 0 <= from <= to: no overflow
            var i = from
            // Two words a turn (a request line is ~70 bytes), then one.
            while i < lastWord &- 8 {
                let first = lfBits(at: i), second = lfBits(at: i &+ 8)
                if first | second != 0 {
                    return first != 0 ? i &+ first.trailingZeroBitCount >> 3 : i &+ 8 &+ second.trailingZeroBitCount >> 3
                }
                i &+= 16
            }
            while i <= lastWord {
                let bits = lfBits(at: i)
                if bits != 0 { return i &+ bits.trailingZeroBitCount >> 3 }
                i &+= 8
            }
            if i == to { return nil }
            if lastWord >= from {
                let bits = lfBits(at: lastWord)
                return bits != 0 ? lastWord &+ bits.trailingZeroBitCount >> 3 : nil
            }
            while i < to {
                if raw[i] == lf { return i }
                i &+= 1
            }
            return nil
        }
    }

    /// Moves the pending partial line to the front of the buffer.
    private mutating func compact() {
        guard readIndex > 0 else { return }
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
        } else {
            // The partial line moves to the front; the bytes it leaves past
            // its new end (beyond the count, out of every later wipe's
            // reach) are zeroed (F-25: a `secret=` split over reads).
            let partial = buffer.count - readIndex, from = readIndex
            buffer.withUnsafeMutableBytes { raw in
                let base = raw.baseAddress!
                base.copyMemory(from: base + from, byteCount: partial)  // memmove: they may overlap
                for index in Swift.max(partial, from)..<raw.count { raw[index] = 0 }
            }
            buffer.removeLast(readIndex)
        }
        scanIndex -= readIndex
        readIndex = 0
    }
}

private let lf = UInt8(ascii: "\n")
private let cr = UInt8(ascii: "\r")
