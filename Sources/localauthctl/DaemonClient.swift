// One connection to the daemon, speaking PROTOCOL.md: requests are written
// with LineWriter under tags c1, c2, ...; replies are split by LineSplitter
// and parsed by Response.parse. The socket is blocking; the evaluate loop
// polls `fileDescriptor` itself and drains complete lines with `buffered()`.

import Glibc
import LocalAuthProtocol
import LocalAuthSystem

final class DaemonClient {
    let path: String
    let fileDescriptor: FileDescriptor
    private var splitter: LineSplitter
    private var counter = 0

    private init(path: String, fileDescriptor: FileDescriptor, maximumLineLength: Int) {
        self.path = path
        self.fileDescriptor = fileDescriptor
        splitter = LineSplitter(maximumLineLength: maximumLineLength)
    }

    deinit { try? fileDescriptor.close() }

    /// `maximumLineLength`: 8192, the protocol's; a session agent takes
    /// 32768 (PROTOCOL.md 1.3: a PROMPT relays three of the app's strings).
    static func connect(_ path: String, maximumLineLength: Int = LineSplitter.defaultMaximumLineLength)
        throws(CommandFailure) -> DaemonClient {
        do throws(SystemError) {
            return DaemonClient(path: path, fileDescriptor: try UnixSocket.connect(path: path), maximumLineLength: maximumLineLength)
        } catch {
            var hint = ""
            if error.errno == ENOENT || error.errno == ECONNREFUSED { hint = " (is localauthd running? see --socket)" }
            throw CommandFailure("Failed to connect to localauthd at \(path): \(error.message)\(hint)",
                                 status: ExitStatus.unreachable)
        }
    }

    /// Writes one request; returns its tag.
    @discardableResult
    func send(_ verb: String, _ arguments: [(String, String)] = []) throws(CommandFailure) -> String {
        counter += 1
        let tag = "c\(counter)"
        var writer = LineWriter()
        writer.beginRequest(tag: tag, verb: verb)
        for (key, value) in arguments { writer.append(key: key, value: value) }
        writer.endLine()
        do throws(SystemError) { try fileDescriptor.writeAll(writer.bytes) } catch {
            throw CommandFailure("Failed to send '\(verb)' to localauthd: \(error.message)")
        }
        return tag
    }

    /// Writes one request whose last value is a secret, from bytes that
    /// never become a String: the line is built in a buffer of its own and
    /// wiped once written (S-50's care, on the client's side). False when
    /// the secret holds a control character the protocol cannot quote.
    @discardableResult
    func sendSecret(_ verb: String, _ arguments: [(String, String)], key: String,
                    secret: UnsafeBufferPointer<UInt8>) throws(CommandFailure) -> String? {
        guard !secret.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else { return nil }
        counter += 1
        let tag = "c\(counter)"
        var head = LineWriter()
        head.beginRequest(tag: tag, verb: verb)
        for (key, value) in arguments { head.append(key: key, value: value) }
        let capacity = head.bytes.count + key.utf8.count + 4 + secret.count * 2 + 2
        let line = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: capacity)
        defer {
            SecretMemory.wipe(UnsafeMutableRawPointer(line.baseAddress!), count: capacity)
            line.deallocate()
        }
        var count = 0
        func put(_ byte: UInt8) {
            line[count] = byte
            count += 1
        }
        for byte in head.bytes { put(byte) }
        put(0x20)
        for byte in key.utf8 { put(byte) }
        put(UInt8(ascii: "="))
        put(UInt8(ascii: "\""))
        for byte in secret {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): put(UInt8(ascii: "\\")); put(byte)
            case 0x09: put(UInt8(ascii: "\\")); put(UInt8(ascii: "t"))
            default: put(byte)
            }
        }
        put(UInt8(ascii: "\""))
        put(0x0A)
        do throws(SystemError) {
            try fileDescriptor.writeAll(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(line)[..<count]))
        } catch {
            throw CommandFailure("Failed to send '\(verb)' to localauthd: \(error.message)")
        }
        return tag
    }

    /// The next complete reply already read, if any.
    func buffered() throws(CommandFailure) -> Response? {
        guard let event = splitter.next() else { return nil }
        switch event {
        case .lineTooLong:
            throw CommandFailure("Failed to read from localauthd: a reply line is longer than \(splitter.maximumLineLength) bytes")
        case .line(let line):
            do throws(ProtocolError) { return try Response.parse(line) } catch {
                throw CommandFailure("Failed to read from localauthd: unparsable reply (\(error.message))")
            }
        }
    }

    /// One read(2) into the splitter; false at end of stream.
    func fill() throws(CommandFailure) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var failure: SystemError?
        let count = chunk.withUnsafeMutableBytes { buffer -> Int in
            do throws(SystemError) { return try fileDescriptor.receive(into: buffer) ?? 0 } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw CommandFailure("Failed to read from localauthd: \(failure.message)") }
        guard count > 0 else { return false }
        splitter.append(contentsOf: chunk[..<count])
        return true
    }

    /// The next reply, blocking; nil when the daemon closed the connection.
    func receive() throws(CommandFailure) -> Response? {
        while true {
            if let response = try buffered() { return response }
            guard try fill() else { return nil }
        }
    }

    /// Sends a request and waits for its final reply; prompts and other tags
    /// are passed to `other` (or dropped).
    func call(
        _ verb: String, _ arguments: [(String, String)] = [], other: (Response) -> Void = { _ in }
    ) throws(CommandFailure) -> Response {
        let tag = try send(verb, arguments)
        while let response = try receive() {
            if response.tag == tag && response.isFinal { return response }
            if response.status == .bye {
                throw CommandFailure("localauthd closed the connection (\(response.arguments.value(for: "reason") ?? "no reason"))",
                                     status: ExitStatus.unreachable)
            }
            other(response)
        }
        throw CommandFailure("localauthd closed the connection before answering '\(verb)'", status: ExitStatus.unreachable)
    }

    /// Like `call`, but an ERR becomes a CommandFailure in the house format.
    func expectOK(_ verb: String, _ arguments: [(String, String)] = []) throws(CommandFailure) -> Response {
        let response = try call(verb, arguments)
        if response.status == .err {
            throw CommandFailure(DaemonClient.describe(error: response), status: DaemonClient.exitStatus(response))
        }
        return response
    }

    /// For a final reply: done, no (an LAError) or refused (a protocol error).
    static func exitStatus(_ response: Response) -> Int32 {
        guard response.status == .err else { return ExitStatus.done }
        return response.errorDomain == "la" ? ExitStatus.no : ExitStatus.refused
    }

    /// `MESSAGE (NAME)` for a protocol error; for an LAError also the code
    /// and, when present, retry-after and reason.
    static func describe(error response: Response) -> String {
        let message = response.message ?? "request failed"
        let name = response.errorName ?? "error"
        guard response.errorDomain == "la" else { return "\(message) (\(name))" }
        var text = "\(message) (\(name), code \(response.errorCode.map(String.init) ?? "?"))"
        if let retry = response.arguments.value(for: "retry-after") { text += "; try again in \(retry) s" }
        if let reason = response.arguments.value(for: "reason") { text += "; reason: \(reason)" }
        return text
    }
}
