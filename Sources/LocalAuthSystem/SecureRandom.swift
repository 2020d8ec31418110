// SecureRandom: bytes from the kernel's CSPRNG via getrandom(2), for salts,
// tokens and temporary names. getrandom blocks only before the pool is
// first seeded at boot, and cannot otherwise fail on supported kernels, so a
// failure here is a broken system and stops the process.
import CLocalAuthShim
import Glibc

public enum SecureRandom {
    /// Fills `buffer` completely.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        var done = 0
        while done < buffer.count {
            let n = la_getrandom(buffer.baseAddress! + done, buffer.count - done, 0)
            if n < 0 {
                if errno == EINTR { continue }
                preconditionFailure("\(SystemError.current("getrandom"))")
            }
            done += n
        }
    }

    public static func bytes(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 { fill(UnsafeMutableRawBufferPointer(buffer)) }
            initialized = count
        }
    }

    /// `bytes` random bytes as 2 × `bytes` lowercase hex digits.
    public static func hex(bytes count: Int = 16) -> String {
        Hex.encode(bytes(count))
    }
}

/// Lowercase hexadecimal, shared by SecureRandom, the boot id and digests.
public enum Hex {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
