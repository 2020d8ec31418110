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
    private var splitter = LineSplitter()
    private var counter = 0

    private init(path: String, fileDescriptor: FileDescriptor) {
        self.path = path
        self.fileDescriptor = fileDescriptor
    }

    deinit { try? fileDescriptor.close() }

    static func connect(_ path: String) throws(CommandFailure) -> DaemonClient {
        do throws(SystemError) {
            return DaemonClient(path: path, fileDescriptor: try UnixSocket.connect(path: path))
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

    /// The next complete reply already read, if any.
    func buffered() throws(CommandFailure) -> Response? {
        guard let event = splitter.next() else { return nil }
        switch event {
        case .lineTooLong:
            throw CommandFailure("Failed to read from localauthd: a reply line is longer than 8192 bytes")
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
