// The CPUs this process may use: work that splits into independent parts
// (the sealed segments' hashes at start) uses this many threads at most.
import CLocalAuthShim

public enum Processors {
    /// CPUs in the calling thread's affinity mask (taskset, CPUAffinity=); at least 1.
    public static var usable: Int { Int(la_usable_cpus()) }
}
