// One process per state directory: an exclusive flock(2) on its lock file,
// held for as long as the descriptor is open (the daemon's whole life), and
// tried by `localauthctl repair`, which must not touch a log a daemon writes.
import Glibc

public enum FileLock {
    /// Takes an exclusive lock on `fd` without waiting: false when another
    /// open file description holds one (EWOULDBLOCK), throws on other errors.
    public static func tryExclusive(_ fd: FileDescriptor, path: String? = nil) throws(SystemError) -> Bool {
        while flock(fd.rawValue, LOCK_EX | LOCK_NB) != 0 {
            let error = errno
            if error == EINTR { continue }
            if error == EWOULDBLOCK { return false }
            throw SystemError(call: "flock", errno: error, path: path)
        }
        return true
    }
}
