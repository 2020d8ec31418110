// One protocol connection to localauthd (PROTOCOL.md), owned by one LAContext.
//
// Requests are written under tags `la1`, `la2`, ... from any thread (a lock
// serialises writes). A Dispatch read source on a private queue splits the
// replies into lines and routes each to the handler registered for its tag;
// the handler is called for every reply of that tag until the final one
// (OK/ERR), and once with `.lost` if the connection ends first. User code
// never runs on the reader queue, so a synchronous request made from a reply
// or prompt callback cannot deadlock the reader.

import Dispatch
import Foundation
import Glibc
import LocalAuthProtocol

/// What a request's handler receives.
enum LinkEvent: Sendable {
    case reply(Response)
    /// The connection ended (or could not be written) before a final reply.
    case lost(String)
}

/// Why a connection could not be made.
struct LinkFailure: Error, Sendable {
    var message: String
    var errno: Int32
}

final class DaemonLink: @unchecked Sendable {
    /// `$LOCALAUTHD_SOCKET` when set and not empty, else `/run/localauthd/socket`.
    static var defaultSocketPath: String {
        if let value = getenv("LOCALAUTHD_SOCKET"), value.pointee != 0 { return String(cString: value) }
        return "/run/localauthd/socket"
    }

    /// A safety net for synchronous requests (never reached by a live daemon):
    /// a stopped or wedged daemon must not hang the caller for ever.
    static let synchronousTimeout: DispatchTimeInterval = .seconds(30)

    let path: String
    private let fd: Int32
    private let lock = NSLock()
    private var splitter = LineSplitter()
    private var handlers: [String: @Sendable (LinkEvent) -> Void] = [:]
    /// Tags whose handler stays after the final reply (a `watch`'s STATE lines follow its OK).
    private var lasting: Set<String> = []
    private var counter = 0
    private var lostReason: String?
    private let queue = DispatchQueue(label: "LocalAuthentication.DaemonLink.reader")
    private var source: DispatchSourceRead?

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    /// Connects (non-blocking only in the sense that a missing or refusing
    /// socket fails at once).
    static func connect(path: String) -> Result<DaemonLink, LinkFailure> {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else {
            return .failure(LinkFailure(message: "the socket path is empty or too long", errno: ENAMETOOLONG))
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, b) in bytes.enumerated() { buffer[i] = b }
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(LinkFailure(message: String(cString: strerror(errno)), errno: errno)) }
        var rc: Int32
        repeat {
            rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        } while rc < 0 && errno == EINTR
        guard rc == 0 else {
            let code = errno
            Glibc.close(fd)
            return .failure(LinkFailure(message: String(cString: strerror(code)), errno: code))
        }
        let link = DaemonLink(path: path, fd: fd)
        link.startReading()
        return .success(link)
    }

    deinit {
        source?.cancel()
    }

    private func startReading() {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.readAvailable() }
        source.setCancelHandler { [fd] in _ = Glibc.close(fd) }
        self.source = source
        source.resume()
    }

    /// True once the connection ended.
    var isLost: Bool { lock.withLock { lostReason != nil } }

    /// Ends the connection; pending handlers get `.lost`.
    func close() {
        queue.async { self.lose("the connection was closed by the client") }
    }

    // MARK: Sending

    /// Sends a request; `handler` gets its replies on the reader queue, up to
    /// and including the final one, or `.lost`. Returns the tag.
    @discardableResult
    func send(_ verb: String, _ arguments: [(String, String)], lasting keep: Bool = false,
              handler: (@Sendable (LinkEvent) -> Void)?) -> String {
        lock.lock()
        counter += 1
        let tag = "la\(counter)"
        if let reason = lostReason {
            lock.unlock()
            if let handler { queue.async { handler(.lost(reason)) } }
            return tag
        }
        if let handler { handlers[tag] = handler }
        if keep { lasting.insert(tag) }
        var writer = LineWriter()
        writer.beginRequest(tag: tag, verb: verb)
        for (key, value) in arguments { writer.append(key: key, value: value) }
        writer.endLine()
        let written = writeAll(writer.bytes)
        lock.unlock()
        if !written { queue.async { self.lose("writing to localauthd failed: \(String(cString: strerror(errno)))") } }
        return tag
    }

    /// Stops routing a lasting tag's replies (after `cancel-watch`).
    func forget(_ tag: String) {
        lock.withLock {
            handlers[tag] = nil
            lasting.remove(tag)
        }
    }

    /// Sends a request and waits for its final reply (never call from the reader queue).
    func request(_ verb: String, _ arguments: [(String, String)] = []) -> LinkEvent {
        let box = EventBox()
        let done = DispatchSemaphore(value: 0)
        send(verb, arguments) { event in
            if case .reply(let response) = event, !response.isFinal { return }
            box.event = event
            done.signal()
        }
        if done.wait(timeout: .now() + DaemonLink.synchronousTimeout) == .timedOut {
            close()
            return .lost("localauthd did not answer '\(verb)'")
        }
        return box.event ?? .lost("no answer")
    }

    /// Called with `lock` held.
    private func writeAll(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    // MARK: Receiving (reader queue)

    private func readAvailable() {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 {
            if errno == EINTR || errno == EAGAIN { return }
            return lose("reading from localauthd failed: \(String(cString: strerror(errno)))")
        }
        if n == 0 { return lose("localauthd closed the connection") }
        splitter.append(contentsOf: chunk[..<n])
        while let event = splitter.next() {
            switch event {
            case .lineTooLong:
                return lose("localauthd sent a line longer than 8192 bytes")
            case .line(let line):
                guard let response = try? Response.parse(line) else { continue }
                route(response)
            }
        }
    }

    private func route(_ response: Response) {
        if response.status == .bye {
            return lose("localauthd closed the connection (\(response.arguments.value(for: "reason") ?? "bye"))")
        }
        let handler: (@Sendable (LinkEvent) -> Void)? = lock.withLock {
            let handler = handlers[response.tag]
            if response.isFinal, !lasting.contains(response.tag) || response.status == .err {
                handlers[response.tag] = nil
                lasting.remove(response.tag)
            }
            return handler
        }
        handler?(.reply(response))
    }

    private func lose(_ reason: String) {
        let pending: [@Sendable (LinkEvent) -> Void] = lock.withLock {
            guard lostReason == nil else { return [] }
            lostReason = reason
            defer { handlers.removeAll() }
            return Array(handlers.values)
        }
        source?.cancel()
        for handler in pending { handler(.lost(reason)) }
    }
}

private final class EventBox: @unchecked Sendable {
    var event: LinkEvent?
}
