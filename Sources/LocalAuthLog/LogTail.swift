// What a LogFollower compares between calls to tell whether the log moved:
// the segment files, the size of the one being read, and the bytes just
// after the last record read. The daemon keeps zeros ahead of its records
// (FORMAT.md "Preallocation"), so an appended record changes neither the
// file's size nor, within one clock tick, its modification time; it does
// change those bytes, from zeros (the clean end) to a length prefix.

import LocalAuthSystem

struct LogTail: Equatable {
    /// How many bytes after the last record are compared: more than any
    /// record the daemon writes (a protocol line is at most 8 KiB), so a
    /// record caught half-written still shows its change once complete.
    static let window = 16 * 1024

    /// The segments (their first seqs, from the file names), ascending.
    var segments: [UInt64]
    /// Just after the last record read (nil before any segment).
    var end: LogPosition?
    /// The size of `end`'s segment file (0 when there is none).
    var size: Int
    /// The bytes from `end` on (at most `window`); empty when there are none
    /// or all are zeros: nothing follows.
    var next: [UInt8]

    /// What a read that ended cleanly at `end` saw: nothing after it.
    static func clean(segments: [UInt64], end: LogPosition?, size: Int) -> LogTail {
        LogTail(segments: segments, end: end, size: size, next: [])
    }

    /// The tail as it is now, around the `end` of the last read.
    static func read(_ logDirectory: String, end: LogPosition?) -> LogTail {
        let names = (try? Directory.entries(logDirectory)) ?? []
        var tail = LogTail(segments: names.compactMap { SegmentName.parse($0) }.sorted(), end: end, size: 0, next: [])
        guard let end, let file = try? FileDescriptor.open(logDirectory + "/" + SegmentName.fileName(end.segment), .readOnly) else {
            return tail
        }
        defer { try? file.close() }
        tail.size = (try? file.size()).map(Int.init) ?? 0
        let count = min(window, max(0, tail.size - end.offset))
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { (try? file.read(into: $0, at: Int64(end.offset))) ?? 0 }
        bytes.removeSubrange(read...)
        if bytes.contains(where: { $0 != 0 }) { tail.next = bytes }
        return tail
    }
}
