// ServerCore driven with no socket, no file and no thread (issue #18 item 1):
// the rules of the connection path, the reply gate and fail-closed, as
// inputs in and actions out. CoreHarness performs the actions as the shell would.
import LocalAuthConfig
import LocalAuthCore
import LocalAuthSystem
import XCTest
@testable import LocalAuthServer

final class ServerCoreTests: XCTestCase {
    /// uid 1000 with passcode 1234 set by root, a context, and an `evaluate`
    /// (policy owner, nothing enrolled) at its passcode prompt.
    private func userAtPasscodePrompt(_ h: CoreHarness) throws -> (id: Connection.ID, ctx: String, attemptsLeft: Int) {
        let admin = try XCTUnwrap(h.open(uid: 0))
        h.feed("a set-passcode uid=1000 secret=1234\n", on: admin)
        h.runJobs()
        XCTAssertEqual(h.reply("a", on: admin), "a OK")
        let user = try XCTUnwrap(h.open(uid: 1000))
        let ctx = try XCTUnwrap(h.newContext(on: user))
        h.feed("e evaluate ctx=\(ctx) policy=owner reason=x\n", on: user)
        let prompt = try XCTUnwrap(h.reply("e", on: user))
        XCTAssertTrue(prompt.contains("PROMPT kind=passcode"), prompt)
        let left = try XCTUnwrap(prompt.split(separator: " ").first { $0.hasPrefix("attempts-left=") })
        return (user, ctx, try XCTUnwrap(Int(left.dropFirst("attempts-left=".count))))
    }

    func test_S40_aWrongPasscodesReplyIsSentOnlyOnceItsFailureIsDurable() throws {
        // Given a passcode prompt, and a log that syncs only when told.
        let h = CoreHarness()
        let (user, ctx, left) = try userAtPasscodePrompt(h)
        h.recorder.syncsAtOnce = false
        // When a wrong passcode is checked and its failure recorded, not yet durable,
        h.feed("w passcode ctx=\(ctx) secret=0000\n", on: user)
        XCTAssertEqual(h.reply("w", on: user), "w OK")
        h.runJobs()
        h.turn()
        h.timer()
        h.endOfTurn()
        // then the prompt that reveals it (one attempt fewer) is in no `.send`,
        XCTAssertLessThan(h.recorder.durableSeq, h.recorder.lastSeq)
        XCTAssertFalse(h.lines(user).contains { $0.contains("attempts-left=\(left - 1)") }, "\(h.lines(user))")
        // and once the log is durable through it, it is sent.
        h.recorder.durableSeq = h.recorder.lastSeq
        h.turn()
        h.endOfTurn()
        XCTAssertTrue(h.reply("e", on: user)?.contains("attempts-left=\(left - 1)") ?? false, "\(h.lines(user))")
    }

    func test_S41_aLogThatCannotRecordRefusesEveryRequestAndTheConnectionStillAnswers() throws {
        // Given a connection with a context,
        let h = CoreHarness()
        let user = try XCTUnwrap(h.open(uid: 1000))
        let ctx = try XCTUnwrap(h.newContext(on: user))
        // when the log fails,
        h.recorder.failure = "EIO (test)"
        h.feed("c can-evaluate ctx=\(ctx) policy=biometrics\nn2 new\np ping\n", on: user)
        h.turn()
        h.feed("n3 new\n", on: user)
        // then every request that needs the log is refused, and the connection answers.
        for tag in ["c", "n2", "n3"] {
            let reply = try XCTUnwrap(h.reply(tag, on: user), tag)
            XCTAssertTrue(reply.hasPrefix("\(tag) ERR"), reply)
            XCTAssertTrue(reply.contains("unavailable"), reply)
        }
        XCTAssertEqual(h.reply("p", on: user), "p OK")
        XCTAssertFalse(h.closed.contains(user))
        XCTAssertTrue(h.journal.contains { $0.priority == .error && $0.message.contains("The event log failed") })
    }

    func test_S12_S14_aClosedPeersContextsEndAndItsEvaluationsFinalAnswerIsSentFirst() throws {
        // Given an evaluation waiting at its prompt,
        let h = CoreHarness()
        let (user, ctx, _) = try userAtPasscodePrompt(h)
        XCTAssertNotNil(h.core.authenticator.state.contexts[try XCTUnwrap(ContextID(hex: ctx))])
        // when the peer closes (EOF),
        h.turn()
        h.core.peerClosed(user)
        h.perform()
        h.endOfTurn()
        // then the evaluation got its one final answer, the context ended, and the connection closed.
        let last = try XCTUnwrap(h.lines(user).last)
        XCTAssertTrue(last.hasPrefix("e ERR"), last)
        XCTAssertNil(h.core.authenticator.state.contexts[try XCTUnwrap(ContextID(hex: ctx))])
        XCTAssertTrue(h.closed.contains(user))
        XCTAssertNil(h.core.connections[user])
    }

    func test_S33_aPreemptedEvaluationGetsExactlyOneFinalAnswer() throws {
        // Given uid 1000's evaluation at its passcode prompt,
        let h = CoreHarness()
        let (user, first, _) = try userAtPasscodePrompt(h)
        let second = try XCTUnwrap(h.newContext(on: user, tag: "n2"))
        // when a second evaluation of the same user reaches a prompt, and the
        // first is then cancelled and invalidated in the same read,
        h.feed("e2 evaluate ctx=\(second) policy=owner reason=y\nc cancel ctx=\(first)\ni invalidate ctx=\(first)\n", on: user)
        // then the first has exactly one final answer (systemCancel), after its prompt,
        let finals = h.lines(user).filter { $0.hasPrefix("e OK") || $0.hasPrefix("e ERR") }
        XCTAssertEqual(finals.count, 1, "\(h.lines(user))")
        XCTAssertTrue(finals.first?.contains("code=-4") ?? false, "\(finals)")
        XCTAssertTrue(h.reply("c", on: user)?.hasPrefix("c ERR") ?? false, "the cancel found nothing to cancel")
        // and the second waits at its own prompt.
        XCTAssertTrue(h.reply("e2", on: user)?.contains("PROMPT kind=passcode") ?? false)
    }

    func test_MaxPendingBytes_aPeerThatDoesNotReadGetsErrThenByeAndIsClosed() throws {
        // Given a 4 KiB MaxPendingBytes and a peer that reads nothing,
        let h = CoreHarness { $0.daemon.maxPendingBytes = 4096 }
        let user = try XCTUnwrap(h.open(uid: 1000))
        h.socketRoom = 0
        // when it pipelines far more replies than that,
        h.feed(String(repeating: "p ping\n", count: 1000), on: user)
        XCTAssertFalse(h.closed.contains(user), "nothing reached the peer yet")
        // and then reads,
        h.socketRoom = nil
        h.turn()
        h.core.writable(user)
        h.perform()
        // then it gets `* ERR limit` then `* BYE limit` and nothing else, then the close.
        let lines = h.lines(user)
        XCTAssertEqual(lines.count, 2, "\(lines.prefix(4))")
        XCTAssertTrue(lines.first?.hasPrefix("* ERR") ?? false)
        XCTAssertTrue(lines.first?.contains("limit") ?? false)
        XCTAssertEqual(lines.last, "* BYE reason=limit")
        XCTAssertTrue(h.closed.contains(user))
        XCTAssertEqual(h.core.counters.pendingOverflows, 1)
    }

    func test_muchOutputQueuedInOneReadIsWrittenBeforeTheRestOfItsLinesAreHandled() throws {
        // Given one read of 4000 pipelined pings (20 KB of replies, over the 16 KiB early-write mark),
        let h = CoreHarness()
        let user = try XCTUnwrap(h.open(uid: 1000))
        var script = ""
        for n in 0..<4000 { script += "t\(n) ping\n" }
        h.feed(script, on: user, endTurn: false)
        // then a write went out in the middle of the read, and every reply arrived, in order.
        XCTAssertGreaterThanOrEqual(h.sends, 1, "an early write, before the turn's end")
        h.endOfTurn()
        let lines = h.lines(user)
        XCTAssertEqual(lines.count, 4000)
        XCTAssertEqual(lines.first, "t0 OK")
        XCTAssertEqual(lines.last, "t3999 OK")
        XCTAssertEqual(lines, (0..<4000).map { "t\($0) OK" })
    }

    func test_aLineTooLongIsRefusedWithByeProtocolAndClosed() throws {
        let h = CoreHarness()
        let user = try XCTUnwrap(h.open(uid: 1000))
        h.feed("p ping\n" + String(repeating: "x", count: 9000) + "\nq ping\n", on: user)
        let lines = h.lines(user)
        XCTAssertEqual(lines.first, "p OK")
        XCTAssertTrue(lines.dropFirst().first?.contains("line-too-long") ?? false, "\(lines)")
        XCTAssertEqual(lines.last, "* BYE reason=protocol")
        XCTAssertNil(h.reply("q", on: user), "nothing after the refusal is handled")
        XCTAssertTrue(h.closed.contains(user))
    }

    func test_anUnfinishedLineTimesOutByTheTurnsTimeNotBefore() throws {
        // Given half a line, and a 10 s IdleLineTimeoutSec,
        let h = CoreHarness()
        let user = try XCTUnwrap(h.open(uid: 1000))
        h.feed("p pi", on: user)
        // when 9 s pass, nothing happens;
        h.turn(advance: 9_000_000_000)
        h.timer()
        h.endOfTurn()
        XCTAssertEqual(h.lines(user), [])
        // when 2 s more pass, the connection is refused and closed.
        h.turn(advance: 2_000_000_000)
        h.timer()
        h.endOfTurn()
        let lines = h.lines(user)
        XCTAssertTrue(lines.first?.contains("idle line timeout") ?? false, "\(lines)")
        XCTAssertEqual(lines.last, "* BYE reason=limit")
        XCTAssertTrue(h.closed.contains(user))
        XCTAssertEqual(h.core.counters.idleLineTimeouts, 1)
    }

    func test_aClosingConnectionDrainsUntilItsPeerHangsUpNotAtAStaleEOF() throws {
        // Given a connection refused (closing) whose peer reads nothing yet,
        let h = CoreHarness()
        let user = try XCTUnwrap(h.open(uid: 1000))
        h.socketRoom = 0
        h.feed(String(repeating: "x", count: 9000) + "\n", on: user)
        XCTAssertFalse(h.core.isReading(user))
        // a read's EOF does not end it (the refusal is still owed),
        h.core.peerClosed(user)
        h.perform()
        XCTAssertFalse(h.closed.contains(user))
        // a hang-up does.
        h.core.peerHungUp(user)
        h.perform()
        XCTAssertTrue(h.closed.contains(user))
    }

    func test_S48_belowTheReserveByTheFreeSpacePortAnUnprivilegedNewIsRefusedAndRootsIsNot() throws {
        // Given a 64 MiB reserve and a file system with 1 MiB free (the port, no disk),
        let h = CoreHarness { $0.log.reserveSpace = 64 << 20 }
        h.core.freeSpace = { _ in 1 << 20 }
        let user = try XCTUnwrap(h.open(uid: 1000))
        let root = try XCTUnwrap(h.open(uid: 0))
        // when uid 1000's routine request is admitted (its look at the space),
        // then it is refused, root's is not, and the journal says so.
        h.feed("n new\n", on: user)
        h.feed("r new\n", on: root)
        XCTAssertTrue(h.reply("n", on: user)?.contains("unavailable") ?? false, "\(h.lines(user))")
        XCTAssertTrue(h.reply("r", on: root)?.hasPrefix("r OK ctx=") ?? false, "\(h.lines(root))")
        XCTAssertTrue(h.journal.contains { $0.priority == .error && $0.message.contains("ReserveSpace=") })
        // And when space is back, the next look (a look is good for 100 ms) serves everyone.
        h.core.freeSpace = { _ in 1 << 30 }
        h.turn(advance: ServerCore.lookEvery)
        h.feed("n2 new\n", on: user)
        XCTAssertTrue(h.reply("n2", on: user)?.hasPrefix("n2 OK ctx=") ?? false, "\(h.lines(user))")
    }

    func test_connectionLimitsRefuseAtOpeningWithTheRefusalsBytes() throws {
        let h = CoreHarness {
            $0.daemon.maxConnectionsPerUser = 2
            $0.daemon.maxConnections = 3
        }
        XCTAssertNotNil(h.open(uid: 1000))
        XCTAssertNotNil(h.open(uid: 1000))
        // A third of uid 1000: refused, per user.
        guard case .refused(let bytes) = h.core.connectionOpened(peer: PeerCredentials(pid: 2, uid: 1000, gid: 1000)) else {
            return XCTFail("a third connection of one uid was let in")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("* ERR"), text)
        XCTAssertTrue(text.hasSuffix("* BYE reason=limit\n"), text)
        // Another uid fits once, then the daemon is full.
        XCTAssertNotNil(h.open(uid: 1001))
        XCTAssertNil(h.open(uid: 1002))
        XCTAssertEqual(h.core.counters.refusedConnections, 2)
        XCTAssertEqual(h.core.connections.count, 3)
    }

    func test_pipelinedLinesFedOneByteAtATimeGetTheSameRepliesAsFedAtOnce() throws {
        // The context id is the random source's: the same in both runs.
        let ctx = String(repeating: "ab", count: 16)
        let script = "a hello client=x\nb ping\nc status\nd fly-away\n\n  \r\ne can-evaluate ctx=00 policy=biometrics\n"
            + "f get ctx=0123456789abcdef0123456789abcdef\ng can-evaluate ctx=0123456789abcdef0123456789abcdef policy=9\n"
            + "n new\ni can-evaluate ctx=\(ctx) policy=biometrics\nj set ctx=\(ctx) cancel-title=\"No thanks\"\nk get ctx=\(ctx)\nh ping\n"
        let atOnce = CoreHarness()
        atOnce.core.randomBytes = { Array(repeating: 0xab, count: $0) }
        let one = try XCTUnwrap(atOnce.open(uid: 1000))
        atOnce.feed(script, on: one)
        let byteWise = CoreHarness()
        byteWise.core.randomBytes = { Array(repeating: 0xab, count: $0) }
        let two = try XCTUnwrap(byteWise.open(uid: 1000))
        byteWise.feedByteByByte(script, on: two)
        XCTAssertEqual(atOnce.lines(one).count, 14, "\(atOnce.lines(one))")
        XCTAssertEqual(atOnce.reply("n", on: one), "n OK ctx=\(ctx)")
        XCTAssertTrue(atOnce.reply("k", on: one)?.contains("cancel-title=\"No thanks\"") ?? false, "\(atOnce.lines(one))")
        XCTAssertEqual(atOnce.lines(one), byteWise.lines(two))
        XCTAssertEqual(atOnce.reply("h", on: one), "h OK")
    }

    func test_S32_aStopEndsTheRunningEvaluationThenSaysByeThenClosesEverything() throws {
        // Given an evaluation at its prompt,
        let h = CoreHarness()
        let (user, _, _) = try userAtPasscodePrompt(h)
        // when SIGTERM comes, the shell finishes the turn and stops,
        h.turn()
        h.core.signal(.stop)
        XCTAssertTrue(h.core.isStopping)
        XCTAssertFalse(h.core.acceptsConnections)
        h.core.shutdown()
        h.perform()
        XCTAssertFalse(h.core.awaitsDurability, "the fake log syncs at once")
        h.core.finishShutdown()
        h.perform()
        // then the evaluation's one final answer is systemCancel, `* BYE reason=shutdown` is last, all close.
        let lines = h.lines(user)
        XCTAssertTrue(lines.dropLast().last?.hasPrefix("e ERR") ?? false, "\(lines)")
        XCTAssertTrue(lines.dropLast().last?.contains("code=-4") ?? false, "\(lines)")
        XCTAssertEqual(lines.last, "* BYE reason=shutdown")
        XCTAssertTrue(h.closed.contains(user))
        XCTAssertTrue(h.core.isStopped)
        XCTAssertTrue(h.journal.contains { $0.id == .stopped })
    }

    func test_theTestHangHookIsAnActionOnlyWhenConfigured() {
        let h = CoreHarness()
        h.core.signal(.testHang)
        XCTAssertTrue(h.core.takeActions().isEmpty)
        h.core.service.testHangSeconds = 3
        h.core.signal(.testHang)
        guard case .hang(let seconds)? = h.core.takeActions().first else { return XCTFail("no .hang") }
        XCTAssertEqual(seconds, 3)
    }

    func test_S50_aLineWithASecretAsksTheShellToWipeItsReadBuffer() throws {
        let h = CoreHarness()
        let user = try XCTUnwrap(h.open(uid: 1000))
        "p ping\n".utf8.withContiguousStorageIfAvailable { _ = h.core.received(UnsafeRawBufferPointer($0), on: user) }
        XCTAssertFalse(h.core.lastInputHeldSecret)
        "s set-passcode secret=4321\n".utf8.withContiguousStorageIfAvailable { _ = h.core.received(UnsafeRawBufferPointer($0), on: user) }
        XCTAssertTrue(h.core.lastInputHeldSecret)
    }
}
