// S-49 as amended by issue 34 item 3, against the real daemon: the sealed
// segments that the start's snapshot wholly covers are hashed after READY.
// Whole, the daemon says so and serves on; with a changed record, it became
// ready (its state rests on the snapshot and the records after it, which
// were checked) and then stops as a start on that log stops (S-41): the
// journal's error, the clean stop, exit status 1, the same message naming
// `localauthctl verify` and `localauthctl repair`.
import Foundation
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

@testable import LocalAuthLog

final class CoveredSegmentsTests: ReliabilityTestCase {
    private let owner: UInt32 = 0

    /// A stopped daemon whose log has sealed segments wholly covered by its
    /// newest snapshot, which the log vouches for; the first such segment.
    private func givenCoveredSegment() throws -> (DaemonProcess, segment: UInt64) {
        let daemon = try startDaemon(configuration: configuration(log: ["SegmentSize=4096", "SnapshotEvery=40"]))
        let client = try daemon.connect()
        try prepareUser(client, uid: owner, passcode: "246810")
        for _ in 0..<120 {
            let ctx = try newContext(client)
            XCTAssertOK(try client.request("\(tag("i")) invalidate ctx=\(ctx)"))
        }
        client.shutDown()
        daemon.stop()
        let vouched = try LogContents(stateDirectory: daemon.stateDirectory).events.compactMap { event -> UInt64? in
            if case .snapshotRecorded(let seq, _) = event.body { return seq } else { return nil }
        }
        let newest = try XCTUnwrap(try SnapshotStore(directory: daemon.stateDirectory).list().last)
        XCTAssertTrue(vouched.contains(newest), "given: the newest snapshot is vouched for")
        let log = daemon.stateDirectory + "/log"
        let segment = try XCTUnwrap(try LogReader(logDirectory: log).segments.first)
        let seal = try XCTUnwrap(SegmentSeal.load(DiskStorage.shared, log, segment))
        XCTAssertLessThanOrEqual(seal.lastSeq, newest, "given: the snapshot wholly covers the first segment")
        return (daemon, segment)
    }

    func test_S49_wholeCoveredSegmentsAreCheckedAfterReadyAndTheDaemonServesOn() throws {
        let (daemon, _) = try givenCoveredSegment()
        let before = daemon.stderr.utf8.count
        try daemon.start()
        let client = try daemon.connect()
        XCTAssertTrue(waitUntil { daemon.stderr.contains("that the start's snapshot covers: they hold") },
                      "the covered segments' check reports:\n\(daemon.stderr.suffix(2000))")
        XCTAssertEqual(try status(client, uid: owner)["locked-out"], "false")
        let output = String(daemon.stderr.utf8.dropFirst(before)) ?? ""
        XCTAssertFalse(output.contains("cannot be trusted"), output)
        client.shutDown()
        daemon.stop()
    }

    func test_S49_changedRecordInACoveredSegmentStopsTheDaemonAfterReadyNamingTheCommands() throws {
        let (daemon, segment) = try givenCoveredSegment()
        let path = daemon.stateDirectory + "/log/" + SegmentName.fileName(segment)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // A byte of the first record's payload: its CRC no longer holds.
        let start = SegmentHeader.size
        let length = Int(bytes.withUnsafeBytes { RecordFormat.u32($0, start) })
        bytes[start + 8 + length - 1] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let before = daemon.stderr.utf8.count
        uncleanStopAllowed.insert(ObjectIdentifier(daemon))
        // It may stop before or after the harness's readiness probe is answered.
        try? daemon.start()
        let code = daemon.awaitExit()
        XCTAssertEqual(code, 1, "the daemon fails closed")
        let output = String(daemon.stderr.utf8.dropFirst(before)) ?? ""
        let started = try XCTUnwrap(output.range(of: "Started: snapshot "), "READY, from the snapshot:\n\(output)")
        let refused = try XCTUnwrap(output.range(of: "The event log cannot be trusted: "), "journaled:\n\(output)")
        XCTAssertLessThan(started.lowerBound, refused.lowerBound, "ready first, then the refusal:\n\(output)")
        XCTAssertTrue(output.contains("crc mismatch at \(SegmentName.fileName(segment))"), output)
        XCTAssertTrue(output.contains("Stopped."), "the clean stop (S-32):\n\(output)")
        let last = output.split(separator: "\n").last.map(String.init) ?? ""
        XCTAssertTrue(last.hasPrefix("localauthd: Failed to open the event log: crc mismatch at \(SegmentName.fileName(segment))"), last)
        XCTAssertTrue(last.contains("localauthctl verify") && last.contains("localauthctl repair"), last)
        // The next start does the same (nothing was marked trusted in between).
        let again = daemon.stderr.utf8.count
        try? daemon.start()
        XCTAssertEqual(daemon.awaitExit(), 1)
        XCTAssertTrue((String(daemon.stderr.utf8.dropFirst(again)) ?? "").contains("crc mismatch"))
    }
}
