// SystemError: the one error type of the syscall layer. It names the call
// that failed (and the path, when there is one) and carries errno, so a log
// line reads "fdatasync: Input/output error" or
// "open /var/lib/localauthd/log/00000001.seg: No such file or directory".
import Glibc

public struct SystemError: Error, CustomStringConvertible, Hashable, Sendable {
    /// The C function that failed, e.g. "fdatasync".
    public let call: String
    /// The errno value it left.
    public let errno: Int32
    /// The path the call was about, if any.
    public let path: String?
    /// Why, when strerror would mislead (a file refused for what it is:
    /// a symlink another user placed, a FIFO where a file belongs).
    public let reason: String?

    public init(call: String, errno: Int32, path: String? = nil, reason: String? = nil) {
        self.call = call
        self.errno = errno
        self.path = path
        self.reason = reason
    }

    /// The same error about `path`.
    public func about(_ path: String) -> SystemError {
        SystemError(call: call, errno: errno, path: path, reason: reason)
    }

    /// The error for `call` from the thread's current errno.
    public static func current(_ call: String, path: String? = nil) -> SystemError {
        SystemError(call: call, errno: Glibc.errno, path: path)
    }

    /// strerror(errno), e.g. "Input/output error".
    public var message: String {
        if let reason { return reason }
        // Swift sees the XSI strerror_r, which fills `buffer` and returns 0.
        var buffer = [CChar](repeating: 0, count: 256)
        let rc = buffer.withUnsafeMutableBufferPointer { strerror_r(errno, $0.baseAddress!, $0.count) }
        guard rc == 0 else { return "errno \(errno)" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    public var description: String {
        if let path { return "\(call) \(path): \(message)" }
        return "\(call): \(message)"
    }

    /// True for EAGAIN / EWOULDBLOCK.
    public var isWouldBlock: Bool { errno == EAGAIN || errno == EWOULDBLOCK }
}
