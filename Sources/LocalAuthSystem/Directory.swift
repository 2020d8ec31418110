// Directory: creating directory trees, listing entries, and fsync of a
// directory (which makes a create, rename or unlink inside it durable).
import Glibc

public enum Directory {
    /// mkdir -p: creates `path` and missing parents with exactly `mode`
    /// (chmod after mkdir, so the umask does not narrow it). Existing
    /// directories are left as they are.
    public static func create(_ path: String, mode: mode_t = 0o755) throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += prefix.isEmpty || prefix.hasSuffix("/") ? String(component) : "/" + component
            if mkdir(prefix, mode) == 0 {
                try File.chmod(prefix, mode)
                continue
            }
            let code = errno
            var info = stat()
            if code == EEXIST, stat(prefix, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { continue }
            throw SystemError(call: "mkdir", errno: code, path: prefix)
        }
    }

    /// The names in `path`, without "." and "..", sorted bytewise.
    public static func entries(_ path: String) throws(SystemError) -> [String] {
        guard let stream = opendir(path) else { throw .current("opendir", path: path) }
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
            throw SystemError(call: error.call, errno: error.errno, path: path)
        }
    }
}
