// PathWalk (issue 27 items 2 and 11): in a directory another user owns, no
// path-level call of the syscall layer follows a symlink, and no open of a
// file hangs on (or reads) a FIFO; in the caller's own directories symlinks
// still work. Root plays the caller; uid 65534 owns the hostile directory.
import Glibc
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class PathWalkTests: XCTestCase {
    private var scratch: TemporaryDirectory?
    var directory: String { scratch!.path }
    /// A directory of root's (0700) with a root-only file in it: what the attacks aim at.
    var rootOnly: String { directory + "/root-only" }
    /// The hostile user's directory (uid 65534), where the attacks are placed.
    var theirs: String { directory + "/theirs" }

    override func setUpWithError() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root to own one directory and give another away") }
        scratch = TemporaryDirectory()
        chmod(directory, 0o755)
        try Directory.create(rootOnly, mode: 0o700)
        try AtomicFile.write(rootOnly + "/secret", bytes: Array("root's".utf8), mode: 0o600)
        try Directory.create(theirs, mode: 0o755)
        XCTAssertEqual(Glibc.chown(theirs, 65534, 65534), 0)
    }

    override func tearDown() { scratch = nil }

    private func link(_ target: String, at path: String) {
        XCTAssertEqual(symlink(target, path), 0, "symlink \(path)")
        lchown(path, 65534, 65534)
    }

    private func assertRootFileUntouched(file: StaticString = #filePath, line: UInt = #line) {
        var info = stat()
        XCTAssertEqual(lstat(rootOnly + "/secret", &info), 0, file: file, line: line)
        XCTAssertEqual(info.st_uid, 0, "still root's", file: file, line: line)
        XCTAssertEqual(info.st_mode & 0o7777, 0o600, "still 0600", file: file, line: line)
        XCTAssertEqual(try? File.read(rootOnly + "/secret", maxSize: 100), Array("root's".utf8), file: file, line: line)
        XCTAssertEqual(try? Directory.entries(rootOnly), ["secret"], "nothing created beside it", file: file, line: line)
    }

    func test_item2_noCallFollowsASymlinkInAnotherUsersDirectory() throws {
        link(rootOnly + "/secret", at: theirs + "/file")
        link(rootOnly, at: theirs + "/dir")
        link(rootOnly + "/created", at: theirs + "/dangling")
        for (what, call) in [
            ("open", { _ = try FileDescriptor.open(self.theirs + "/file", .readOnly) }),
            ("open O_CREAT", { _ = try FileDescriptor.open(self.theirs + "/dangling", .readWrite, options: [.create]) }),
            ("read", { _ = try File.read(self.theirs + "/file", maxSize: 100) }),
            ("read through a directory", { _ = try File.read(self.theirs + "/dir/secret", maxSize: 100) }),
            ("chmod", { try File.chmod(self.theirs + "/file", 0o666) }),
            ("chown", { try File.chown(self.theirs + "/file", uid: 65534, gid: 65534) }),
            ("chown through a directory", { try File.chown(self.theirs + "/dir/secret", uid: 65534, gid: 65534, followingLinks: false) }),
            ("rename out of a directory", { try File.rename(self.theirs + "/dir/secret", to: self.theirs + "/stolen") }),
            ("unlink through a directory", { try File.unlink(self.theirs + "/dir/secret") }),
            ("atomic write through a directory", { try AtomicFile.write(self.theirs + "/dir/secret", bytes: [0]) }),
            ("mkdir through a directory", { try Directory.create(self.theirs + "/dir/new", mode: 0o777) }),
            ("list", { _ = try Directory.entries(self.theirs + "/dir") }),
        ] as [(String, () throws -> Void)] {
            XCTAssertThrowsError(try call(), what) { error in
                XCTAssertTrue([ELOOP, ENOTDIR].contains((error as? SystemError)?.errno ?? 0), "\(what): \(error)")
            }
        }
        XCTAssertFalse(File.exists(theirs + "/dir/secret"), "not seen through their symlink")
        XCTAssertNil(File.status(theirs + "/dir/secret"), "nor stat'ed")
        XCTAssertEqual(File.status(theirs + "/dir")?.isSpecial, true, "their symlink is seen as itself")
        // An atomic write over their symlink replaces the link, never its target.
        try AtomicFile.write(theirs + "/file", bytes: Array("mine".utf8))
        assertRootFileUntouched()
    }

    func test_item2_symlinksInTheCallersOwnDirectoriesAreFollowed() throws {
        let mine = directory + "/mine"
        try Directory.create(mine, mode: 0o700)
        XCTAssertEqual(symlink(rootOnly, mine + "/dir"), 0)
        XCTAssertEqual(symlink("secret", rootOnly + "/relative"), 0)
        XCTAssertEqual(try File.read(mine + "/dir/secret", maxSize: 100), Array("root's".utf8))
        XCTAssertEqual(try File.read(mine + "/dir/relative", maxSize: 100), Array("root's".utf8))
        XCTAssertEqual(File.status(mine + "/dir")?.isDirectory, true)
        XCTAssertTrue(File.exists(mine + "/dir/relative"))
        try Directory.create(mine + "/dir/sub", mode: 0o700)
        XCTAssertEqual(try Directory.entries(rootOnly), ["relative", "secret", "sub"])
        XCTAssertEqual(symlink("loop", mine + "/loop"), 0)
        XCTAssertThrowsError(try File.read(mine + "/loop", maxSize: 10)) { error in
            XCTAssertEqual((error as? SystemError)?.errno, ELOOP)
        }
    }

    /// Issue 27 item 11: a FIFO (or a device) where a file belongs is refused at once, not read.
    func test_item11_aFIFOOrADeviceIsRefusedWithoutWaiting() throws {
        XCTAssertEqual(mkfifo(theirs + "/fifo", 0o666), 0)
        for path in [theirs + "/fifo", "/dev/zero", "/dev/null"] {
            for access in [FileDescriptor.AccessMode.readOnly, .writeOnly, .readWrite] {
                XCTAssertThrowsError(try FileDescriptor.open(path, access), "\(path)") { error in
                    XCTAssertEqual((error as? SystemError)?.reason, "not a regular file", "\(path): \(error)")
                }
            }
            XCTAssertThrowsError(try File.read(path, maxSize: 10), path)
        }
    }

    /// The socket is made with its mode at bind: no chmod by path follows it.
    func test_item2_aListeningSocketHasItsModeWithoutAChmod() throws {
        let path = theirs + "/socket"
        let previous = umask(0o077)
        defer { umask(previous) }
        let fd = try UnixSocket.listen(path: path, mode: 0o666)
        defer { try? fd.close() }
        XCTAssertEqual(try File.permissions(path), 0o666)
        XCTAssertTrue(UnixSocket.isListening(path))
        let client = try UnixSocket.connect(path: path)
        try client.close()
        // Their symlink where the socket goes is not bound through.
        let other = theirs + "/other"
        link(rootOnly + "/sock", at: other)
        XCTAssertThrowsError(try UnixSocket.listen(path: other, mode: 0o666))
        XCTAssertThrowsError(try UnixSocket.listen(path: theirs + "/dir-link/sock", mode: 0o666))
        assertRootFileUntouched()
    }

    /// Item 2's race, observed without a clock: a chmod after bind is an
    /// attribute change of the name in its directory (inotify IN_ATTRIB),
    /// the window in which the directory's owner swaps the path. The
    /// socket's only event is its creation.
    func test_item2_nothingChangesTheSocketsAttributesAfterItsBind() throws {
        let watch = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        XCTAssertGreaterThanOrEqual(watch, 0)
        defer { close(watch) }
        XCTAssertGreaterThanOrEqual(inotify_add_watch(watch, theirs, UInt32(IN_CREATE | IN_ATTRIB)), 0)
        let previous = umask(0o077)
        defer { umask(previous) }
        let fd = try UnixSocket.listen(path: theirs + "/socket", mode: 0o666)
        defer { try? fd.close() }
        XCTAssertEqual(try File.permissions(theirs + "/socket"), 0o666)
        var events: [(mask: UInt32, name: String)] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
        var offset = 0
        let header = MemoryLayout<inotify_event>.size
        while count > 0, offset + header <= count {
            let (mask, length) = buffer.withUnsafeBytes { raw in
                (raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                 Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
            }
            let name = buffer[(offset + header)..<min(offset + header + length, count)].prefix { $0 != 0 }
            events.append((mask, String(decoding: name, as: UTF8.self)))
            offset += header + length
        }
        XCTAssertTrue(events.contains { $0.name == "socket" && $0.mask & UInt32(IN_CREATE) != 0 }, "\(events)")
        XCTAssertFalse(events.contains { $0.name == "socket" && $0.mask & UInt32(IN_ATTRIB) != 0 },
                       "the socket's attributes changed after its bind (a chmod by path): \(events)")
    }
}
