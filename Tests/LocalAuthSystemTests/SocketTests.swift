import Glibc
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class SocketTests: XCTestCase {
    private var scratch: TemporaryDirectory?
    var directory: String { scratch!.path }

    override func setUpWithError() throws {
        scratch = TemporaryDirectory()
        Signals.ignoreBrokenPipe()
    }
    override func tearDown() { scratch = nil }

    func testListenAcceptRoundTripWithPeerCredentials() throws {
        let path = directory + "/sock"
        let listener = try UnixSocket.listen(path: path, mode: 0o660)
        defer { try? listener.close() }
        XCTAssertEqual(try File.permissions(path), 0o660)
        XCTAssertNil(try UnixSocket.accept(listener))  // nobody waiting: would block

        let client = try UnixSocket.connect(path: path)
        defer { try? client.close() }
        guard let server = try UnixSocket.accept(listener) else { return XCTFail("no connection") }
        defer { try? server.close() }

        XCTAssertEqual(try PeerCredentials(socket: server), PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()))
        XCTAssertEqual(try PeerCredentials(socket: client).uid, getuid())

        XCTAssertEqual(try client.send(Array("ping\n".utf8)), 5)
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = try buffer.withUnsafeMutableBytes { try server.receive(into: $0) }
        XCTAssertEqual(n.map { Array(buffer[..<$0]) }, Array("ping\n".utf8))
        XCTAssertNil(try buffer.withUnsafeMutableBytes { try server.receive(into: $0) })  // would block

        try client.close()
        XCTAssertEqual(try buffer.withUnsafeMutableBytes { try server.receive(into: $0) }, 0)  // end of stream
        XCTAssertThrowsError(try server.send([1])) { error in
            XCTAssertEqual((error as? SystemError)?.errno, EPIPE)
        }
    }

    func testListenReplacesStaleSocketButNotOtherFiles() throws {
        let path = directory + "/sock"
        try UnixSocket.listen(path: path).close()
        let again = try UnixSocket.listen(path: path)  // stale socket file from the first
        try again.close()

        let plain = directory + "/plain"
        try AtomicFile.write(plain, bytes: [1])
        XCTAssertThrowsError(try UnixSocket.listen(path: plain)) { error in
            XCTAssertEqual((error as? SystemError)?.errno, EEXIST)
        }
        XCTAssertTrue(File.exists(plain))
        XCTAssertThrowsError(try UnixSocket.connect(path: directory + "/nobody"))
    }

    func testSocketPairSendWouldBlockWhenFull() throws {
        let (a, b) = try UnixSocket.pair()
        defer {
            try? a.close()
            try? b.close()
        }
        try a.setNonBlocking()
        let chunk = [UInt8](repeating: 1, count: 65536)
        var sent = 0
        while let n = try a.send(chunk) { sent += n }  // nil once the buffers are full
        XCTAssertGreaterThan(sent, 0)
        XCTAssertEqual(try PeerCredentials(socket: b).pid, getpid())
    }
}
