// S-49 as amended by issue 34 item 3, in the core: while the check of the
// sealed segments that the start's snapshot covers runs, an idle daemon
// does not exit (S-83); a whole result is journaled, a broken one is
// journaled as a start's refusal and stops the daemon as SIGTERM does.
import LocalAuthCore
@testable import LocalAuthLog
import XCTest
@testable import LocalAuthServer

final class CoveredSegmentsCoreTests: XCTestCase {
    private static let after: UInt64 = 60_000_000_000

    func test_S49_S83_anIdleDaemonWaitsForTheCoveredCheck_thenMayExit() throws {
        // Given a socket-activated daemon, idle, whose covered check runs,
        let h = CoreHarness()
        h.core.exitsWhenIdle = true
        h.core.coveredSegmentsPending = true
        h.endOfTurn()
        // when ExitOnIdleSec= passes, then it does not exit;
        h.turn(advance: 2 * Self.after)
        h.endOfTurn()
        XCTAssertFalse(h.core.idleExitIsDue)
        // when the check reports the segments whole,
        h.core.coveredSegmentsChecked(count: 3, failure: nil)
        h.perform()
        h.endOfTurn()
        XCTAssertFalse(h.core.isStopping)
        XCTAssertTrue(h.journal.contains { $0.message.hasPrefix("Checked the 3 sealed segments") })
        // then the idle time starts and its end is due.
        h.turn(advance: Self.after)
        XCTAssertTrue(h.core.idleExitIsDue)
    }

    func test_S49_S41_aBrokenCoveredSegment_isJournaledAsAtStart_andStopsTheDaemon() throws {
        // Given a serving daemon whose covered check runs,
        let h = CoreHarness()
        h.core.coveredSegmentsPending = true
        let user = try XCTUnwrap(h.open(uid: 1000))
        _ = try XCTUnwrap(h.newContext(on: user))
        h.endOfTurn()
        // when the check finds a changed record,
        let broken = LogError.untrustworthy(Corruption(segment: 1, offset: 64, seq: 1, reason: .crcMismatch, detail: "crc mismatch"))
        h.core.coveredSegmentsChecked(count: 3, failure: broken)
        h.perform()
        // then the journal has the start's refusal, naming the commands, and the daemon stops.
        let entry = try XCTUnwrap(h.journal.first { $0.message.hasPrefix("The event log cannot be trusted: ") })
        XCTAssertEqual(entry.id, .corruptionFound)
        XCTAssertTrue(entry.message.contains("localauthctl verify") && entry.message.contains("localauthctl repair"), entry.message)
        XCTAssertTrue(h.core.isStopping)
    }
}
