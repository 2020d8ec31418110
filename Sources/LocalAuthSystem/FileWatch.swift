// FileWatch: inotify on the directory of one file, so that a thread can
// block until that file changes instead of looking at it on a clock (S-82).
// The directory is watched, not the file: passwd(1) and vipw replace the
// shadow file by a rename (IN_MOVED_TO), which a watch on the old inode
// would not see. Events that name other files are read and dropped.
import Glibc

public final class FileWatch: @unchecked Sendable {
    public let fileDescriptor: FileDescriptor
    private let name: String

    /// Watches `path`'s directory for changes to `path`; throws when inotify
    /// cannot watch it (no such directory, no read access, no watches left).
    public init(file path: String) throws(SystemError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { throw SystemError(call: "inotify_init1", errno: errno) }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
        guard inotify_add_watch(fd, directory, mask) >= 0 else {
            let error = SystemError(call: "inotify_add_watch", errno: errno, path: directory)
            Glibc.close(fd)
            throw error
        }
        fileDescriptor = FileDescriptor(rawValue: fd)
    }

    /// Blocks until an event is ready, then reads them all: whether one
    /// named the file (or events were lost, which may hide one).
    public func waitForChange() -> Bool {
        var descriptor = pollfd(fd: fileDescriptor.rawValue, events: Int16(POLLIN), revents: 0)
        while poll(&descriptor, 1, -1) < 0 {
            if errno != EINTR { return true }
        }
        return readEvents()
    }

    /// Reads what is queued (non-blocking): whether an event named the file.
    public func readEvents() -> Bool {
        var changed = false
        let size = 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(fileDescriptor.rawValue, buffer, size)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return changed }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let length = Int(event.len)
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    changed = true
                } else if length > 0, offset + header + length <= count {
                    let bytes = UnsafeRawBufferPointer(start: buffer + offset + header, count: length)
                    let eventName = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
                    if eventName == name { changed = true }
                }
                offset += header + length
            }
        }
    }
}
