// The process's heap: handing freed pages back to the kernel after a wave
// of frees (glibc otherwise keeps them mapped, and RSS stays at its peak).
import CLocalAuthShim

public enum Memory {
    /// malloc_trim(0); true if any memory was released.
    @discardableResult
    public static func releaseFreePages() -> Bool { la_malloc_trim() == 1 }
}
