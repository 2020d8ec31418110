// The core's only clock, a value: the time of the loop turn under way (the
// shell reads the clocks once after epoll returns, TurnTime) and the
// daemon's wall time of that turn, read at most once a turn, so that the
// events of one turn share a time (a turn is bounded by the read budget,
// far below the seconds that S-5..S-11 and the prompt timeout measure),
// and never backwards: after the wall clock is set back it advances with
// CLOCK_BOOTTIME (DaemonClock).
import LocalAuthCore

struct TurnClock {
    private(set) var time = TurnTime(wall: 0, boot: 0, monotonic: 0)
    /// `now` of this turn, once read.
    private var cached: Int64?
    /// Made at the first read, from the log's high-water mark then.
    private var daemon: DaemonClock?

    /// CLOCK_MONOTONIC of the turn, in ns: timeouts, intervals.
    var monotonic: UInt64 { time.monotonic }

    /// A loop turn starts: every input until the next is at `time`.
    mutating func begin(_ time: TurnTime) {
        self.time = time
        cached = nil
    }

    /// The turn's wall time in µs; `floor` (the highest time the log holds)
    /// is read only by the first call ever.
    mutating func now(floor: @autoclosure () -> Int64) -> Int64 {
        if let cached { return cached }
        if daemon == nil { daemon = DaemonClock(floor: floor()) }
        let current = daemon!.read(wall: time.wall, boot: time.boot)
        cached = current
        return current
    }
}
