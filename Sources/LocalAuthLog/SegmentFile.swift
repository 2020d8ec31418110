// The log's files, on top of LocalAuthSystem's FileDescriptor (which retries
// EINTR and applies FaultInjection to write/pwrite/fdatasync/fsync). This
// adapter adds the path to every error, so a failure reads
// "fdatasync /var/lib/localauthd/log/0000000000000001.seg: Input/output error".

import Glibc
import LocalAuthSystem

/// An open file of the log or snapshot directory.
struct SegmentFile {
    let fd: FileDescriptor
    let path: String

    static func open(
        _ path: String, _ access: FileDescriptor.AccessMode, options: FileDescriptor.OpenOptions = [],
        permissions: mode_t = 0o640
    ) throws(SystemError) -> SegmentFile {
        SegmentFile(fd: try FileDescriptor.open(path, access, options: options, permissions: permissions), path: path)
    }

    func close() { try? fd.close() }

    func size() throws(SystemError) -> Int {
        do throws(SystemError) { return Int(try fd.size()) } catch { throw named(error) }
    }

    func pwriteAll(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(SystemError) {
        do throws(SystemError) { try fd.writeAll(bytes, at: Int64(offset)) } catch { throw named(error) }
    }

    func pwriteAll(_ bytes: [UInt8], at offset: Int) throws(SystemError) {
        do throws(SystemError) { try fd.writeAll(bytes, at: Int64(offset)) } catch { throw named(error) }
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at end of file.
    func preadFully(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(SystemError) -> Int {
        var done = 0
        do throws(SystemError) {
            while done < buffer.count {
                let n = try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), at: Int64(offset + done))
                if n == 0 { break }
                done += n
            }
        } catch { throw named(error) }
        return done
    }

    func fdatasync() throws(SystemError) {
        do throws(SystemError) { try fd.fdatasync() } catch { throw named(error) }
    }

    /// Drops the file's clean pages below `end` (rounded down to a page)
    /// from `start` on from the page cache; returns the new start.
    func dropCachedPages(from start: Int, below end: Int) -> Int {
        let limit = end & ~4095
        guard limit > start else { return start }
        fd.dropCachedPages(offset: Int64(start), length: Int64(limit - start))
        return limit
    }

    func fsync() throws(SystemError) {
        do throws(SystemError) { try fd.fsync() } catch { throw named(error) }
    }

    func truncate(to length: Int) throws(SystemError) {
        do throws(SystemError) { try fd.truncate(to: Int64(length)) } catch { throw named(error) }
    }

    private func named(_ error: SystemError) -> SystemError {
        error.path == nil ? error.about(path) : error
    }
}

/// Whole-file and directory helpers of the log.
enum LogFiles {
    /// The whole file in one allocation (File.read grows in 64 KiB steps).
    static func readAll(_ path: String) throws(SystemError) -> [UInt8] {
        let file = try SegmentFile.open(path, .readOnly)
        defer { file.close() }
        let size = try file.size()
        var failure: SystemError?
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            do throws(SystemError) { initialized = try file.preadFully(into: UnsafeMutableRawBufferPointer(buffer), at: 0) } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// Copies `count` bytes at `offset` of `source` into a new file `destination`,
    /// fsync'd, directory fsync'd (used to keep what a recovery or repair cuts).
    static func keepCopy(of source: String, from offset: Int, length: Int? = nil, to destination: String) throws(SystemError) {
        let input = try SegmentFile.open(source, .readOnly)
        defer { input.close() }
        let size = try input.size()
        var bytes = [UInt8](repeating: 0, count: max(0, min(size - offset, length ?? Int.max)))
        var failure: SystemError?
        let n = bytes.withUnsafeMutableBytes { buffer -> Int in
            do throws(SystemError) { return try input.preadFully(into: buffer, at: offset) } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
        bytes.removeSubrange(n...)
        try AtomicFile.write(destination, bytes: bytes, mode: 0o640)
    }

    /// A name that does not exist yet: `base`, else `base.1`, `base.2`...
    static func unusedName(_ base: String) -> String {
        if !File.exists(base) { return base }
        var index = 1
        while File.exists("\(base).\(index)") { index += 1 }
        return "\(base).\(index)"
    }

    static func directoryOf(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
