// Directory: creating directory trees, listing entries, and fsync of a
// directory (which makes a create, rename or unlink inside it durable).
// Paths are walked by PathWalk: no symlink another user placed is followed.
import Glibc

public enum Directory {
    /// mkdir -p: creates `path` and missing parents with exactly `mode`
    /// (fchmod after mkdirat, so the umask does not narrow it). Existing
    /// directories are left as they are.
    public static func create(_ path: String, mode: mode_t = 0o755) throws(SystemError) {
        let fd = try PathWalk.directory(path, creating: mode)
        try? fd.close()
    }

    /// The names in `path`, without "." and "..", sorted bytewise.
    public static func entries(_ path: String) throws(SystemError) -> [String] {
        let fd: FileDescriptor
        do throws(SystemError) { fd = try FileDescriptor.open(path, .readOnly, options: .directory) } catch {
            throw SystemError(call: "opendir", errno: error.errno, path: path, reason: error.reason)
        }
        return try entries(of: fd, path: path)
    }

    /// The names in the open directory `fd` (which this call closes).
    public static func entries(of fd: FileDescriptor, path: String) throws(SystemError) -> [String] {
        guard let stream = fdopendir(fd.rawValue) else {
            let failure = SystemError.current("opendir", path: path)
            try? fd.close()
            throw failure
        }
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw .current("readdir", path: path) }
                break
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// fsync(2) on the directory itself.
    public static func fsync(_ path: String) throws(SystemError) {
        let fd = try FileDescriptor.open(path, .readOnly, options: .directory)
        defer { try? fd.close() }
        do throws(SystemError) {
            try fd.fsync()
        } catch {
            throw error.about(path)
        }
    }
}
