// How every wrapper calls into C: a call that returns -1 and sets errno is
// retried on EINTR, and any other failure becomes a SystemError naming the
// call. Non-blocking calls use the second form, where EAGAIN means
// "would block" and comes back as nil instead of an error.
import Glibc

/// Runs `body` (a C call returning -1 with errno on failure) until it does
/// not fail with EINTR; other failures throw `SystemError(call:errno:path:)`.
@inlinable
public func retryOnInterrupt<T: FixedWidthInteger>(
    _ call: String, path: String? = nil, _ body: () -> T
) throws(SystemError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = Glibc.errno
        if code == EINTR { continue }
        throw SystemError(call: call, errno: code, path: path)
    }
}

/// Like `retryOnInterrupt`, but EAGAIN / EWOULDBLOCK returns nil ("would block").
@inlinable
public func retryOnInterruptUnlessWouldBlock<T: FixedWidthInteger>(
    _ call: String, path: String? = nil, _ body: () -> T
) throws(SystemError) -> T? {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = Glibc.errno
        if code == EINTR { continue }
        if code == EAGAIN || code == EWOULDBLOCK { return nil }
        throw SystemError(call: call, errno: code, path: path)
    }
}
