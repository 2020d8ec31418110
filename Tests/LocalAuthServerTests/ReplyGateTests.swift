// S-40's reply gate on its own: where bytes go while a failure is not yet
// durable, what `durable(through:)` releases and when, what a failed log
// and a closed connection drop, and the journal entries that wait with them.
@testable import LocalAuthServer
import LocalAuthSystem
import XCTest

final class ReplyGateTests: XCTestCase {
    typealias Gate = ReplyGate<String>

    /// The log as the gate sees it: a durable seq the test moves.
    final class FakeLog {
        var durable: UInt64 = 0
        var asked = 0
        func read() -> UInt64 {
            asked += 1
            return durable
        }
    }

    /// What a server would do: send straight when admitted, else hold.
    func send(_ text: String, to id: UInt64, _ gate: inout Gate, barrier: UInt64, _ log: FakeLog,
              outputs: inout [UInt64: String]) {
        if gate.admits(id, barrier: barrier, durable: log.read) {
            outputs[id, default: ""] += text
        } else {
            gate.hold(Array(text.utf8), for: id, barrier: barrier)
        }
    }

    func release(_ gate: inout Gate, through seq: UInt64, outputs: inout [UInt64: String], journal: inout [String]) {
        gate.durable(through: seq, journal: { journal.append($0) }, release: { id, bytes in
            outputs[id, default: ""] += String(decoding: bytes, as: UTF8.self)
        })
    }

    func test_S40_givenNoUndurableFailure_thenBytesGoStraightOut_andTheLogIsNotAsked() {
        var gate = Gate()
        let log = FakeLog()
        XCTAssertTrue(gate.admits(7, barrier: 0, durable: log.read))
        XCTAssertFalse(gate.isShut(barrier: 0, durable: log.read))
        XCTAssertEqual(log.asked, 0, "a barrier of 0 needs no look at the log")
        XCTAssertTrue(gate.isEmpty)
    }

    func test_S40_givenAFailureAtSeq5NotDurable_whenBytesAreSent_thenTheyAreHeldInOrderUntilExactly5() {
        var gate = Gate()
        let log = FakeLog()
        log.durable = 4
        var outputs: [UInt64: String] = [:]
        var journal: [String] = []
        send("a1\n", to: 1, &gate, barrier: 5, log, outputs: &outputs)
        send("a2\n", to: 1, &gate, barrier: 5, log, outputs: &outputs)
        XCTAssertNil(outputs[1])
        XCTAssertTrue(gate.isHolding(1))
        XCTAssertEqual(gate.heldByteCount(1), 6)
        release(&gate, through: 4, outputs: &outputs, journal: &journal)
        XCTAssertNil(outputs[1], "seq 4 does not cover the failure at 5")
        release(&gate, through: 5, outputs: &outputs, journal: &journal)
        XCTAssertEqual(outputs[1], "a1\na2\n")
        XCTAssertFalse(gate.isHolding(1))
        XCTAssertTrue(gate.isEmpty)
        // The barrier is durable now: the next bytes pass.
        send("a3\n", to: 1, &gate, barrier: 5, log, outputs: &outputs)
        XCTAssertEqual(outputs[1], "a1\na2\na3\n")
    }

    func test_S40_givenHeldBytes_whenTheBarrierIsDurableBeforeTheRelease_thenNewBytesStillQueueBehindTheHeldOnes() {
        var gate = Gate()
        let log = FakeLog()
        var outputs: [UInt64: String] = [:]
        var journal: [String] = []
        send("first\n", to: 1, &gate, barrier: 3, log, outputs: &outputs)
        log.durable = 3  // the sync thread made it durable; the loop has not released yet
        send("second\n", to: 1, &gate, barrier: 3, log, outputs: &outputs)
        XCTAssertNil(outputs[1], "bytes never overtake held ones")
        send("other\n", to: 2, &gate, barrier: 3, log, outputs: &outputs)
        XCTAssertEqual(outputs[2], "other\n", "a connection holding nothing is not held up by another's")
        release(&gate, through: 3, outputs: &outputs, journal: &journal)
        XCTAssertEqual(outputs[1], "first\nsecond\n")
    }

    func test_S40_givenTwoFailures_thenEachReleaseGivesOnlyTheBytesItCovers() {
        var gate = Gate()
        let log = FakeLog()
        var outputs: [UInt64: String] = [:]
        var journal: [String] = []
        send("x\n", to: 1, &gate, barrier: 2, log, outputs: &outputs)
        send("y\n", to: 1, &gate, barrier: 6, log, outputs: &outputs)
        send("z\n", to: 1, &gate, barrier: 6, log, outputs: &outputs)
        release(&gate, through: 5, outputs: &outputs, journal: &journal)
        XCTAssertEqual(outputs[1], "x\n")
        XCTAssertEqual(gate.heldByteCount(1), 4)
        release(&gate, through: 6, outputs: &outputs, journal: &journal)
        XCTAssertEqual(outputs[1], "x\ny\nz\n")
    }

    func test_S40_givenManyConnectionsInterleaved_thenEachGetsItsOwnBytesInItsOwnOrder() {
        var gate = Gate()
        let log = FakeLog()
        var outputs: [UInt64: String] = [:]
        var journal: [String] = []
        var expected: [UInt64: String] = [:]
        var barrier: UInt64 = 10
        for step in 0..<300 {
            let id = UInt64((step * 7) % 13)
            if step % 50 == 0 { barrier += 1 }
            let text = "c\(id)s\(step)\n"
            send(text, to: id, &gate, barrier: barrier, log, outputs: &outputs)
            expected[id, default: ""] += text
            if step == 120 { release(&gate, through: 12, outputs: &outputs, journal: &journal) }
        }
        for id in expected.keys.sorted() {
            XCTAssertTrue(expected[id]!.hasPrefix(outputs[id] ?? ""), "connection \(id): a prefix, in order")
        }
        release(&gate, through: barrier, outputs: &outputs, journal: &journal)
        XCTAssertEqual(outputs, expected)
        XCTAssertTrue(gate.isEmpty)
    }

    func test_S40_givenHeldBytes_whenTheLogFails_thenTheyAreDroppedAndTheirConnectionsNamed() {
        var gate = Gate()
        let log = FakeLog()
        var outputs: [UInt64: String] = [:]
        var journal: [String] = []
        send("p\n", to: 3, &gate, barrier: 9, log, outputs: &outputs)
        send("q\n", to: 1, &gate, barrier: 9, log, outputs: &outputs)
        XCTAssertNil(gate.journal("locked out", barrier: 9, durable: log.read))
        XCTAssertEqual(gate.logFailed(), [3, 1], "in the order they started holding")
        release(&gate, through: 100, outputs: &outputs, journal: &journal)
        XCTAssertTrue(outputs.isEmpty, "a failure that never became durable is never revealed")
        XCTAssertTrue(journal.isEmpty)
        // Failed: nothing is held from now on (the server refuses what needs
        // the log), and a journal entry behind the dead barrier is dropped.
        XCTAssertTrue(gate.admits(3, barrier: 9, durable: log.read))
        XCTAssertNil(gate.journal("lifted", barrier: 101, durable: log.read))
        XCTAssertEqual(gate.journal("hello", barrier: 0, durable: log.read), "hello")
    }

    func test_S40_givenAClosedConnection_thenItsHeldBytesVanish_andOthersAreReleased() {
        var gate = Gate()
        let log = FakeLog()
        var outputs: [UInt64: String] = [:]
        var journal: [String] = []
        send("gone\n", to: 4, &gate, barrier: 2, log, outputs: &outputs)
        send("stays\n", to: 5, &gate, barrier: 2, log, outputs: &outputs)
        gate.forget(4)
        XCTAssertFalse(gate.isHolding(4))
        XCTAssertEqual(gate.heldByteCount(4), 0)
        release(&gate, through: 2, outputs: &outputs, journal: &journal)
        XCTAssertNil(outputs[4])
        XCTAssertEqual(outputs[5], "stays\n")
        XCTAssertTrue(gate.isEmpty)
        // A new connection that reuses nothing of the old one starts clean.
        send("new\n", to: 4, &gate, barrier: 2, log, outputs: &outputs)
        XCTAssertEqual(outputs[4], "new\n")
    }

    func test_S40_givenAnUndurableFailure_thenJournalEntriesWaitInOrder_andAreReleasedExactlyAtItsSeq() {
        var gate = Gate()
        let log = FakeLog()
        var outputs: [UInt64: String] = [:]
        var journal: [String] = []
        XCTAssertEqual(gate.journal("before", barrier: 0, durable: log.read), "before")
        XCTAssertNil(gate.journal("failed", barrier: 4, durable: log.read))
        XCTAssertNil(gate.journal("locked", barrier: 7, durable: log.read))
        release(&gate, through: 3, outputs: &outputs, journal: &journal)
        XCTAssertEqual(journal, [], "3 covers neither")
        release(&gate, through: 4, outputs: &outputs, journal: &journal)
        XCTAssertEqual(journal, ["failed"])
        // Made durable meanwhile, but an entry never overtakes a held one.
        log.durable = 7
        XCTAssertNil(gate.journal("after", barrier: 7, durable: log.read))
        XCTAssertEqual(journal, ["failed"])
        release(&gate, through: 7, outputs: &outputs, journal: &journal)
        XCTAssertEqual(journal, ["failed", "locked", "after"])
        XCTAssertEqual(gate.journal("later", barrier: 7, durable: log.read), "later")
        XCTAssertTrue(gate.isEmpty)
    }

    func test_S40_givenADurableLog_thenTheLogIsAskedOnceAndNotAgain() {
        var gate = Gate()
        let log = FakeLog()
        log.durable = 8
        for _ in 0..<10 { XCTAssertTrue(gate.admits(1, barrier: 8, durable: log.read)) }
        XCTAssertEqual(log.asked, 1, "durable only grows: once it covered the barrier it still does")
        XCTAssertEqual(gate.durable, 8)
    }

    func test_flushList_givenRepeatedAndInterleavedMarks_thenEachConnectionOnceInFirstMarkOrder() throws {
        var list = FlushList()
        let connections = try (0..<3).map { _ in try Self.connection().id }
        for index in [0, 0, 1, 0, 2, 1, 1, 0] { list.mark(connections[index]) }
        var batch: [Connection.ID] = []
        list.take(into: &batch)
        XCTAssertEqual(batch, connections)
        XCTAssertTrue(list.isEmpty)
        list.mark(connections[2])
        var second: [Connection.ID] = []
        list.take(into: &second)
        XCTAssertEqual(second, [connections[2]], "a new turn marks anew")
        list.recycle(&batch)
        XCTAssertTrue(list.isEmpty)
    }

    nonisolated(unsafe) static var nextID: UInt64 = 100

    /// A connection (the core's record: no socket).
    static func connection() throws -> Connection {
        nextID += 1
        return Connection(id: nextID, peer: PeerCredentials(pid: 1, uid: 1000, gid: 1000), principal: .assumed(for: 1000),
                          isPrivileged: false, isAdmin: false)
    }
}
