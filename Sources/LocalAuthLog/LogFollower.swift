// "What was appended since X": the records after a seq, handed out once each
// and in order, across segment rotations, to a reader that comes back now and
// then (`localauthctl log --follow` polls every 200 ms). A call that finds the
// log's tail as the previous call left it reads no record (`LogTail`): the
// daemon appends into preallocated zeros, so neither a file's size nor its
// time tells; the bytes after the last record read do.
//
// Read-only, like LogReader: a torn tail (a write in progress, or a crash's
// leftover) is where the records stop for now, never cut here.

import LocalAuthSystem

public struct LogFollower {
    public let logDirectory: String
    /// The last seq handed out (the `X` of "since X").
    public private(set) var lastSeq: UInt64
    /// Just after the last record read (nil before any read found a segment).
    private var end: LogPosition?
    /// The tail as the last read left it; nil: unknown, so the next call reads.
    private var seen: LogTail?

    /// Where a call stopped.
    public enum Stop: Sendable, Equatable {
        /// At the log's clean end: every record there is has been handed out.
        case caughtUp
        /// At an unfinished write (or a crash's torn tail); the records after
        /// it come once it is complete (the daemon cuts a crash's at its start).
        case tornTail(TornTail)
        /// The log cannot be trusted from here (nothing after it is handed out).
        case corruption(Corruption)
    }

    /// A follower that hands out the records after `lastSeq` (0: all).
    public init(logDirectory: String, after lastSeq: UInt64 = 0) {
        self.logDirectory = logDirectory
        self.lastSeq = lastSeq
    }

    /// Calls `body` with every record appended after `lastSeq`, in seq
    /// order (each valid only during its call, as LogReader's), and says
    /// where it stopped. Reads no record when the tail has not moved since
    /// the previous call.
    public mutating func appended(_ body: (Record) -> Void) throws(SystemError) -> Stop {
        let now = LogTail.read(logDirectory, end: end)
        if let seen, now == seen { return .caughtUp }
        let reader = try LogReader(logDirectory: logDirectory, from: lastSeq + 1)
        while true {
            switch reader.next() {
            case .record(let record):
                body(record)
                lastSeq = record.seq
            case .end:
                end = reader.currentSegment.map { LogPosition(segment: $0, offset: reader.currentOffset) }
                seen = .clean(segments: reader.segments, end: end, size: reader.currentSize)
                return .caughtUp
            case .tornTail(let torn):
                // Read again once the bytes where `now` looked change, not at
                // every call; a torn tail elsewhere: the next call looks there.
                let at = LogPosition(segment: torn.segment, offset: torn.offset)
                seen = now.end == at ? now : nil
                end = at
                return .tornTail(torn)
            case .corruption(let corruption):
                seen = nil
                return .corruption(corruption)
            }
        }
    }
}
