// S-40 read from what leaves the daemon, not from its gate. Each way out of
// the daemon (one connection's byte stream, the journal's authentication
// trail) is a stream of positions. When a failure is recorded (a biometric
// no match, a wrong passcode), the oracle marks how much had been produced on
// every stream by then: whatever is produced later may reveal it, so no
// byte from that mark on may be performed (sent, journaled) before the disk
// is durable through the failure's seq. Output produced before the failure
// may leave at once: the mark is where the stream stood, not when it left.
//
// A log that fails never makes its undurable failures durable: what had been
// admitted after them (produced, not held) must then never leave, and what
// the daemon produces from then on carries no verdict (it answers
// `unavailable`): the marks become forbidden ranges.
struct RevealMarks {
    /// (the position from which output may reveal the failure, its seq), in order.
    private var marks: [(from: Int, seq: UInt64)] = []
    /// Output that a failed log's failure preceded: never to leave.
    private var forbidden: [(range: Range<Int>, seq: UInt64)] = []

    var isEmpty: Bool { marks.isEmpty && forbidden.isEmpty }
    /// Where the output that the last violation reported starts.
    private(set) var violationFrom: Int?

    /// The failure at `seq` was recorded when `produced` bytes (or entries)
    /// of this stream had been produced.
    mutating func failureRecorded(seq: UInt64, produced: Int) {
        marks.append((produced, seq))
    }

    /// The stream's producer dropped unsent output (its newest bytes): what
    /// is produced from now on starts at `produced` and is newer than every
    /// mark, so no mark may lie beyond it.
    mutating func dropped(to produced: Int) {
        for index in marks.indices where marks[index].from > produced { marks[index].from = produced }
        forbidden = forbidden.compactMap { entry in
            let upper = min(entry.range.upperBound, produced)
            return entry.range.lowerBound < upper ? (entry.range.lowerBound..<upper, entry.seq) : nil
        }
    }

    /// Output `range` of the stream leaves while the disk is durable
    /// through `durable`. Returns the seq of a failure it may reveal that
    /// is not durable (a violation), how many durable failures it was the
    /// first to reveal, and the newest of them (0: none).
    mutating func performed(_ range: Range<Int>, durable: UInt64) -> (violation: UInt64?, revealed: Int, newest: UInt64) {
        guard !range.isEmpty else { return (nil, 0, 0) }
        var violation: UInt64?
        violationFrom = nil
        var revealed = 0
        var newest: UInt64 = 0
        for entry in forbidden where entry.range.overlaps(range) {
            violation = entry.seq
            violationFrom = entry.range.lowerBound
        }
        marks.removeAll { mark in
            if mark.seq <= durable {
                if mark.from < range.upperBound {
                    revealed += 1
                    newest = max(newest, mark.seq)
                }
                return true
            }
            if mark.from < range.upperBound {
                if violation == nil {
                    violation = mark.seq
                    violationFrom = mark.from
                }
                return true  // reported once
            }
            return false
        }
        return (violation, revealed, newest)
    }

    /// The log failed when `admitted` bytes of the stream had been produced
    /// outside the gate (held ones are dropped unsent) and the disk was
    /// durable through `durable`.
    mutating func logFailed(admitted: Int, durable: UInt64) {
        for mark in marks where mark.seq > durable && mark.from < admitted {
            forbidden.append((mark.from..<admitted, mark.seq))
        }
        marks.removeAll()
    }
}
