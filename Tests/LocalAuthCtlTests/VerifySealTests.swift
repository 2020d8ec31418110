// `verify` on seals (FORMAT.md "Seals") and on a log that fails at its very
// start: a seal that disagrees with its segment fails verify (exit 1, the seal
// named, 'localauthctl repair' pointed to), as it stops the daemon's open; an
// unreadable first segment is reported without an impossible seq.
import Foundation
import Glibc
import LocalAuthCore
import LocalAuthLog
import LocalAuthSystem
import XCTest

final class VerifySealTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/ctl-verify-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw XCTSkip("mkdtemp failed")
        }
        directory = String(cString: made)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
        super.tearDown()
    }

    /// A state directory whose log has several sealed segments.
    private func makeState(_ name: String) throws -> String {
        let state = directory + "/" + name
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let log = try EventLog.open(state, options: .init(segmentSize: 1024))
        // Real events: verify replays the log (S-49).
        for index in 1...60 {
            let body = EventBody.daemonStarted(version: "v\(index)", bootID: String(repeating: "b", count: 18), pid: 1)
            try log.append(time: 1_764_000_000_000_000 + Int64(index), keys: RecordKeys(type: body.kind.rawValue),
                           payload: EventCodec.encode(body))
        }
        try log.waitDurable(60)
        try log.close()
        return state
    }

    private func firstSeal(_ state: String) throws -> String {
        let seals = try FileManager.default.contentsOfDirectory(atPath: state + "/log").filter { $0.hasSuffix(".seg.seal") }.sorted()
        XCTAssertGreaterThanOrEqual(seals.count, 2, "several sealed segments")
        return try XCTUnwrap(seals.first)
    }

    private func edit(_ path: String, _ change: (inout [UInt8]) -> Void) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        change(&bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    func testVerifyFailsOnASealWhoseChainHeadDisagreesAndRepairMovesItAside() throws {
        let state = try makeState("head")
        let clean = try ctl(["verify", "-D", state])
        XCTAssertEqual(clean.code, 0, clean.out + clean.err)
        let seal = try firstSeal(state)
        // A consistent-looking seal (its own CRC recomputed) with another chain head.
        try edit(state + "/log/" + seal) { bytes in
            bytes[50] ^= 0x01
            let crc = CRC32C.checksum(Array(bytes[0..<92]))
            for i in 0..<4 { bytes[92 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        }
        let result = try ctl(["verify", "-D", state])
        XCTAssertEqual(result.code, 1, result.out + result.err)
        XCTAssertFalse(result.out.contains("OK"), result.out)
        XCTAssertTrue(result.out.contains("FAILED: seal \(seal): chain head"), result.out)
        XCTAssertTrue(result.err.contains("localauthctl repair"), "says what to do: \(result.err)")

        let repaired = try ctl(["repair", "-D", state, "--socket", directory + "/no-daemon"])
        XCTAssertEqual(repaired.code, 0, repaired.out + repaired.err)
        let after = try ctl(["verify", "-D", state])
        XCTAssertEqual(after.code, 0, after.out + after.err)
    }

    func testVerifyFailsOnASealWithABadChecksum() throws {
        let state = try makeState("crc")
        let seal = try firstSeal(state)
        try edit(state + "/log/" + seal) { $0[93] ^= 0x10 }
        let result = try ctl(["verify", "-D", state])
        XCTAssertEqual(result.code, 1, result.out + result.err)
        XCTAssertTrue(result.out.contains("FAILED: seal \(seal): "), result.out)
        XCTAssertTrue(result.err.contains("localauthctl repair"), result.err)
    }

    func testVerifyOfAnUnreadableFirstSegmentNamesNoImpossibleSeq() throws {
        let state = directory + "/unreadable"
        try FileManager.default.createDirectory(atPath: state + "/log/0000000000000001.seg", withIntermediateDirectories: true)
        let result = try ctl(["verify", "-D", state])
        XCTAssertEqual(result.code, 1, result.out + result.err)
        XCTAssertTrue(result.out.hasPrefix("FAILED: first bad record: segment 0000000000000001.seg"), result.out)
        XCTAssertTrue(result.out.contains("unreadable segment"), result.out)
        for text in [result.out, result.err] {
            XCTAssertFalse(text.contains(String(UInt64.max)), text)
            XCTAssertFalse(text.contains("seq 0"), text)
        }
        XCTAssertTrue(result.err.contains("from its start"), result.err)
        XCTAssertTrue(result.err.contains("localauthctl repair"), result.err)
    }
}
