import Glibc
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class FileTests: XCTestCase {
    private var scratch: TemporaryDirectory?
    var directory: String { scratch!.path }

    override func setUp() { scratch = TemporaryDirectory() }
    override func tearDown() {
        FaultInjection.reset()
        scratch = nil
    }

    func testAtomicWriteLeavesContentModeAndNoTemporaryFile() throws {
        let path = directory + "/state"
        try AtomicFile.write(path, bytes: Array("first".utf8), mode: 0o600)
        try AtomicFile.write(path, bytes: Array("second".utf8), mode: 0o600)
        XCTAssertEqual(try File.read(path, maxSize: 100), Array("second".utf8))
        XCTAssertEqual(try File.permissions(path), 0o600)
        XCTAssertEqual(try Directory.entries(directory), ["state"])
    }

    func testReadIsBounded() throws {
        let path = directory + "/big"
        try AtomicFile.write(path, bytes: [UInt8](repeating: 7, count: 200_000))
        XCTAssertEqual(try File.read(path, maxSize: 200_000).count, 200_000)
        XCTAssertThrowsError(try File.read(path, maxSize: 199_999)) { error in
            XCTAssertEqual((error as? SystemError)?.errno, EFBIG)
        }
        XCTAssertThrowsError(try File.read(directory + "/missing", maxSize: 10)) { error in
            XCTAssertEqual("\(error)", "open \(directory)/missing: No such file or directory")
        }
    }

    func testDescriptorCalls() throws {
        let fd = try FileDescriptor.open(directory + "/log", .readWrite, options: [.create, .exclusiveCreate])
        defer { try? fd.close() }
        try fd.writeAll(Array("hello world".utf8))
        try fd.writeAll(Array("HELLO".utf8), at: 0)
        try fd.fdatasync()
        try fd.fsync()
        XCTAssertEqual(try fd.size(), 11)
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = try buffer.withUnsafeMutableBytes { try fd.read(into: $0, at: 0) }
        XCTAssertEqual(Array(buffer[..<n]), Array("HELLO world".utf8))
        try fd.truncate(to: 5)
        XCTAssertEqual(try fd.seek(to: 0, from: .end), 5)
        XCTAssertThrowsError(try FileDescriptor.open(directory + "/log", .readOnly, options: [.create, .exclusiveCreate]))
    }

    func testDirectoriesAndPaths() throws {
        let nested = directory + "/a/b/c"
        try Directory.create(nested, mode: 0o700)
        try Directory.create(nested, mode: 0o700)  // already there: fine
        XCTAssertEqual(try File.permissions(nested), 0o700)
        try AtomicFile.write(nested + "/x", bytes: [1])
        try File.rename(nested + "/x", to: nested + "/y")
        XCTAssertFalse(File.exists(nested + "/x"))
        XCTAssertTrue(File.exists(nested + "/y"))
        try File.chmod(nested + "/y", 0o640)
        XCTAssertEqual(try File.permissions(nested + "/y"), 0o640)
        try File.chown(nested + "/y", uid: getuid(), gid: getgid())
        try File.unlink(nested + "/y")
        XCTAssertEqual(try Directory.entries(directory + "/a"), ["b"])
        try Directory.fsync(nested)
        try AtomicFile.write(nested + "/file", bytes: [1])
        XCTAssertThrowsError(try Directory.create(nested + "/file/z")) { error in
            XCTAssertEqual(error as? SystemError, SystemError(call: "open", errno: ENOTDIR, path: nested + "/file/z"))
        }
    }

    func testFaultInjectionFailsThenRecovers() throws {
        let fd = try FileDescriptor.open(directory + "/log", .writeOnly, options: .create)
        defer { try? fd.close() }
        FaultInjection.fail(.fdatasync, errno: ENOSPC, times: 1)
        XCTAssertThrowsError(try fd.fdatasync()) { error in
            XCTAssertEqual(error as? SystemError, SystemError(call: "fdatasync", errno: ENOSPC))
            XCTAssertEqual("\(error)", "fdatasync: No space left on device")
        }
        XCTAssertNoThrow(try fd.fdatasync())

        FaultInjection.fail(.write, errno: EIO, times: nil)
        for _ in 0..<3 { XCTAssertThrowsError(try fd.writeAll([1, 2, 3])) }
        XCTAssertNoThrow(try fd.fsync())  // other operations are unaffected
        FaultInjection.reset()
        XCTAssertNoThrow(try fd.writeAll([1, 2, 3]))
        XCTAssertEqual(try fd.size(), 3)
    }
}
