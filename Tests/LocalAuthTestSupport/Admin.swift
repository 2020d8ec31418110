// Admin: the root test process as the daemon's administrator, for the
// client-side suites (LAContext, localauthctl): it enrolls, sets passcodes and
// feeds the simulated sensor with `VERB KEY=VALUE...` commands, tagging them
// itself, and answers with the final reply as a dictionary (`status` plus the
// arguments). A thin layer over Client, which does the socket and the parsing.
import LocalAuthProtocol
import XCTest

public final class Admin: @unchecked Sendable {
    private let client: Client
    private var counter = 0

    public init(_ socketPath: String) throws {
        client = try Client(socketPath: socketPath)
    }

    /// Sends `VERB KEY=VALUE...` without waiting; returns the tag.
    @discardableResult
    public func send(_ command: String) -> String {
        counter += 1
        let tag = "a\(counter)"
        try? client.send("\(tag) \(command)")
        return tag
    }

    /// Sends `VERB KEY=VALUE...` and returns the final reply.
    @discardableResult
    public func request(_ command: String) throws -> [String: String] {
        try final(send(command), command)
    }

    /// The final reply with `tag` (PROMPTs skipped).
    public func final(_ tag: String, _ what: String = "") throws -> [String: String] {
        while true {
            let reply: Response
            do {
                reply = try client.next(tag: tag)
            } catch {
                throw HarnessError("no reply to \(what.isEmpty ? tag : what): \(error)")
            }
            guard reply.isFinal else { continue }
            var fields = ["status": reply.status.rawValue]
            for argument in reply.arguments { fields[argument.key] = argument.value }
            return fields
        }
    }

    /// Like `request`, failing unless the reply is OK.
    @discardableResult
    public func ok(_ command: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: String] {
        let reply = try request(command)
        XCTAssertEqual(reply["status"], "OK", "\(command) -> \(reply)", file: file, line: line)
        return reply
    }
}
