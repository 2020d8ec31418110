// FileDescriptor: a bare Int32 with one method per file call. It does not own
// the descriptor (no deinit); whoever opens it closes it, as in swift-system.
// Every open is O_CLOEXEC so descriptors never leak into helper processes.
// write, pwrite, fdatasync and fsync consult FaultInjection first.
import Glibc

public struct FileDescriptor: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let standardInput = FileDescriptor(rawValue: 0)
    public static let standardOutput = FileDescriptor(rawValue: 1)
    public static let standardError = FileDescriptor(rawValue: 2)

    public var description: String { "fd \(rawValue)" }

    public enum AccessMode: Sendable {
        case readOnly, writeOnly, readWrite

        var flags: Int32 {
            switch self {
            case .readOnly: O_RDONLY
            case .writeOnly: O_WRONLY
            case .readWrite: O_RDWR
            }
        }
    }

    public struct OpenOptions: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        public static let create = OpenOptions(rawValue: O_CREAT)
        public static let exclusiveCreate = OpenOptions(rawValue: O_EXCL)
        public static let truncate = OpenOptions(rawValue: O_TRUNC)
        public static let append = OpenOptions(rawValue: O_APPEND)
        public static let directory = OpenOptions(rawValue: O_DIRECTORY)
        public static let noFollow = OpenOptions(rawValue: O_NOFOLLOW)
    }

    /// openat(2) with O_CLOEXEC and O_NOFOLLOW on the last component of
    /// `path`, found by PathWalk (no symlink is followed in a directory
    /// another user can change; `.noFollow` follows none at the end);
    /// `permissions` applies when the file is created (less the umask).
    /// Without `.directory` the file must be a regular file: it is opened
    /// with O_NONBLOCK, so that a FIFO or a device put in its place cannot
    /// hang the open, and refused when fstat says it is anything else
    /// (issue 27 item 11). O_NONBLOCK stays set: it changes nothing for a
    /// regular file.
    public static func open(
        _ path: String, _ access: AccessMode, options: OpenOptions = [], permissions: mode_t = 0o600
    ) throws(SystemError) -> FileDescriptor {
        let (directory, name) = try PathWalk.parent(path, followingFinal: !options.contains(.noFollow))
        defer { try? directory.close() }
        return try openat(directory, name, access, options: options, permissions: permissions, path: path)
    }

    /// The same, for `name` in the open `directory` (`path` names it in errors).
    public static func openat(
        _ directory: FileDescriptor, _ name: String, _ access: AccessMode, options: OpenOptions = [],
        permissions: mode_t = 0o600, path: String? = nil
    ) throws(SystemError) -> FileDescriptor {
        let isDirectory = options.contains(.directory)
        let flags = access.flags | options.rawValue | O_CLOEXEC | O_NOFOLLOW | (isDirectory ? 0 : O_NONBLOCK)
        let raw: Int32
        do throws(SystemError) {
            raw = try retryOnInterrupt("open", path: path ?? name) { Glibc.openat(directory.rawValue, name, flags, permissions) }
        } catch where error.errno == ELOOP
            || (error.errno == ENOTDIR && PathWalk.status(directory, name).map { $0.st_mode & S_IFMT == S_IFLNK } == true) {
            throw PathWalk.unfollowed(path ?? name)
        } catch where error.errno == ENXIO && !isDirectory {
            // O_NONBLOCK | O_WRONLY on a FIFO nobody reads, or a device without its driver.
            throw SystemError(call: "open", errno: ENXIO, path: path ?? name, reason: "not a regular file")
        }
        let fd = FileDescriptor(rawValue: raw)
        if !isDirectory {
            var info = stat()
            guard fstat(fd.rawValue, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                try? fd.close()
                throw SystemError(call: "open", errno: EINVAL, path: path ?? name, reason: "not a regular file")
            }
        }
        return fd
    }

    /// A second descriptor for the same open file (F_DUPFD_CLOEXEC): its
    /// owner can close it on its own schedule.
    public func duplicate() throws(SystemError) -> FileDescriptor {
        let fd = fcntl(rawValue, F_DUPFD_CLOEXEC, 0)
        if fd == -1 { throw .current("fcntl(F_DUPFD_CLOEXEC)") }
        return FileDescriptor(rawValue: fd)
    }

    /// A new open file description of the same file (open of
    /// /proc/self/fd/N for writing), not a `duplicate`: Linux reports a
    /// writeback error to the first fsync/fdatasync on each open file
    /// description, once, so two threads syncing through duplicates of one
    /// description could see it once between them, and the one told
    /// "success" could publish records as durable that never reached the
    /// disk (F-22). Each description opened here gets the error at its own
    /// next sync.
    public func reopenedForWriting() throws(SystemError) -> FileDescriptor {
        let path = "/proc/self/fd/\(rawValue)"
        let fd = try retryOnInterrupt("open", path: path) { Glibc.open(path, O_WRONLY | O_CLOEXEC) }
        return FileDescriptor(rawValue: fd)
    }

    /// close(2). Not retried on EINTR: Linux has released the descriptor by then.
    public func close() throws(SystemError) {
        if Glibc.close(rawValue) == -1, errno != EINTR { throw .current("close") }
    }

    // MARK: Reading

    /// read(2): bytes read, 0 at end of file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        try retryOnInterrupt("read") { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// pread(2) at `offset`: bytes read, 0 at end of file.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        try retryOnInterrupt("pread") { Glibc.pread(rawValue, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    // MARK: Writing

    /// write(2): bytes written, possibly fewer than `buffer.count`.
    public func write(_ buffer: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        if let code = FaultInjection.injectedError(.write) { throw SystemError(call: "write", errno: code) }
        return try retryOnInterrupt("write") { Glibc.write(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// pwrite(2) at `offset`: bytes written, possibly fewer than `buffer.count`.
    public func write(_ buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        if let code = FaultInjection.injectedError(.pwrite) { throw SystemError(call: "pwrite", errno: code) }
        return try retryOnInterrupt("pwrite") {
            Glibc.pwrite(rawValue, buffer.baseAddress, buffer.count, off_t(offset))
        }
    }

    /// Writes all of `buffer`, continuing after short writes (blocking files).
    public func writeAll(_ buffer: UnsafeRawBufferPointer) throws(SystemError) {
        var done = 0
        while done < buffer.count {
            done += try write(UnsafeRawBufferPointer(rebasing: buffer[done...]))
        }
    }

    public func writeAll(_ bytes: [UInt8]) throws(SystemError) {
        var failure: SystemError?
        bytes.withUnsafeBytes { buffer in
            do throws(SystemError) { try writeAll(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Writes all of `buffer` at `offset`, continuing after short writes.
    public func writeAll(_ buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) {
        var done = 0
        while done < buffer.count {
            done += try write(UnsafeRawBufferPointer(rebasing: buffer[done...]), at: offset + Int64(done))
        }
    }

    public func writeAll(_ bytes: [UInt8], at offset: Int64) throws(SystemError) {
        var failure: SystemError?
        bytes.withUnsafeBytes { buffer in
            do throws(SystemError) { try writeAll(buffer, at: offset) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    // MARK: Durability and size

    /// fdatasync(2): the data (and the size) reach the disk.
    public func fdatasync() throws(SystemError) {
        if let code = FaultInjection.injectedError(.fdatasync) { throw SystemError(call: "fdatasync", errno: code) }
        _ = try retryOnInterrupt("fdatasync") { Glibc.fdatasync(rawValue) }
    }

    /// fsync(2): data and metadata reach the disk.
    public func fsync() throws(SystemError) {
        if let code = FaultInjection.injectedError(.fsync) { throw SystemError(call: "fsync", errno: code) }
        _ = try retryOnInterrupt("fsync") { Glibc.fsync(rawValue) }
    }

    /// posix_fadvise(POSIX_FADV_DONTNEED) on `offset..<offset+length`: the
    /// kernel drops those pages from the page cache if they are clean. A
    /// hint: it never fails the caller.
    public func dropCachedPages(offset: Int64, length: Int64) {
        guard length > 0 else { return }
        _ = posix_fadvise(rawValue, off_t(offset), off_t(length), POSIX_FADV_DONTNEED)
    }

    /// Bytes an unprivileged writer may still use on this file's filesystem
    /// (fstatvfs: f_bavail × f_frsize).
    public func availableBytes() throws(SystemError) -> Int64 {
        var info = statvfs()
        if fstatvfs(rawValue, &info) == -1 { throw .current("fstatvfs") }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// ftruncate(2).
    public func truncate(to size: Int64) throws(SystemError) {
        _ = try retryOnInterrupt("ftruncate") { Glibc.ftruncate(rawValue, off_t(size)) }
    }

    /// st_size from fstat(2).
    public func size() throws(SystemError) -> Int64 {
        var info = stat()
        _ = try retryOnInterrupt("fstat") { Glibc.fstat(rawValue, &info) }
        return Int64(info.st_size)
    }

    public enum SeekOrigin: Sendable {
        case start, current, end

        var whence: Int32 {
            switch self {
            case .start: SEEK_SET
            case .current: SEEK_CUR
            case .end: SEEK_END
            }
        }
    }

    /// lseek(2): the new offset.
    @discardableResult
    public func seek(to offset: Int64, from origin: SeekOrigin = .start) throws(SystemError) -> Int64 {
        Int64(try retryOnInterrupt("lseek") { Glibc.lseek(rawValue, off_t(offset), origin.whence) })
    }

    /// fchmod(2).
    public func chmod(_ mode: mode_t) throws(SystemError) {
        _ = try retryOnInterrupt("fchmod") { Glibc.fchmod(rawValue, mode) }
    }
}
