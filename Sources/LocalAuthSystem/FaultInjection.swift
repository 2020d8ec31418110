// FaultInjection: makes chosen file calls fail, so the event log's tests can
// see what happens when the disk is full (ENOSPC) or broken (EIO) at a given
// write or sync. Process-wide and thread-safe. When nothing is armed the
// wrappers pay one relaxed atomic load.
import Synchronization

public enum FaultInjection {
    /// The FileDescriptor calls that can be made to fail.
    public enum Operation: Int, Sendable, CaseIterable {
        case write, pwrite, fdatasync, fsync
    }

    private struct Rule {
        var errno: Int32
        /// nil: every call until `reset()`.
        var remaining: Int?
    }

    private static let armed = Atomic<Bool>(false)
    private static let rules = Mutex<[Operation: Rule]>([:])

    /// Makes the next `times` calls of `operation` fail with `errno`
    /// (nil: every call until `reset()`), without reaching the kernel.
    public static func fail(_ operation: Operation, errno: Int32, times: Int? = 1) {
        rules.withLock { rules in
            rules[operation] = Rule(errno: errno, remaining: times)
            armed.store(true, ordering: .relaxed)
        }
    }

    /// Disarms every rule.
    public static func reset() {
        rules.withLock { rules in
            rules.removeAll()
            armed.store(false, ordering: .relaxed)
        }
    }

    /// The errno to fail `operation` with now, or nil to perform it.
    @inline(__always)
    static func injectedError(_ operation: Operation) -> Int32? {
        guard armed.load(ordering: .relaxed) else { return nil }
        return rules.withLock { rules -> Int32? in
            guard var rule = rules[operation] else { return nil }
            if let remaining = rule.remaining {
                if remaining <= 1 {
                    rules[operation] = nil
                } else {
                    rule.remaining = remaining - 1
                    rules[operation] = rule
                }
            }
            if rules.isEmpty { armed.store(false, ordering: .relaxed) }
            return rule.errno
        }
    }
}
