// The log's files, on top of the Storage port (LocalAuthSystem/Storage.swift:
// the kernel's FileDescriptor, which retries EINTR and applies FaultInjection,
// or the simulator's memory). This adapter adds the path to every error, so a
// failure reads "fdatasync /var/lib/localauthd/log/0000000000000001.seg:
// Input/output error".

import Glibc
import LocalAuthSystem

/// An open file of the log or snapshot directory.
struct SegmentFile {
    let file: any StoredFile
    let path: String

    static func open(
        _ storage: any Storage, _ path: String, _ access: FileDescriptor.AccessMode,
        options: FileDescriptor.OpenOptions = [], permissions: mode_t = 0o640
    ) throws(SystemError) -> SegmentFile {
        do throws(SystemError) {
            return SegmentFile(file: try storage.open(path, access, options: options, permissions: permissions), path: path)
        } catch {
            throw error.path == nil ? SystemError(call: error.call, errno: error.errno, path: path) : error
        }
    }

    func close() { file.close() }

    func size() throws(SystemError) -> Int {
        do throws(SystemError) { return try file.size() } catch { throw named(error) }
    }

    func pwriteAll(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(SystemError) {
        do throws(SystemError) { try file.writeAll(bytes, at: offset) } catch { throw named(error) }
    }

    func pwriteAll(_ bytes: [UInt8], at offset: Int) throws(SystemError) {
        do throws(SystemError) { try file.writeAll(bytes, at: offset) } catch { throw named(error) }
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at end of file.
    /// Up to `count` bytes from `offset` (fewer at the end of the file).
    func bytes(count: Int, at offset: Int) throws(SystemError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var failure: SystemError?
        let n = bytes.withUnsafeMutableBytes { buffer -> Int in
            do throws(SystemError) { return try preadFully(into: buffer, at: offset) } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
        bytes.removeSubrange(n...)
        return bytes
    }

    func preadFully(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(SystemError) -> Int {
        var done = 0
        do throws(SystemError) {
            while done < buffer.count {
                let n = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), at: offset + done)
                if n == 0 { break }
                done += n
            }
        } catch { throw named(error) }
        return done
    }

    func fdatasync() throws(SystemError) {
        do throws(SystemError) { try file.fdatasync() } catch { throw named(error) }
    }

    /// Drops the file's clean pages below `end` (rounded down to a page)
    /// from `start` on from the page cache; returns the new start.
    func dropCachedPages(from start: Int, below end: Int) -> Int {
        let limit = end & ~4095
        guard limit > start else { return start }
        file.dropCachedPages(offset: start, length: limit - start)
        return limit
    }

    func fsync() throws(SystemError) {
        do throws(SystemError) { try file.fsync() } catch { throw named(error) }
    }

    func truncate(to length: Int) throws(SystemError) {
        do throws(SystemError) { try file.truncate(to: length) } catch { throw named(error) }
    }

    func chmod(_ mode: mode_t) throws(SystemError) {
        do throws(SystemError) { try file.chmod(mode) } catch { throw named(error) }
    }

    /// The same file on a description of its own, for a sync thread.
    func reopenedForSync() throws(SystemError) -> SegmentFile {
        do throws(SystemError) { return SegmentFile(file: try file.reopenedForSync(), path: path) } catch { throw named(error) }
    }

    private func named(_ error: SystemError) -> SystemError {
        error.path == nil ? error.about(path) : error
    }
}

/// Whole-file and directory helpers of the log.
enum LogFiles {
    /// The whole file in one allocation (File.read grows in 64 KiB steps).
    static func readAll(_ storage: any Storage, _ path: String) throws(SystemError) -> [UInt8] {
        let file = try SegmentFile.open(storage, path, .readOnly)
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
    static func keepCopy(
        _ storage: any Storage, of source: String, from offset: Int, length: Int? = nil, to destination: String
    ) throws(SystemError) {
        let input = try SegmentFile.open(storage, source, .readOnly)
        defer { input.close() }
        let size = try input.size()
        let bytes = try input.bytes(count: max(0, min(size - offset, length ?? Int.max)), at: offset)
        try storage.writeAtomically(destination, bytes: bytes, mode: 0o640)
    }

    /// A name that does not exist yet: `base`, else `base.1`, `base.2`...
    static func unusedName(_ storage: any Storage, _ base: String) -> String {
        if !storage.exists(base) { return base }
        var index = 1
        while storage.exists("\(base).\(index)") { index += 1 }
        return "\(base).\(index)"
    }

    static func directoryOf(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
