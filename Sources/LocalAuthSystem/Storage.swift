// Storage: the file system as the event log uses it, as a port. The log's
// files (segments, seals, snapshots, the copies a recovery or a repair
// keeps) are opened, listed, renamed, removed and synced only through it:
// `DiskStorage` is the kernel's (FileDescriptor, which applies
// FaultInjection), and the deterministic simulator gives the log one in
// memory that tears writes, loses what was not synced at a crash and rots
// durable bytes (docs/decisions/0018-log-storage-port.md).
//
// An existential, not a generic parameter of the log: the log calls it once
// per loop turn (the turn's pwrite) and per fdatasync, never per record, so
// a dynamic call costs nothing measurable (callgrind per request, ibid.).
import Glibc

/// Where the log's files live.
public protocol Storage: AnyObject, Sendable {
    /// open(2) of a regular file.
    func open(
        _ path: String, _ access: FileDescriptor.AccessMode, options: FileDescriptor.OpenOptions, permissions: mode_t
    ) throws(SystemError) -> any StoredFile
    /// Whether `path` exists.
    func exists(_ path: String) -> Bool
    /// The names in a directory, without "." and "..", sorted bytewise.
    func entries(_ directory: String) throws(SystemError) -> [String]
    /// mkdir -p with exactly `mode`; existing directories are left alone.
    func createDirectory(_ path: String, mode: mode_t) throws(SystemError)
    /// rename(2): atomically replaces `destination`.
    func rename(_ source: String, to destination: String) throws(SystemError)
    func unlink(_ path: String) throws(SystemError)
    /// fsync(2) of a directory: the creates, renames and unlinks in it are durable.
    func syncDirectory(_ path: String) throws(SystemError)
    /// Bytes an unprivileged writer may still use on the file system of
    /// `path` (statvfs), nil when it cannot be told.
    func availableBytes(at path: String) -> Int64?
    /// Threads that may read it at once (the start hashes sealed segments
    /// on every CPU; the simulator's storage is read by one).
    var readers: Int { get }
    /// A fresh suffix for a temporary file's name (the simulator's are
    /// counted, so that one seed names its files alike in every run).
    func temporarySuffix() -> String
    /// Replaces the small file at `path` as AtomicFile does: readers and a
    /// crash see the old bytes or the new, never a mix.
    func writeAtomically(_ path: String, bytes: [UInt8], mode: mode_t) throws(SystemError)
}

/// An open file of a `Storage`. Errors carry no path: SegmentFile adds it.
public protocol StoredFile: AnyObject, Sendable {
    func size() throws(SystemError) -> Int
    /// pread(2): up to `buffer.count` bytes at `offset`, 0 at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(SystemError) -> Int
    /// pwrite(2) of all of `buffer` at `offset` (a failure may leave a prefix written).
    func writeAll(_ buffer: UnsafeRawBufferPointer, at offset: Int) throws(SystemError)
    func fdatasync() throws(SystemError)
    func fsync() throws(SystemError)
    func truncate(to size: Int) throws(SystemError)
    func chmod(_ mode: mode_t) throws(SystemError)
    /// A hint that the clean pages of the range may leave the page cache.
    func dropCachedPages(offset: Int, length: Int)
    /// fstatvfs's free bytes for an unprivileged writer.
    func availableBytes() throws(SystemError) -> Int64
    /// The same file through an open file description of its own (a
    /// writeback error is reported once per description, F-22), for a
    /// sync thread; a duplicate where that is impossible.
    func reopenedForSync() throws(SystemError) -> any StoredFile
    func close()
}

/// The kernel's file system.
public final class DiskStorage: Storage {
    public static let shared = DiskStorage()

    public init() {}

    public func open(
        _ path: String, _ access: FileDescriptor.AccessMode, options: FileDescriptor.OpenOptions, permissions: mode_t
    ) throws(SystemError) -> any StoredFile {
        DiskFile(try FileDescriptor.open(path, access, options: options, permissions: permissions))
    }

    public func exists(_ path: String) -> Bool { File.exists(path) }
    public func entries(_ directory: String) throws(SystemError) -> [String] { try Directory.entries(directory) }
    public func createDirectory(_ path: String, mode: mode_t) throws(SystemError) { try Directory.create(path, mode: mode) }
    public func rename(_ source: String, to destination: String) throws(SystemError) { try File.rename(source, to: destination) }
    public func unlink(_ path: String) throws(SystemError) { try File.unlink(path) }
    public func syncDirectory(_ path: String) throws(SystemError) { try Directory.fsync(path) }

    public func availableBytes(at path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    public var readers: Int { Processors.usable }
    public func temporarySuffix() -> String { SecureRandom.hex(bytes: 6) }

    /// AtomicFile's, relative to the directory's descriptor (PathWalk).
    public func writeAtomically(_ path: String, bytes: [UInt8], mode: mode_t) throws(SystemError) {
        try AtomicFile.write(path, bytes: bytes, mode: mode)
    }
}

/// A descriptor of the kernel's, closed by `close()` only.
public final class DiskFile: StoredFile {
    public let fd: FileDescriptor

    public init(_ fd: FileDescriptor) { self.fd = fd }

    public func size() throws(SystemError) -> Int { Int(try fd.size()) }

    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(SystemError) -> Int {
        try fd.read(into: buffer, at: Int64(offset))
    }

    public func writeAll(_ buffer: UnsafeRawBufferPointer, at offset: Int) throws(SystemError) {
        try fd.writeAll(buffer, at: Int64(offset))
    }

    public func fdatasync() throws(SystemError) { try fd.fdatasync() }
    public func fsync() throws(SystemError) { try fd.fsync() }
    public func truncate(to size: Int) throws(SystemError) { try fd.truncate(to: Int64(size)) }
    public func chmod(_ mode: mode_t) throws(SystemError) { try fd.chmod(mode) }
    public func dropCachedPages(offset: Int, length: Int) { fd.dropCachedPages(offset: Int64(offset), length: Int64(length)) }
    public func availableBytes() throws(SystemError) -> Int64 { try fd.availableBytes() }

    public func reopenedForSync() throws(SystemError) -> any StoredFile {
        if let reopened = try? fd.reopenedForWriting() { return DiskFile(reopened) }
        return DiskFile(try fd.duplicate())
    }

    public func close() { try? fd.close() }
}

extension StoredFile {
    /// `writeAll` of an array.
    public func writeAll(_ bytes: [UInt8], at offset: Int) throws(SystemError) {
        var failure: SystemError?
        bytes.withUnsafeBytes { raw in
            do throws(SystemError) { try writeAll(raw, at: offset) } catch { failure = error }
        }
        if let failure { throw failure }
    }
}

extension Storage {
    /// AtomicFile's steps through this storage's own calls (a storage with
    /// no directory descriptors: the simulator's): a temporary file in the
    /// same directory, fsync'd, renamed over `path`, the directory fsync'd.
    public func writeAtomicallyByRename(_ path: String, bytes: [UInt8], mode: mode_t) throws(SystemError) {
        let (directory, name) = AtomicFile.split(path)
        let temporary = directory + "/." + name + ".tmp-" + temporarySuffix()
        let file = try open(temporary, .writeOnly, options: [.create, .exclusiveCreate], permissions: mode)
        do throws(SystemError) {
            try file.chmod(mode)  // exactly `mode`, whatever the umask
            try file.writeAll(bytes, at: 0)
            try file.fsync()
            file.close()
        } catch {
            file.close()
            try? unlink(temporary)
            throw SystemError(call: error.call, errno: error.errno, path: temporary)
        }
        do throws(SystemError) {
            try rename(temporary, to: path)
        } catch {
            try? unlink(temporary)
            throw error
        }
        try syncDirectory(directory)
    }
}
