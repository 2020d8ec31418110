// UnixSocket: the daemon's AF_UNIX SOCK_STREAM endpoints. The listener and
// accepted connections are non-blocking (they live on the epoll loop);
// `connect` is blocking, for clients and tests. Send uses MSG_NOSIGNAL so a
// vanished peer is an EPIPE error, not a SIGPIPE that kills the daemon.
import CLocalAuthShim
import Glibc

public enum UnixSocket {
    /// A non-blocking listening socket bound at `path`. A stale socket file
    /// left by an earlier run (nobody accepts on it) is removed; a socket
    /// somebody listens on is EADDRINUSE and any other file EEXIST, never
    /// deleted: a second daemon must not take the first one's clients.
    ///
    /// The socket is bound relative to its directory's descriptor
    /// (`/proc/self/fd/N/NAME`, N found by PathWalk), and made with exactly
    /// `mode` by the umask in force during bind(2): nothing is chmod'ed by
    /// path afterwards, so no symlink swapped in after the bind can turn the
    /// chmod onto another file (issue 27 item 2). The umask is the
    /// process's: a file another thread creates in those microseconds gets
    /// at most `mode`'s complement cleared, and this layer's own files set
    /// their modes with fchmod anyway.
    public static func listen(path: String, mode: mode_t = 0o666, backlog: Int32 = 128) throws(SystemError) -> FileDescriptor {
        let (directory, name) = try PathWalk.parent(path, followingFinal: false)
        defer { try? directory.close() }
        if let info = PathWalk.status(directory, name) {
            guard info.st_mode & S_IFMT == S_IFSOCK else { throw SystemError(call: "bind", errno: EEXIST, path: path) }
            if isListening(path) { throw SystemError(call: "bind", errno: EADDRINUSE, path: path) }
            _ = try retryOnInterrupt("unlink", path: path) { unlinkat(directory.rawValue, name, 0) }
        }
        let fd = try socket(nonBlocking: true)
        do throws(SystemError) {
            var address = try address("/proc/self/fd/\(directory.rawValue)/\(name)")
            let previous = umask(~mode & 0o777)
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd.rawValue, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            let code = errno
            umask(previous)
            if rc != 0 { throw SystemError(call: "bind", errno: code, path: path) }
            _ = try retryOnInterrupt("listen", path: path) { Glibc.listen(fd.rawValue, backlog) }
            return fd
        } catch {
            try? fd.close()
            throw error
        }
    }

    /// Whether a process listens on the socket file at `path`: a connect
    /// that is accepted (or queued: EAGAIN when the backlog is full) says
    /// yes; ECONNREFUSED (a stale file) or any other failure says no.
    public static func isListening(_ path: String) -> Bool {
        guard let fd = try? socket(nonBlocking: true) else { return false }
        defer { try? fd.close() }
        guard var address = try? address(path) else { return false }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd.rawValue, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return rc == 0 || errno == EAGAIN || errno == EINPROGRESS
    }

    /// The file a socket was bound to, to remove it at exit only if it is
    /// still ours (a successor may have bound the path since).
    public struct BoundFile: Sendable, Equatable {
        let device: UInt64, inode: UInt64

        public init?(path: String) {
            guard let (directory, name) = try? PathWalk.parent(path, followingFinal: false) else { return nil }
            defer { try? directory.close() }
            guard let info = PathWalk.status(directory, name), info.st_mode & S_IFMT == S_IFSOCK else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }

        /// Unlinks `path` when it is still this socket file.
        public func remove(_ path: String) {
            guard BoundFile(path: path) == self else { return }
            try? File.unlink(path)
        }
    }

    /// The path a listening Unix socket is bound to (getsockname), or nil
    /// for an unnamed or abstract one: names a socket systemd passed.
    public static func boundPath(_ fd: FileDescriptor) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let rc = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd.rawValue, $0, &length) }
        }
        guard rc == 0, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let path = withUnsafeBytes(of: address.sun_path) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return path.isEmpty ? nil : path
    }

    /// A new connection, non-blocking and close-on-exec, or nil when none is waiting.
    public static func accept(_ listener: FileDescriptor) throws(SystemError) -> FileDescriptor? {
        let fd = try retryOnInterruptUnlessWouldBlock("accept4") {
            la_accept4(listener.rawValue, LA_SOCK_NONBLOCK | LA_SOCK_CLOEXEC)
        }
        return fd.map(FileDescriptor.init(rawValue:))
    }

    /// A blocking connection to the socket at `path`.
    public static func connect(path: String) throws(SystemError) -> FileDescriptor {
        let fd = try socket(nonBlocking: false)
        do throws(SystemError) {
            var address = try address(path)
            var interrupted = false
            while true {
                let rc = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        Glibc.connect(fd.rawValue, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
                if rc == 0 { break }
                // An interrupted connect goes on in the kernel; asking again
                // then reports EISCONN once it has completed.
                if errno == EINTR || (interrupted && errno == EALREADY) {
                    interrupted = true
                    continue
                }
                if interrupted && errno == EISCONN { break }
                throw SystemError.current("connect", path: path)
            }
            return fd
        } catch {
            try? fd.close()
            throw error
        }
    }

    /// socketpair(2): two connected, blocking, close-on-exec stream sockets.
    public static func pair() throws(SystemError) -> (FileDescriptor, FileDescriptor) {
        var fds: [Int32] = [-1, -1]
        _ = try retryOnInterrupt("socketpair") {
            socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | LA_SOCK_CLOEXEC, 0, &fds)
        }
        return (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
    }

    private static func socket(nonBlocking: Bool) throws(SystemError) -> FileDescriptor {
        let type = Int32(SOCK_STREAM.rawValue) | LA_SOCK_CLOEXEC | (nonBlocking ? LA_SOCK_NONBLOCK : 0)
        return FileDescriptor(rawValue: try retryOnInterrupt("socket") { Glibc.socket(AF_UNIX, type, 0) })
    }

    private static func address(_ path: String) throws(SystemError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else {
            throw SystemError(call: "bind", errno: ENAMETOOLONG, path: path)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return address
    }
}

extension FileDescriptor {
    /// Sets or clears O_NONBLOCK.
    public func setNonBlocking(_ nonBlocking: Bool = true) throws(SystemError) {
        let flags = try retryOnInterrupt("fcntl") { fcntl(rawValue, F_GETFL) }
        let wanted = nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        if wanted != flags { _ = try retryOnInterrupt("fcntl") { fcntl(rawValue, F_SETFL, wanted) } }
    }

    /// SO_RCVTIMEO: a blocking receive gives up (EAGAIN) after `seconds`.
    public func setReceiveTimeout(seconds: Int) throws(SystemError) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        _ = try retryOnInterrupt("setsockopt") {
            setsockopt(rawValue, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    /// send(2) with MSG_NOSIGNAL: bytes sent, or nil when the socket would block.
    public func send(_ buffer: UnsafeRawBufferPointer) throws(SystemError) -> Int? {
        try retryOnInterruptUnlessWouldBlock("send") {
            Glibc.send(rawValue, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
        }
    }

    public func send(_ bytes: [UInt8]) throws(SystemError) -> Int? {
        var result: Result<Int?, SystemError> = .success(nil)
        bytes.withUnsafeBytes { buffer in
            do throws(SystemError) { result = .success(try send(buffer)) } catch { result = .failure(error) }
        }
        return try result.get()
    }

    /// recv(2): bytes received, 0 at end of stream, nil when it would block.
    public func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
        try retryOnInterruptUnlessWouldBlock("recv") { recv(rawValue, buffer.baseAddress, buffer.count, 0) }
    }
}
