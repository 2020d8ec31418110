// `log --follow` on a live daemon, which preallocates its segments (FORMAT.md
// "Preallocation"): records land in zeros the file already has, so the file's
// size does not change; the follower must still print every new event once,
// in order, across segment rotations. Timeouts are safety nets only.
import Foundation
import Glibc
import LocalAuthTestSupport
import XCTest

final class LogFollowTests: XCTestCase {
    func testFollowPrintsEventsWrittenIntoPreallocatedSpace() throws {
        let daemon = try DaemonProcess(options: .forClients)
        defer { XCTAssertEqual(daemon.stop(), 0, daemon.stderr) }
        let admin = try Admin(daemon.socketPath)
        try admin.ok("set-passcode secret=1234")
        let follower = try Follower(daemon.stateDirectory)
        defer { follower.stop() }
        let before = try lastSeq(daemon)
        XCTAssertTrue(follower.waitFor { $0.last?["seq"] as? Int == before }, "the records already there: \(follower.text)")

        try admin.ok("enroll uid=0 template=right-index")
        XCTAssertTrue(follower.waitFor { $0.contains { $0["type"] as? String == "enrollment-changed" } },
                      "a new event in the preallocated segment is printed: \(follower.text)")
        try admin.ok("unlocked uid=0")
        let after = try lastSeq(daemon)
        XCTAssertTrue(follower.waitFor { $0.last?["seq"] as? Int == after }, follower.text)
        XCTAssertEqual(follower.stop(), 0)
        XCTAssertEqual(follower.objects.map { $0["seq"] as? Int ?? -1 }, Array(1...after), "each event once, in order")
    }

    func testFollowPrintsEachEventOnceAcrossSegmentRotations() throws {
        let daemon = try DaemonProcess(configuration: "[Biometry]\nType=touchID\n[Log]\nSegmentSize=4K\n", options: .forClients)
        defer { XCTAssertEqual(daemon.stop(), 0, daemon.stderr) }
        let admin = try Admin(daemon.socketPath)
        let follower = try Follower(daemon.stateDirectory)
        defer { follower.stop() }
        for i in 0..<40 {
            try admin.ok("enroll uid=\(1000 + i % 4) template=t\(i)")
            let ctx = try admin.ok("new")["ctx"]!
            try admin.request("can-evaluate ctx=\(ctx) policy=biometrics")
            try admin.ok("invalidate ctx=\(ctx)")
            // Now and then the follower must catch up within a segment, not only at a rotation.
            if i % 5 == 4 {
                let seq = try lastSeq(daemon)
                guard follower.waitFor({ $0.last?["seq"] as? Int ?? 0 >= seq }) else {
                    XCTFail("the follower did not reach seq \(seq): \(follower.text)")
                    break
                }
            }
        }
        let last = try lastSeq(daemon)
        XCTAssertTrue(follower.waitFor { $0.last?["seq"] as? Int == last }, "up to seq \(last): \(follower.text)")
        XCTAssertEqual(follower.stop(), 0)
        let segments = try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/log")
            .filter { $0.hasSuffix(".seg") }
        XCTAssertGreaterThanOrEqual(segments.count, 3, "the log rotated")
        XCTAssertEqual(follower.objects.map { $0["seq"] as? Int ?? -1 }, Array(1...last), "no event twice, none skipped")
    }

    /// S-19 with S-48: checks the daemon counted into one event reach a
    /// follower as one policy-checked line with their count, once.
    func test_S19_followShowsCoalescedChecksWithTheirCount() throws {
        let daemon = try DaemonProcess(options: .forClients)
        defer { XCTAssertEqual(daemon.stop(), 0, daemon.stderr) }
        let admin = try Admin(daemon.socketPath)
        try admin.ok("set-passcode secret=1234")
        let follower = try Follower(daemon.stateDirectory)
        defer { follower.stop() }
        let client = try Client(socketPath: daemon.socketPath)
        let ctx = try XCTUnwrap(try client.request("n new")["ctx"])
        let tags = (0..<64).map { "c\($0)" }
        try client.sendRaw(Array(tags.map { "\($0) can-evaluate ctx=\(ctx) policy=owner\n" }.joined().utf8))
        for tag in tags { XCTAssertEqual(try client.next(tag: tag).status, .ok, tag) }
        let last = try lastSeq(daemon)
        XCTAssertTrue(follower.waitFor { $0.last?["seq"] as? Int == last }, "up to seq \(last): \(follower.text)")
        XCTAssertEqual(follower.stop(), 0)
        let checks = follower.objects.filter { $0["type"] as? String == "policy-checked" && $0["ctx"] as? String == ctx }
        XCTAssertEqual(checks.reduce(0) { $0 + ($1["count"] as? Int ?? 1) }, 64, follower.text)
        XCTAssertLessThan(checks.count, 64, "counted into fewer events: \(follower.text)")
        XCTAssertEqual(follower.objects.map { $0["seq"] as? Int ?? -1 }, Array(1...last), "each event once, in order")
    }

    private func lastSeq(_ daemon: DaemonProcess) throws -> Int {
        let result = try ctl(["log", "-D", daemon.stateDirectory, "-o", "json", "--no-pager"])
        XCTAssertEqual(result.code, 0, result.err)
        return result.lines.last.flatMap { jsonObject($0)["seq"] as? Int } ?? 0
    }
}

/// `localauthctl log --follow -o FORMAT` in the background, its output in a file.
final class Follower {
    let process = Process()
    let output: String

    init(_ stateDirectory: String, format: String = "json") throws {
        output = stateDirectory + "/../follow-\(getpid())-\(format).out"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        process.executableURL = URL(fileURLWithPath: try ctlBinary())
        process.arguments = ["log", "-D", stateDirectory, "--follow", "-o", format]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var text: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }

    /// The complete lines so far, as JSON objects.
    var objects: [[String: Any]] {
        text.split(separator: "\n", omittingEmptySubsequences: true).compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// Polls the output until `condition` holds (safety net 15 s).
    func waitFor(_ condition: ([[String: Any]]) -> Bool) -> Bool {
        waitUntil(safetyNet: 15) { condition(objects) }
    }

    /// SIGINT (how a user ends it) and wait; returns the exit status.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning { process.interrupt() }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
