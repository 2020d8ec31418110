// Issue 27 item 2: the state directory belongs to the daemon's user, and
// that user (or whoever took over the daemon) must not be able to make root
// act on root's files through it. The attacks, against the real binaries,
// run as root with the state directory owned by uid 65534:
//   - `STATE/lock` a symlink to a file root's `localauthctl repair` would
//     then create (it opened the lock O_CREAT through it);
//   - a subdirectory swapped for a symlink into a root-only directory while
//     repair walks the tree to chown what it wrote (the race of the issue,
//     run many times with the swap as fast as renameat2 can make it);
//   - `log` and `lock` symlinks under a daemon that root starts.
// Each asserts that root's file stays root's, unchanged, and nothing is
// created beside it.
import Foundation
import Glibc
import LocalAuthCore
import LocalAuthLog
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class StateDirectoryOwnerTests: XCTestCase {
    private var scratch: TemporaryDirectory!
    private let owner: UInt32 = 65534
    private var state: String { scratch.path + "/state" }
    /// Root's (0700), holding a root-only file: what the attacks aim at.
    private var rootOnly: String { scratch.path + "/root-only" }

    override func setUpWithError() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root: the attacks are on root's calls") }
        scratch = TemporaryDirectory()
        try Directory.create(rootOnly, mode: 0o700)
        try AtomicFile.write(rootOnly + "/secret", bytes: Array("root's".utf8), mode: 0o600)
        try makeLog()
    }

    override func tearDown() { scratch = nil }

    /// A state directory with a clean log of a few events, all owned by `owner`.
    private func makeLog() throws {
        try Directory.create(state, mode: 0o700)
        let log = try EventLog.open(state)
        var seq: UInt64 = 0
        for index in 1...5 {
            let body = EventBody.daemonStarted(version: "v\(index)", bootID: "boot", pid: 1)
            seq = try log.append(time: 1_764_000_000_000_000 + Int64(index), keys: RecordKeys(type: body.kind.rawValue),
                                 payload: EventCodec.encode(body))
        }
        try log.waitDurable(seq)
        try log.close()
        XCTAssertEqual(try runToCompletion("/bin/chown", ["-R", "\(owner):\(owner)", state]).0, 0)
    }

    private func ctl(_ arguments: [String]) throws -> (Int32, String, String) {
        try runToCompletion(try Binary.find("localauthctl"), arguments, timeout: 60)
    }

    private func repair() throws -> (Int32, String, String) {
        try ctl(["repair", "-D", state, "--socket", scratch.path + "/no-daemon"])
    }

    /// Root's file is still root's, 0600, unchanged, and alone.
    private func assertRootFileUntouched(_ context: String, file: StaticString = #filePath, line: UInt = #line) {
        var info = stat()
        XCTAssertEqual(lstat(rootOnly + "/secret", &info), 0, context, file: file, line: line)
        XCTAssertEqual(info.st_uid, 0, "\(context): root's file was given to uid \(info.st_uid)", file: file, line: line)
        XCTAssertEqual(info.st_mode & 0o7777, 0o600, "\(context): mode", file: file, line: line)
        XCTAssertEqual(readText(rootOnly + "/secret"), "root's", context, file: file, line: line)
        XCTAssertEqual(try? FileManager.default.contentsOfDirectory(atPath: rootOnly), ["secret"],
                       "\(context): nothing created beside it", file: file, line: line)
    }

    /// Places a symlink as the owner would.
    private func link(_ target: String, at path: String) {
        XCTAssertEqual(symlink(target, path), 0, path)
        lchown(path, owner, owner)
    }

    func test_item2_rootsRepairCreatesNothingThroughTheOwnersLockSymlink() throws {
        try? FileManager.default.removeItem(atPath: state + "/lock")
        link(rootOnly + "/created", at: state + "/lock")
        let (code, out, err) = try repair()
        XCTAssertNotEqual(code, 0, "repair refuses a lock it cannot open: \(out)\(err)")
        XCTAssertTrue(err.contains("lock"), err)
        assertRootFileUntouched("lock symlink")
    }

    /// The race of the issue: while root's repair works in the directory,
    /// the owner swaps `sub` (a directory holding a file named like root's)
    /// with `sublink` (a symlink to root's directory) as fast as it can.
    func test_item2_rootsRepairRacedBySwappedSubdirectoriesGivesAwayNothing() throws {
        try Directory.create(state + "/sub", mode: 0o755)
        try AtomicFile.write(state + "/sub/secret", bytes: [1])
        XCTAssertEqual(try runToCompletion("/bin/chown", ["-R", "\(owner):\(owner)", state + "/sub"]).0, 0)
        link(rootOnly, at: state + "/sublink")
        let script = scratch.path + "/swap.py"
        try """
        import ctypes, os, sys
        libc = ctypes.CDLL(None, use_errno=True)
        os.chdir(sys.argv[1])
        while True:
            libc.renameat2(-100, b"sub", -100, b"sublink", 2)
        """.write(toFile: script, atomically: true, encoding: .utf8)
        let swapper = try spawn("/usr/bin/setpriv", ["--reuid=\(owner)", "--regid=\(owner)", "--clear-groups", "--",
                                                     "/usr/bin/python3", script, state])
        defer {
            kill(swapper, SIGKILL)
            _ = waitForExit(swapper, timeout: 10)
        }
        XCTAssertTrue(waitUntil(safetyNet: 10) {
            var info = stat()
            return lstat(self.state + "/sub", &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
        }, "the owner's swap runs")
        for round in 1...60 {
            let (code, out, err) = try repair()
            XCTAssertEqual(code, 0, "round \(round): \(out)\(err)")
            var info = stat()
            if lstat(rootOnly + "/secret", &info) == 0, info.st_uid != 0 { break }
        }
        assertRootFileUntouched("60 repairs against the swap")
    }

    /// What repair writes (the kept copy, the cut segment, the repair record)
    /// is the owner's without any chown: root worked as the owner.
    func test_item2_whatRootsRepairWritesIsTheOwnersWithoutAChown() throws {
        let segment = try XCTUnwrap(try Directory.entries(state + "/log").first { $0.hasSuffix(".seg") })
        let path = state + "/log/" + segment
        var bytes = readBytes(path)
        let end = bytes.lastIndex { $0 != 0 } ?? bytes.count - 1
        bytes[end / 2] ^= 0xFF  // a record in the middle fails its checksum
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(try runToCompletion("/bin/chown", ["-R", "\(owner):\(owner)", state]).0, 0)
        let (code, out, err) = try repair()
        XCTAssertEqual(code, 0, out + err)
        XCTAssertTrue(out.contains("Repaired"), out)
        let enumerator = try XCTUnwrap(FileManager.default.enumerator(atPath: state))
        var seen = 0
        while let name = enumerator.nextObject() as? String {
            var info = stat()
            XCTAssertEqual(lstat(state + "/" + name, &info), 0)
            XCTAssertEqual(info.st_uid, owner, "\(name) is the owner's")
            seen += 1
        }
        XCTAssertGreaterThan(seen, 4)
        XCTAssertTrue(try Directory.entries(state).contains { $0.hasPrefix("repair-") })
    }

    /// Root running the daemon itself on such a directory (by hand, without
    /// the unit's User=) follows none of the owner's symlinks either.
    func test_item2_aDaemonRunByRootFollowsNoSymlinkOfTheOwner() throws {
        for name in ["lock", "log"] {
            try? FileManager.default.removeItem(atPath: state + "/" + name)
            link(rootOnly + "/" + name, at: state + "/" + name)
            let daemon = scratch.path + "/daemon-\(name)"
            try Directory.create(daemon, mode: 0o755)
            try "".write(toFile: daemon + "/conf", atomically: true, encoding: .utf8)
            let pid = try spawn(try Binary.localauthd(), [
                "--config", daemon + "/conf", "--socket", daemon + "/socket", "--state-dir", state,
            ], stderrPath: daemon + "/stderr")
            // It should refuse at once; one that serves instead is stopped after a while (a safety net).
            var code = waitForExit(pid, timeout: 10)
            if code == nil {
                kill(pid, SIGKILL)
                code = waitForExit(pid, timeout: 10)
                XCTFail("\(name): the daemon started on the owner's symlink")
            }
            let err = readText(daemon + "/stderr")
            XCTAssertNotEqual(code, 0, "\(name): the daemon refuses to start: \(err)")
            XCTAssertTrue(err.contains("symlink"), "\(name): \(err)")
            assertRootFileUntouched("\(name) symlink under the daemon")
            try FileManager.default.removeItem(atPath: state + "/" + name)
        }
    }

    /// Issue 27 item 11: a FIFO where a segment belongs hung `verify` and
    /// `log -D` (an open that waits for a writer). Now each refuses it at
    /// once, naming it; the daemon does not start on it either.
    func test_item11_aFIFOAsASegmentHangsNeitherTheToolsNorTheDaemon() throws {
        let fifo = state + "/log/" + SegmentName.fileName(6)
        XCTAssertEqual(mkfifo(fifo, 0o644), 0)
        lchown(fifo, owner, owner)
        for arguments in [["verify", "-D", state], ["log", "-D", state, "--no-pager"], ["replay", "-D", state]] {
            let (code, out, err) = try runToCompletion(try Binary.find("localauthctl"), arguments, timeout: 20)
            XCTAssertNotEqual(code, 0, "\(arguments[0]): \(out)\(err)")
            XCTAssertTrue((out + err).contains("not a regular file"), "\(arguments[0]): \(out)\(err)")
        }
        let daemon = scratch.path + "/daemon"
        try Directory.create(daemon, mode: 0o755)
        try "".write(toFile: daemon + "/conf", atomically: true, encoding: .utf8)
        let (code, _, err) = try runToCompletion(try Binary.localauthd(), [
            "--config", daemon + "/conf", "--socket", daemon + "/socket", "--state-dir", state,
        ], timeout: 20)
        XCTAssertNotEqual(code, 0, err)
        XCTAssertTrue(err.contains("not a regular file"), err)
    }
}
