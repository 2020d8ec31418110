// Issue 15 item 12: when the daemon answers `unavailable` (its log cannot
// record), localauthctl says what the daemon said, not that it is
// unreachable. A stand-in daemon on a socket answers every line so.
import Foundation
import Glibc
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class UnavailableTests: XCTestCase {
    func testARefusingDaemonIsReportedWithItsOwnWordsNotAsUnreachable() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/socket"
        let listener = try UnixSocket.listen(path: path)
        let message = "The event log cannot record events; refusing to act."
        let thread = Thread {
            // One connection: answer each request line with the refusal.
            var incoming = pollfd(fd: listener.rawValue, events: Int16(POLLIN), revents: 0)
            guard poll(&incoming, 1, 30_000) == 1, let fd = try? UnixSocket.accept(listener) else { return }  // safety net 30 s
            try? fd.setNonBlocking(false)
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(fd.rawValue, &buffer, buffer.count)
                if count <= 0 { break }
                pending += buffer[0..<count]
                while let lf = pending.firstIndex(of: 10) {
                    let line = String(decoding: pending[..<lf], as: UTF8.self)
                    pending.removeSubrange(...lf)
                    let tag = line.split(separator: " ").first.map(String.init) ?? "*"
                    _ = try? fd.send(Array("\(tag) ERR domain=protocol name=unavailable message=\"\(message)\"\n".utf8))
                }
            }
            try? fd.close()
        }
        thread.start()
        let result = try ctl(["can-evaluate", "--policy", "owner", "--socket", path])
        XCTAssertEqual(result.code, 3, "exit 3: refused; " + result.out + result.err)
        XCTAssertTrue(result.err.contains(message), "the daemon's words are missing: \(result.err)")
        XCTAssertTrue(result.err.contains("(unavailable)"), result.err)
        XCTAssertFalse(result.err.contains("not reachable"), "a refusal reported as unreachable: \(result.err)")
        try? listener.close()
    }
}
