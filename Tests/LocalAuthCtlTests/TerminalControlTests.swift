// Issue 27 item 10: a user's reason, titles or PAM fields reach root's
// terminal through `localauthctl log`. Every C0 control, DEL, every C1
// control (U+009B is CSI, U+009D OSC) and every Unicode bidi control must be
// escaped in every output form — short (with and without --no-pager),
// verbose, JSON (as `\u` escapes that decode back to the same text) and
// --follow — so that no event can erase the lines above, set the window
// title or read as another line.
import Foundation
import Glibc
import LocalAuthCore
import LocalAuthLog
import LocalAuthTestSupport
import XCTest

final class TerminalControlTests: XCTestCase {
    /// The table: every code point that must never reach a terminal raw.
    static let controls: [UInt32] = Array(0x00...0x1F) + Array(0x7F...0x9F)
        + [0x061C, 0x200E, 0x200F] + Array(0x202A...0x202E) + Array(0x2066...0x2069)

    private var directory = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/ctl-controls-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw XCTSkip("mkdtemp failed")
        }
        directory = String(cString: made)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
        super.tearDown()
    }

    /// A reason per code point: "<hex>[" + the code point + "]".
    static func reason(_ value: UInt32) -> String {
        "\(String(value, radix: 16))[" + String(Unicode.Scalar(value)!) + "]"
    }

    /// A log with one evaluation-started event per code point of the table.
    private func makeState() throws -> String {
        let state = directory + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let log = try EventLog.open(state)
        var seq: UInt64 = 0
        for (index, value) in Self.controls.enumerated() {
            let body = EventBody.evaluationStarted(uid: 1000, ctx: ContextID(high: 1, low: UInt64(index + 1)),
                                                   eval: 1, policy: .owner, reason: Self.reason(value))
            seq = try log.append(time: 1_764_000_000_000_000 + Int64(index), keys: RecordKeys(type: body.kind.rawValue, uid: 1000),
                                 payload: EventCodec.encode(body))
        }
        try log.waitDurable(seq)
        try log.close()
        return state
    }

    /// No code point of the table in `output`, but the line feeds that end its lines.
    private func assertNoRawControl(_ output: String, _ form: String, file: StaticString = #filePath, line: UInt = #line) {
        for scalar in output.unicodeScalars where scalar != "\n" && Self.controls.contains(scalar.value) {
            XCTFail("\(form): U+\(String(scalar.value, radix: 16)) reached the output raw", file: file, line: line)
            return
        }
    }

    func test_item10_everyControlIsEscapedInEveryOutputForm() throws {
        let state = try makeState()
        let count = Self.controls.count
        for arguments in [["log", "-D", state], ["log", "-D", state, "--no-pager"], ["log", "-D", state, "-o", "short", "--no-pager"]] {
            let result = try ctl(arguments)
            XCTAssertEqual(result.code, 0, result.err)
            assertNoRawControl(result.out, arguments.joined(separator: " "))
            XCTAssertEqual(result.lines.count, count, "one line per event, none split or joined: \(result.out)")
            for (line, value) in zip(result.lines, Self.controls) {
                XCTAssertTrue(line.contains("\\u" + hex4(value)) || line.contains(shortEscape(value) ?? "\u{0}"),
                              "U+\(hex4(value)) escaped: \(line)")
            }
        }
        let verbose = try ctl(["log", "-D", state, "-o", "verbose", "--no-pager"])
        XCTAssertEqual(verbose.code, 0, verbose.err)
        assertNoRawControl(verbose.out, "-o verbose")
        XCTAssertEqual(verbose.lines.filter { $0.hasPrefix("    reason=") }.count, count, verbose.out)

        let json = try ctl(["log", "-D", state, "-o", "json", "--no-pager"])
        XCTAssertEqual(json.code, 0, json.err)
        assertNoRawControl(json.out, "-o json")
        XCTAssertEqual(json.lines.count, count)
        for (line, value) in zip(json.lines, Self.controls) {
            XCTAssertEqual(jsonObject(line)["reason"] as? String, Self.reason(value), "JSON decodes back to the same text")
            if shortEscape(value) == nil { XCTAssertTrue(line.contains("\\u" + hex4(value)), line) }
        }

        for format in ["json", "short"] {
            let follower = try Follower(state, format: format)
            defer { follower.stop() }
            XCTAssertTrue(waitUntil(safetyNet: 15) {
                follower.text.split(separator: "\n", omittingEmptySubsequences: true).count >= count
            }, "--follow -o \(format) printed every event: \(follower.text)")
            XCTAssertEqual(follower.stop(), 0)
            assertNoRawControl(follower.text, "--follow -o \(format)")
            XCTAssertEqual(follower.text.split(separator: "\n", omittingEmptySubsequences: true).count, count, follower.text)
        }
    }

    /// The attack as it was made: a user's reason and a context's title with
    /// CSI, OSC and a right-to-left override, through the real daemon.
    func test_item10_aUsersReasonCannotDriveRootsTerminal() throws {
        let daemon = try DaemonProcess(options: .forClients)
        defer { XCTAssertEqual(daemon.stop(), 0, daemon.stderr) }
        let attack = "ok\u{9B}2J\u{9B}H\u{9D}0;pwned\u{9C}\u{202E}gnp.exe"
        let client = try Client(socketPath: daemon.socketPath)
        XCTAssertEqual(try client.request("p set-passcode secret=1234").status, .ok)
        let ctx = try XCTUnwrap(try client.request("n new")["ctx"])
        XCTAssertEqual(try client.request("s set ctx=\(ctx) fallback-title=\"\(attack)\"").status, .ok)
        try client.send("e evaluate ctx=\(ctx) policy=owner reason=\"\(attack)\"")
        XCTAssertEqual(try client.request("c cancel ctx=\(ctx)").status, .ok)
        for arguments in [["log", "-D", daemon.stateDirectory, "--no-pager"],
                          ["log", "-D", daemon.stateDirectory, "-o", "verbose", "--no-pager"],
                          ["log", "-D", daemon.stateDirectory, "-o", "json", "--no-pager"]] {
            let result = try ctl(arguments)
            XCTAssertEqual(result.code, 0, result.err)
            assertNoRawControl(result.out, arguments.joined(separator: " "))
            XCTAssertTrue(result.out.contains("\\u009b2J"), result.out)
            XCTAssertTrue(result.out.contains("\\u202e"), result.out)
        }
        let json = try ctl(["log", "-D", daemon.stateDirectory, "-o", "json", "--no-pager"])
        XCTAssertTrue(json.lines.contains { jsonObject($0)["reason"] as? String == attack }, json.out)
    }

    private func hex4(_ value: UInt32) -> String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// JSON's short escape of a C0 control, when it has one.
    private func shortEscape(_ value: UInt32) -> String? {
        switch value {
        case 0x08: "\\b"
        case 0x09: "\\t"
        case 0x0A: "\\n"
        case 0x0C: "\\f"
        case 0x0D: "\\r"
        default: nil
        }
    }
}
