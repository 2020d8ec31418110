// The CPUs this process may use: work that splits into independent parts
// (the sealed segments' hashes at start) uses this many threads at most.
// And work that may wait for everything else (the covered segments' check
// after READY, S-49) runs on a thread that asks for the CPU and the disk last.
import CLocalAuthShim

public enum Processors {
    /// CPUs in the calling thread's affinity mask (taskset, CPUAffinity=); at least 1.
    public static var usable: Int { Int(la_usable_cpus()) }

    /// The calling thread runs only when nothing else wants the CPU
    /// (SCHED_IDLE) and reads only when no other reader waits (the idle
    /// I/O class). Best effort: false when either was refused.
    @discardableResult
    public static func lowerThisThreadsPriority() -> Bool { la_lower_thread_priority() == 0 }
}
