// Which Flatpak app a process says it is (S-73): the `name=` of the
// `[Application]` group of `/.flatpak-info` in its root directory, as
// xdg-desktop-portal reads it. Everything about the file is the process's
// to choose, so it is read as hostile input: through a directory fd of
// /proc/PID/root without following a symlink at the last step, only a
// regular file, at most 64 KiB, a key file parsed here by line, and a name
// kept only if it is a valid application id. The answer is what a sandbox
// says about itself; the daemon records it and trusts it for nothing.
//
// A read may block (the root may be any mount the process can make), so
// the daemon calls this off its event loop.
import Glibc

public enum FlatpakInfo {
    /// The largest `.flatpak-info` read.
    public static let maximumBytes = 64 * 1024
    /// The longest application id (a D-Bus name).
    public static let maximumNameBytes = 255

    /// The application id of process `pid`, or nil: no such file, not one
    /// the daemon may read (another user's process under ProtectProc=), or
    /// not valid. `stillThere` runs after the read; when it says the pid no
    /// longer names the same process, the answer is nil.
    public static func applicationID(pid: Int32, stillThere: () -> Bool) -> String? {
        guard pid > 0 else { return nil }
        // O_PATH (010000000, not exported to Swift): the directory is only walked from.
        let root = open("/proc/\(pid)/root", 0o10000000 | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { return nil }
        defer { close(root) }
        let fd = openat(root, ".flatpak-info", O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= maximumBytes else { return nil }
        var bytes = [UInt8](repeating: 0, count: maximumBytes + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { return nil }
            if got == 0 { break }
            count += got
        }
        // Grown past its size since the fstat: refused as too large.
        guard count <= maximumBytes, stillThere() else { return nil }
        return applicationID(in: bytes[0..<count])
    }

    /// The `[Application]` group's `name=` of a key file, if it is a valid
    /// application id. Later assignments of the key win, as in GKeyFile.
    public static func applicationID(in bytes: some Collection<UInt8>) -> String? {
        guard let text = String(validating: Array(bytes), as: UTF8.self), !text.contains("\0") else { return nil }
        var inApplication = false
        var name: String?
        // "\r\n" is one Character in Swift: both line ends split.
        for raw in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = raw.trimmingASCIIWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                inApplication = line == "[Application]"
                continue
            }
            guard inApplication, let equals = line.firstIndex(of: "=") else { continue }
            if line[..<equals].trimmingASCIIWhitespace() == "name" {
                name = String(line[line.index(after: equals)...].trimmingASCIIWhitespace())
            }
        }
        guard let name, isValidApplicationID(name) else { return nil }
        return name
    }

    /// Flatpak's rule for an application id: at least three elements
    /// separated by dots, each of ASCII letters, digits, `_` and `-`, not
    /// starting with a digit, `-` only in the last, at most 255 bytes.
    public static func isValidApplicationID(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumNameBytes else { return false }
        let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard elements.count >= 3 else { return false }
        for (index, element) in elements.enumerated() {
            guard let first = element.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
            for byte in element {
                let letter = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
                let digit = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                let dash = byte == UInt8(ascii: "-")
                guard letter || digit || byte == UInt8(ascii: "_") || (dash && index == elements.count - 1) else { return false }
            }
        }
        return true
    }
}

extension Substring {
    fileprivate func trimmingASCIIWhitespace() -> Substring {
        var slice = self
        while let first = slice.first, first == " " || first == "\t" || first == "\r" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" || last == "\r" { slice.removeLast() }
        return slice
    }
}
