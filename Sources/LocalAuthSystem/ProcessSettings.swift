// Process-wide settings the daemon makes once at its start: the file creation
// mask and the open-file limit (every connection is a descriptor).
import Glibc

public enum ProcessSettings {
    /// umask(2): the bits no file or directory this process creates gets.
    public static func setFileCreationMask(_ mask: mode_t) {
        umask(mask)
    }

    /// Lifts the soft RLIMIT_NOFILE to `wanted` (at most the hard limit);
    /// never lowers it. Best effort: a failing call leaves the limit as it is.
    public static func raiseOpenFileLimit(to wanted: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let target = rlim_t(wanted)
        if limit.rlim_cur < target {
            limit.rlim_cur = min(target, limit.rlim_max)
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }
}
