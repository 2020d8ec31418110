// The connection's one state (Connection.State) as the core drives it:
// parked (S-43/S-51) reads no line until its request is answered; lines
// behind an early write wait for `wrote`, then go in order; closing reads
// nothing and still drains; a connection gone from the table is written
// nothing, and a late passcode result or lookup answer for it is dropped.
import LocalAuthConfig
import LocalAuthCore
import LocalAuthSystem
import XCTest
@testable import LocalAuthServer
@testable import LocalAuthSimulation

final class ConnectionStateTests: XCTestCase {
    /// uid 1000 under AdminGroup=wheel, an admin verb of it (`stats` by
    /// default) parked on the group lookup that its connection's opening asked for.
    private func parkedOnLookup(_ h: CoreHarness, _ line: String = "s stats\n") throws -> (id: Connection.ID, query: GroupQuery) {
        let user = try XCTUnwrap(h.open(uid: 1000))
        let query = try XCTUnwrap(h.lookups.first, "the opening asks AdminGroup ahead")
        h.feed(line, on: user)
        XCTAssertEqual(h.core.connections[user]?.state, .open(.parked))
        return (user, query)
    }

    func test_S43_S51_givenAParkedConnection_whenMoreLinesArrive_thenNoneIsHandledUntilItsRequestIsAnswered() throws {
        // Given a request parked on an AdminGroup lookup,
        let h = CoreHarness { $0.daemon.adminGroup = "wheel" }
        let (user, query) = try parkedOnLookup(h)
        XCTAssertFalse(h.core.isReading(user), "the shell must not read it")
        // when lines arrive behind it (a stale readiness, read anyway),
        h.feed("p ping\nq ping\n", on: user)
        // then none is handled, and the shell is told to wipe what it read (S-50);
        XCTAssertEqual(h.lines(user), [])
        XCTAssertTrue(h.core.lastInputHeldSecret)
        XCTAssertEqual(h.core.connections[user]?.state, .open(.parked))
        // when the lookup answers, the parked request is answered first, then the lines, in order,
        h.turn()
        h.core.adminLookupsAnswered([(query, false)])
        h.endOfTurn()
        let lines = h.lines(user)
        XCTAssertEqual(lines.count, 3, "\(lines)")
        XCTAssertTrue(lines.first?.hasPrefix("s ERR") ?? false, "\(lines)")
        XCTAssertTrue(lines.first?.contains("permission-denied") ?? false, "\(lines)")
        XCTAssertEqual(Array(lines.dropFirst()), ["p OK", "q OK"])
        // and it reads again.
        XCTAssertEqual(h.core.connections[user]?.state, .open(.lines))
        XCTAssertTrue(h.core.isReading(user))
    }

    func test_givenAnEarlyWrite_whenLinesAreLeftBehindIt_thenTheyWaitForWroteAndAreHandledThenInOrder() throws {
        // Given one read of 4000 pings (20 KB of replies: an early write at 16 KiB),
        let h = CoreHarness()
        let user = try XCTUnwrap(h.open(uid: 1000))
        let script = (0..<4000).map { "t\($0) ping\n" }.joined()
        Array(script.utf8).withUnsafeBytes { _ = h.core.received($0, on: user) }
        // when the core has asked for the write and the shell has not done it yet,
        let connection = try XCTUnwrap(h.core.connections[user])
        XCTAssertEqual(connection.state, .open(.behindWrite))
        XCTAssertTrue(connection.output.inFlight)
        let handled = connection.output.unsentByteCount
        XCTAssertLessThan(handled, script.utf8.count / 2, "the lines behind the write are not handled yet")
        XCTAssertTrue(h.core.isReading(user), "the shell may read on meanwhile")
        // then the write's `wrote` handles the rest, in order.
        h.perform()
        XCTAssertEqual(h.core.connections[user]?.state, .open(.lines))
        h.endOfTurn()
        XCTAssertEqual(h.lines(user), (0..<4000).map { "t\($0) OK" })
    }

    func test_S14_givenAClosingConnection_whenItsPeerSendsMore_thenNothingIsHandledAndItsOutputStillDrains() throws {
        // Given a connection that said `quit` and whose peer reads nothing yet,
        let h = CoreHarness()
        let user = try XCTUnwrap(h.open(uid: 1000))
        h.socketRoom = 0
        h.feed("p ping\nq quit\n", on: user)
        guard case .closing = h.core.connections[user]?.state else {
            return XCTFail("quit closes: \(String(describing: h.core.connections[user]?.state))")
        }
        XCTAssertFalse(h.core.isReading(user))
        // when more lines come (read anyway),
        var more = Array("x ping\n".utf8)
        let readable = more.withUnsafeBytes { h.core.received($0, on: user) }
        h.perform()
        more.removeAll()
        // then they are not handled (and the shell wipes its copy),
        XCTAssertFalse(readable)
        XCTAssertTrue(h.core.lastInputHeldSecret)
        // and once the peer reads, what was owed goes out, then the close.
        h.socketRoom = nil
        h.turn()
        h.core.writable(user)
        h.perform()
        XCTAssertEqual(h.lines(user).first, "p OK")
        XCTAssertTrue(h.lines(user).contains { $0.hasPrefix("q OK") }, "\(h.lines(user))")
        XCTAssertNil(h.reply("x", on: user))
        XCTAssertTrue(h.closed.contains(user))
        XCTAssertNil(h.core.connections[user], "drained and forgotten")
    }

    func test_S47_givenAConnectionGoneWhileItsPasscodeJobRuns_thenItsResultIsWrittenNowhereAndTheChangeStillGoesOn() throws {
        // Given uid 1000 setting its first passcode (a hash job queued),
        let h = CoreHarness()
        let user = try XCTUnwrap(h.open(uid: 1000))
        h.feed("s set-passcode secret=1234\n", on: user)
        XCTAssertEqual(h.jobs.count, 1)
        // when the peer goes before the job's result is in,
        h.turn()
        h.core.peerClosed(user)
        h.perform()
        h.endOfTurn()
        XCTAssertNil(h.core.connections[user], "nothing was owed: forgotten at once")
        let sendsBefore = h.sends
        // then the late result is written to nobody (no `.send` for a gone connection),
        h.runJobs()
        XCTAssertEqual(h.sends, sendsBefore)
        XCTAssertNil(h.reply("s", on: user))
        // nothing asks for the gone connection's output,
        var asked = false
        h.core.writeOutput(user) { _ in
            asked = true
            return 0
        }
        XCTAssertFalse(asked)
        h.core.send(Array("late\n".utf8), to: user)
        XCTAssertTrue(h.core.takeActions().isEmpty)
        // and the passcode change itself was recorded, as when its requester stays.
        XCTAssertTrue(h.passcodes.isSet(1000))
    }

    func test_S51_givenAConnectionGoneWhileItsRequestWaitsForAGroupLookup_thenTheLateAnswerIsDropped() throws {
        // Given an admin's `reset` (which would record an event) parked on an AdminGroup lookup,
        let h = CoreHarness { $0.daemon.adminGroup = "wheel" }
        let (user, query) = try parkedOnLookup(h, "r reset uid=1001\n")
        let recorded = h.recorder.events.count
        // when the answer (a member) is taken in the same turn in which the peer goes,
        h.turn()
        h.core.adminLookupsAnswered([(query, true)])
        h.core.peerClosed(user)
        h.perform()
        h.endOfTurn()
        // then the request never runs (nothing recorded), the connection is gone, and nothing is sent.
        XCTAssertEqual(h.recorder.events.count, recorded, "\(h.recorder.events.suffix(2))")
        XCTAssertEqual(h.lookups.count, 1, "nothing runs for the gone connection, not even a new lookup")
        XCTAssertNil(h.core.connections[user])
        XCTAssertTrue(h.closed.contains(user))
        XCTAssertEqual(h.lines(user), [])
        XCTAssertTrue(h.core.parked.resumable.isEmpty)
        // A second connection of the same user is served as usual.
        let again = try XCTUnwrap(h.open(uid: 1000))
        h.feed("p ping\n", on: again)
        XCTAssertEqual(h.reply("p", on: again), "p OK")
    }
}
