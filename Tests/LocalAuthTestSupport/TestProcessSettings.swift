// Settings of the test process itself, for the suites that run the daemon:
// SIGPIPE ignored, and a higher open-file limit for the many-client tests.
import Glibc

public enum Harness {
    /// The test process must survive writes to closed pipes and sockets.
    public static func prepareTestProcess() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Raises RLIMIT_NOFILE's soft limit to at least `wanted` (up to the hard limit); returns the new soft limit.
    @discardableResult
    public static func raiseOpenFileLimit(to wanted: UInt) -> UInt {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < rlim_t(wanted) {
            limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return UInt(limit.rlim_cur)
    }
}
