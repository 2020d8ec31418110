// What the records appended so far will take of the file system once they
// are written, counted at append time, before any of their bytes reaches
// the file. The daemon keeps a reserve of free space for security events
// (S-48) and judges it against the free space statvfs gave at its last look
// minus what the log claimed since (F-16): between two looks a loop turn can
// append megabytes that reach the file, and statvfs, only at the turn's end.
//
// It follows the appender's allocation (SegmentAppender) at or above it,
// never below, so the estimate errs towards refusing early:
// - a record inside space the open segment already has (preallocated zeros)
//   claims nothing: statvfs counted those blocks when they were written;
// - a record past it claims the whole next preallocation step, as the
//   appender will write it (or, without preallocation, its own bytes);
//   when the appender skips or gives up preallocating, the file grows less;
// - a new segment claims a block for the finished one's seal and its own
//   header's block; the zeros cut off the finished segment are not given
//   back (the next look sees them free).
// Claims are whole blocks of `block` bytes (tmpfs pages, ext4/xfs blocks),
// as the file system allocates them.

struct SpaceClaim {
    /// The file system's allocation unit assumed.
    static let block = 4096
    /// Bytes claimed since the writer started.
    private(set) var total: Int64 = 0
    /// The open segment's size once all that was appended is written, as
    /// far as the claims go: a multiple of `step` after the first claim.
    private var allocated: Int
    /// The appender's preallocation step (0: none).
    let step: Int

    init(allocated: Int, step: Int) {
        self.allocated = allocated
        self.step = max(0, step)
    }

    /// The next record ends at `end` of the open segment.
    @inline(__always)
    mutating func extend(to end: Int) {
        // `>=`: the appender preallocates past a chunk ending exactly at
        // its allocated size, to the step after it.
        if end >= allocated { grow(to: end) }
    }

    private mutating func grow(to end: Int) {
        let target = step > 0 ? (end / step + 1) * step : end
        total += Int64(SpaceClaim.blocks(target) - SpaceClaim.blocks(allocated)) * Int64(SpaceClaim.block)
        allocated = target
    }

    /// A new segment starts (its header is `headerSize` bytes).
    mutating func newSegment(headerSize: Int) {
        // The seal's block, and the block the header starts the file with
        // (the records' claims count from the header's end, in blocks).
        total += 2 * Int64(SpaceClaim.block)
        allocated = headerSize
    }

    private static func blocks(_ bytes: Int) -> Int { (bytes + block - 1) / block }
}
