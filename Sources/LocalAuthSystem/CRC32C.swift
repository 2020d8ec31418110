// CRC32C (Castagnoli), the event log's record checksum, computed by the C
// shim with the SSE4.2 crc32 instruction when the CPU has it. Standard
// semantics: checksum("123456789") == 0xE3069283, and passing a previous
// result as `seed` continues it over more bytes.
import CLocalAuthShim

public enum CRC32C {
    public static func checksum(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        la_crc32c(seed, bytes.baseAddress, bytes.count)
    }

    public static func checksum(_ bytes: [UInt8], seed: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, seed: seed) }
    }

    /// The portable table path alone (tests compare it with the hardware path).
    public static func tableChecksum(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        la_crc32c_table(seed, bytes.baseAddress, bytes.count)
    }

    /// Whether `checksum` uses the CPU's crc32 instruction.
    public static var isHardwareAccelerated: Bool { la_crc32c_hardware() != 0 }
}
