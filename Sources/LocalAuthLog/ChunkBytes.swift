// The bytes of a pending chunk (LogWriter): records are encoded straight
// into this memory, where they stay until `write` pwrites and chains them.
// An Array could only grow by copying in bytes already made elsewhere (the
// record built on the stack, then appended: ~110 instructions a record under
// the pipelined load, docs/BENCHMARKS.md); here a record reserves its room
// and is written in place.
//
// A reference, not a value: copies of a PendingChunk (the writer's
// `inflight` list) share it. The writer's lock orders every access: bytes
// are appended only to the current chunk, a chunk taken by `write` is only
// read, and its storage is reused (`removeAll`) only after `inflight` no
// longer lists it.

final class ChunkBytes {
    private(set) var base: UnsafeMutableRawPointer
    private(set) var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 0) {
        self.capacity = max(capacity, 64)
        base = .allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit { base.deallocate() }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// Room for `size` more bytes at the end, for `body` to fill entirely;
    /// they count once it returns.
    func append(uninitialized size: Int, _ body: (UnsafeMutableRawPointer) -> Void) {
        if count + size > capacity { grow(to: count + size) }
        body(base + count)
        count += size
    }

    func append(_ source: UnsafeRawBufferPointer) {
        append(uninitialized: source.count) { target in
            if let from = source.baseAddress { target.copyMemory(from: from, byteCount: source.count) }
        }
    }

    /// Empties it, keeping its memory.
    func removeAll() { count = 0 }

    /// A copy of bytes `range` (a record read before it is on the file).
    func copy(_ range: Range<Int>) -> [UInt8] {
        precondition(range.lowerBound >= 0 && range.upperBound <= count)
        return Array(UnsafeRawBufferPointer(rebasing: bytes[range]))
    }

    private func grow(to needed: Int) {
        var size = capacity
        while size < needed { size *= 2 }
        let larger = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        larger.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = larger
        capacity = size
    }
}
