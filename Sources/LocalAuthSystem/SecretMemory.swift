// S-50: secrets in memory. Buffers that held a passcode are wiped with
// explicit_bzero (which the optimizer may not drop) once it is checked or
// hashed, and the process is made non-dumpable at start, so neither a core
// file nor a same-uid ptrace/`/proc/PID/mem` reader sees what is still there.
// A request's secrets live in `SecretBytes` (LocalAuthProtocol, which makes
// them from the line and cannot see this layer).
import CLocalAuthShim
import Glibc

public enum SecretMemory {
    /// Zeroes `count` bytes at `base`.
    public static func wipe(_ base: UnsafeMutableRawPointer, count: Int) {
        la_scrub(base, count)
    }

    /// Zeroes a buffer in place (nothing for an empty one).
    public static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        if let base = buffer.baseAddress { la_scrub(base, buffer.count) }
    }

    /// Zeroes every byte of `bytes` in place (its storage, not a copy).
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { la_scrub(base, buffer.count) }
        }
    }

    /// PR_SET_DUMPABLE 0: no core dump, no ptrace by the same uid.
    public static func forbidCoreDumps() throws(SystemError) {
        if la_set_dumpable(0) != 0 { throw SystemError.current("prctl(PR_SET_DUMPABLE)") }
    }

    /// Whether the process may dump core (PR_GET_DUMPABLE).
    public static var isDumpable: Bool { la_get_dumpable() == 1 }
}
