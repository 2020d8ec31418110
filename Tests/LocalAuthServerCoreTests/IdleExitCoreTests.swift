// S-83 in the core: when a socket-activated daemon has had nothing to do for
// ExitOnIdleSec=, its timer's deadline says so and the exit is due; any
// connection, or a record not yet durable, puts the deadline off.
import LocalAuthCore
import XCTest
@testable import LocalAuthServer

final class IdleExitCoreTests: XCTestCase {
    private static let after: UInt64 = 60_000_000_000

    func test_S83_aClientThatLeaves_startsTheIdleTime_andItsEndIsTheTimersDeadline() throws {
        // Given a socket-activated daemon (ExitOnIdleSec= by default, 60 s)
        // serving one client that made a context,
        let h = CoreHarness()
        h.core.exitsWhenIdle = true
        let user = try XCTUnwrap(h.open(uid: 1000))
        _ = try XCTUnwrap(h.newContext(on: user))
        h.endOfTurn()
        // then nothing is due while it stays, however long,
        h.turn(advance: 2 * Self.after)
        h.endOfTurn()
        XCTAssertFalse(h.core.idleExitIsDue)
        XCTAssertNil(h.core.idleExitDeadline)
        // when it leaves and its records are durable,
        h.core.peerClosed(user)
        h.perform()
        h.recorder.durableSeq = h.recorder.lastSeq
        h.turn()
        h.endOfTurn()
        let left = h.monotonic
        // then the timer's deadline is ExitOnIdleSec= later, not sooner,
        XCTAssertEqual(h.core.idleExitDeadline, left + Self.after)
        XCTAssertLessThanOrEqual(h.core.nextDeadline() ?? .max, left + Self.after)
        h.turn(advance: Self.after - 1_000_000)
        h.endOfTurn()
        XCTAssertFalse(h.core.idleExitIsDue)
        // and at it the exit is due; the daemon stops as on SIGTERM.
        h.turn(advance: 1_000_000)
        XCTAssertTrue(h.core.idleExitIsDue)
        h.core.exitForIdle()
        h.perform()
        XCTAssertTrue(h.core.isStopping)
        XCTAssertTrue(h.journal.contains { $0.message.hasPrefix("Nothing to do for 60 s (ExitOnIdleSec=)") })
    }

    func test_S83_notSocketActivated_orOff_orARecordNotDurable_noExit() throws {
        // Given a daemon started by hand, idle for ever: no deadline of its own.
        let byHand = CoreHarness()
        byHand.endOfTurn()
        byHand.turn(advance: 10 * Self.after)
        XCTAssertFalse(byHand.core.idleExitIsDue)
        // Given ExitOnIdleSec=0: none either.
        let off = CoreHarness { $0.daemon.exitOnIdle = 0 }
        off.core.exitsWhenIdle = true
        off.endOfTurn()
        off.turn(advance: 10 * Self.after)
        XCTAssertFalse(off.core.idleExitIsDue)
        // Given a socket-activated daemon whose last record is not durable:
        let h = CoreHarness()
        h.core.exitsWhenIdle = true
        h.recorder.syncsAtOnce = false
        let user = try XCTUnwrap(h.open(uid: 1000))
        _ = try XCTUnwrap(h.newContext(on: user))
        h.core.peerClosed(user)
        h.perform()
        h.endOfTurn()
        XCTAssertLessThan(h.recorder.durableSeq, h.recorder.lastSeq)
        h.turn(advance: 2 * Self.after)
        h.endOfTurn()
        XCTAssertFalse(h.core.idleExitIsDue, "the log is not synced yet")
    }
}
