// SavedRights, LARight's rights as a value: given changes and the store
// writer's answers, the writes it asks for (one in flight, the rest
// grouped into the next), whom each answer settles, and the key
// operations' turns (S-81).
import LocalAuthCore
import XCTest
@testable import LocalAuthServer

final class SavedRightsTests: XCTestCase {
    private let alice: UserID = 1000
    private let ctx = ContextID(high: 1, low: 2)

    private func saved(_ rights: inout SavedRights, _ identifier: String, tag: String) -> RightsWrite? {
        rights.store.save(alice, identifier, requirement: .default, domainState: "", sealed: nil, key: nil,
                           account: RightAccount(name: "alice", born: 1))
        return rights.awaitWrite(RightWaiter(connection: 16, tag: tag,
                                             facts: [.saved(uid: alice, identifier: identifier, requirement: .default)]))
    }

    private func tags(_ answer: RightsWriteAnswer?) -> (durable: Bool, tags: [String])? {
        switch answer {
        case .durable(let waiters)?: return (true, waiters.map(\.tag))
        case .failed(let waiters)?: return (false, waiters.map(\.tag))
        case nil: return nil
        }
    }

    /// Group commit: a change made while a write is in flight waits for
    /// the next write, which carries every change made meanwhile.
    func test_givenAWriteInFlight_whenMoreSavesCome_thenTheyGoTogetherInTheNextWrite() throws {
        var rights = SavedRights()
        let first = try XCTUnwrap(saved(&rights, "a", tag: "t1"))
        XCTAssertNil(saved(&rights, "b", tag: "t2"), "one write in flight at a time")
        XCTAssertNil(saved(&rights, "c", tag: "t3"))
        XCTAssertNil(rights.nextWrite(), "not while the first is in flight")
        XCTAssertEqual(tags(rights.written(first.token, failed: false))?.tags, ["t1"])
        let second = try XCTUnwrap(rights.nextWrite())
        XCTAssertEqual(String(decoding: second.bytes, as: UTF8.self).split(separator: "\n").count, 4, "header and three rights")
        XCTAssertEqual(tags(rights.written(second.token, failed: false))?.tags, ["t2", "t3"])
        XCTAssertNil(rights.nextWrite())
    }

    /// A failed write rolls the store back to its last durable rights and
    /// settles every change since, in flight or waiting.
    func test_givenAFailedWrite_thenTheStoreRollsBackAndEveryWaiterIsAnswered() throws {
        var rights = SavedRights()
        let first = try XCTUnwrap(saved(&rights, "a", tag: "t1"))
        XCTAssertEqual(tags(rights.written(first.token, failed: false))?.tags, ["t1"])
        let second = try XCTUnwrap(saved(&rights, "b", tag: "t2"))
        XCTAssertNil(saved(&rights, "c", tag: "t3"))
        let answer = try XCTUnwrap(tags(rights.written(second.token, failed: true)))
        XCTAssertFalse(answer.durable)
        XCTAssertEqual(answer.tags, ["t2", "t3"])
        XCTAssertNotNil(rights.store.right(alice, "a"))
        XCTAssertNil(rights.store.right(alice, "b"), "rolled back")
        XCTAssertNil(rights.nextWrite(), "nothing left to write")
        XCTAssertNil(rights.written(second.token, failed: false), "an answer to no write in flight")
    }

    /// A grant holds for the save it was made for; a new save of the
    /// identifier (a new generation) or the context's end takes it away.
    func test_givenAGrant_thenItHoldsForItsGenerationUntilTheContextGoes() throws {
        var rights = SavedRights()
        rights.beginAuthorization(PendingRightAuthorization(uid: alice, identifier: "a", generation: 1), on: ctx)
        XCTAssertTrue(rights.isAuthorizing(ctx))
        let pending = try XCTUnwrap(rights.endAuthorization(on: ctx))
        rights.grant(pending, on: ctx)
        XCTAssertTrue(rights.isGranted("a", on: ctx, generation: 1))
        XCTAssertFalse(rights.isGranted("a", on: ctx, generation: 2))
        rights.forget([ctx])
        XCTAssertFalse(rights.isGranted("a", on: ctx, generation: 1))
        XCTAssertFalse(rights.touchesContexts)
    }

    /// S-81: one key operation per user runs at a time; the next starts
    /// once its result came back.
    func test_S81_givenTwoOperationsOfOneUser_thenTheSecondRunsAfterTheFirstFinished() throws {
        var rights = SavedRights()
        let algorithm = try XCTUnwrap(KeyAlgorithm.all.first)
        func job(_ tag: String) -> PendingKeyJob {
            PendingKeyJob(connection: 16, tag: tag, uid: alice, ctx: ctx, identifier: "a", generation: 1,
                          algorithm: algorithm, input: [1, 2, 3])
        }
        XCTAssertTrue(rights.enqueueKeyJob(job("k1"), principal: alice, unlimited: false))
        XCTAssertTrue(rights.enqueueKeyJob(job("k2"), principal: alice, unlimited: false))
        let first = try XCTUnwrap(rights.nextKeyJob())
        let token = rights.keyJobStarted(first)
        XCTAssertNil(rights.nextKeyJob(), "the user's first runs")
        let finished = try XCTUnwrap(rights.keyJobFinished(token))
        XCTAssertEqual(finished.tag, "k1")
        XCTAssertTrue(finished.input.isEmpty, "a running job keeps no input")
        XCTAssertNil(rights.keyJobFinished(token), "answered once")
        XCTAssertEqual(rights.nextKeyJob()?.tag, "k2")
    }
}
