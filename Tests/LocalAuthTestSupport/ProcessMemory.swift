// A process's writable memory, read through /proc/PID/mem (root, or the
// process itself): where the S-50 tests look for copies of a secret that
// should have been wiped. One reader for the tests of the daemon and of
// this process's own buffers.
import Glibc
import XCTest

public enum ProcessMemory {
    /// A /proc file read to its end. Not String(contentsOfFile:): /proc's
    /// files say size 0, and Foundation returns their first read alone (4 KiB
    /// of maps: every mapping after the 40th went unscanned, [stack] and the
    /// threads' arenas among them; F-53).
    public static func wholeFile(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw XCTSkip("cannot read \(path): errno \(errno)") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            bytes.append(contentsOf: chunk[..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Calls `body` with each writable mapping's bytes of `pid` ("self" for
    /// this process), one at a time; skips the test when /proc/PID/mem
    /// cannot be read.
    public static func forEachWritableMapping(of pid: String, _ body: (UnsafeRawBufferPointer) -> Void) throws {
        let maps = try wholeFile("/proc/\(pid)/maps")
        let memory = open("/proc/\(pid)/mem", O_RDONLY)
        guard memory >= 0 else { throw XCTSkip("cannot read /proc/\(pid)/mem: errno \(errno)") }
        defer { close(memory) }
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("rw") else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard bounds.count == 2, bounds[1] > bounds[0], bounds[1] - bounds[0] < 1 << 30 else { continue }
            let size = Int(bounds[1] - bounds[0])
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
            defer { buffer.deallocate() }
            // To its end: a read may stop short (a page that cannot be read).
            var count = 0
            while count < size {
                let n = pread(memory, buffer.baseAddress! + count, size - count, off_t(Int64(bitPattern: bounds[0])) + off_t(count))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                count += n
            }
            guard count > 0 else { continue }
            body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
    }
}
