// Clocks: the two times the daemon reads. Wall time stamps events in the log
// (it may jump); monotonic time measures intervals (lockouts, timeouts).
// The pure core never reads either: the server passes times in.
import Glibc

public enum WallClock {
    /// CLOCK_REALTIME in microseconds since the Unix epoch.
    public static func nowMicros() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }
}

public enum BootClock {
    /// CLOCK_BOOTTIME in microseconds: monotonic, counts suspend, cannot be set.
    public static func nowMicros() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }
}

public enum MonotonicClock {
    /// CLOCK_MONOTONIC in nanoseconds since an arbitrary start (boot).
    public static func nowNanos() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
