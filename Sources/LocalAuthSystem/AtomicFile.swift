// AtomicFile: replace a small file so that readers (and a crash) see either
// the old content or the new, never a mix: write a temporary file in the same
// directory, fsync it, rename it over the target, fsync the directory.
import Glibc

public enum AtomicFile {
    public static func write(_ path: String, bytes: [UInt8], mode: mode_t = 0o600) throws(SystemError) {
        let (directory, name) = split(path)
        let temporary = directory + "/." + name + ".tmp-" + SecureRandom.hex(bytes: 6)
        let fd = try FileDescriptor.open(temporary, .writeOnly, options: [.create, .exclusiveCreate], permissions: mode)
        do throws(SystemError) {
            try fd.chmod(mode)  // exactly `mode`, whatever the umask
            try fd.writeAll(bytes)
            try fd.fsync()
            try fd.close()
        } catch {
            try? fd.close()
            try? File.unlink(temporary)
            throw SystemError(call: error.call, errno: error.errno, path: temporary)
        }
        do throws(SystemError) {
            try File.rename(temporary, to: path)
        } catch {
            try? File.unlink(temporary)
            throw error
        }
        try Directory.fsync(directory)
    }

    /// ("dir", "name") of "dir/name"; "." for a bare name.
    static func split(_ path: String) -> (String, String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }
}
