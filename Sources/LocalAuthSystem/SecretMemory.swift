// S-50: secrets in memory. Buffers that held a passcode are wiped with
// explicit_bzero (which the optimizer may not drop) once it is checked or
// hashed, and the process is made non-dumpable at start, so neither a core
// file nor a same-uid ptrace/`/proc/PID/mem` reader sees what is still there.
import CLocalAuthShim
import Glibc

public enum SecretMemory {
    /// Zeroes `count` bytes at `base`.
    public static func wipe(_ base: UnsafeMutableRawPointer, count: Int) {
        la_scrub(base, count)
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

/// A secret's bytes in memory of their own, wiped when the last reference
/// goes (S-50). Swift arrays cannot be wiped reliably once shared: writing
/// to a shared one copies it and wipes the copy. Immutable, so Sendable.
public final class SecretBytes: @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer

    public init(_ text: some StringProtocol) {
        let utf8 = text.utf8
        storage = .allocate(byteCount: max(1, utf8.count), alignment: 1)
        var index = 0
        for byte in utf8 {
            storage[index] = byte
            index += 1
        }
        count = utf8.count
    }

    public let count: Int

    /// A copy as an array that only the caller holds: the caller wipes it
    /// (`SecretMemory.wipe`) once done.
    public func copy() -> [UInt8] { Array(storage.prefix(count)) }

    deinit {
        la_scrub(storage.baseAddress, storage.count)
        storage.deallocate()
    }
}
