// The daemon's time (S-8, and issue 15 item 10): the wall clock, except that
// it never goes backwards and, after the wall clock is stepped back, it goes
// on at the rate of the boot-time clock (CLOCK_BOOTTIME, which no one can
// set) from the newest time it gave, until the wall clock catches up.
//
// So a delay begun while the wall clock was a day ahead lasts its length in
// real seconds once the clock is corrected (it used to stay frozen for the
// day), and setting the clock back still never shortens a delay (S-8). Under
// NTP slewing both clocks run at the same rate, so this is the wall clock.
// A restarted daemon starts from the log's newest event time (the boot-time
// reading of the previous process is gone): a delay then lasts at most its
// length plus the time the daemon was down. Pure: the server reads the clocks.

public struct DaemonClock: Sendable, Equatable {
    /// The last reading: the time given and the boot-time clock then.
    private var last: (time: Int64, boot: Int64)?
    /// The time given at the first reading is at least this (the log's newest event time).
    private let floor: Int64

    public init(floor: Int64) {
        self.floor = floor
    }

    public static func == (a: DaemonClock, b: DaemonClock) -> Bool {
        a.floor == b.floor && a.last?.time == b.last?.time && a.last?.boot == b.last?.boot
    }

    /// The daemon's time for wall-clock and boot-clock readings (both µs).
    public mutating func read(wall: Int64, boot: Int64) -> Int64 {
        let time: Int64
        if let last {
            let elapsed = max(0, boot - last.boot)
            time = max(wall, last.time + elapsed)
        } else {
            time = max(wall, floor)
        }
        last = (time, boot)
        return time
    }
}
