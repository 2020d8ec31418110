// AtomicFile: replace a small file so that readers (and a crash) see either
// the old content or the new, never a mix: write a temporary file in the same
// directory, fsync it, rename it over the target, fsync the directory. All
// relative to the directory's descriptor (PathWalk): the temporary file is
// created O_EXCL | O_NOFOLLOW, and the rename replaces the name itself.
import Glibc

public enum AtomicFile {
    public static func write(_ path: String, bytes: [UInt8], mode: mode_t = 0o600) throws(SystemError) {
        let (directory, name) = try PathWalk.parent(path, followingFinal: false)
        defer { try? directory.close() }
        let temporaryName = "." + name + ".tmp-" + SecureRandom.hex(bytes: 6)
        let temporary = String(path.dropLast(name.count)) + temporaryName
        let fd = try FileDescriptor.openat(directory, temporaryName, .writeOnly, options: [.create, .exclusiveCreate],
                                           permissions: mode, path: temporary)
        do throws(SystemError) {
            try fd.chmod(mode)  // exactly `mode`, whatever the umask
            try fd.writeAll(bytes)
            try fd.fsync()
            try fd.close()
        } catch {
            try? fd.close()
            unlinkat(directory.rawValue, temporaryName, 0)
            throw error.about(temporary)
        }
        if renameat(directory.rawValue, temporaryName, directory.rawValue, name) != 0 {
            let failure = SystemError.current("rename", path: temporary)
            unlinkat(directory.rawValue, temporaryName, 0)
            throw failure
        }
        let itself = try FileDescriptor.openat(directory, ".", .readOnly, options: .directory, path: path)
        defer { try? itself.close() }
        do throws(SystemError) { try itself.fsync() } catch { throw error.about(path) }
    }

    /// ("dir", "name") of "dir/name"; "." for a bare name.
    static func split(_ path: String) -> (String, String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }
}
