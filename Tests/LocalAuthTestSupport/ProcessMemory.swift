// A process's writable memory, read through /proc/PID/mem (root, or the
// process itself): where the S-50 tests look for copies of a secret that
// should have been wiped. One reader for the tests of the daemon and of
// this process's own buffers.
import Glibc
import XCTest

public enum ProcessMemory {
    /// Calls `body` with each writable mapping's bytes of `pid` ("self" for
    /// this process), one at a time; skips the test when /proc/PID/mem
    /// cannot be read.
    public static func forEachWritableMapping(of pid: String, _ body: (UnsafeRawBufferPointer) -> Void) throws {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
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
            let count = pread(memory, buffer.baseAddress, size, off_t(Int64(bitPattern: bounds[0])))
            guard count > 0 else { continue }
            body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
    }
}
