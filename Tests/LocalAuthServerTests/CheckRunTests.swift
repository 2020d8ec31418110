// The daemon's recorder coalesces repeated identical checks (S-48, kind 33):
// which checks join a run and which start a new one, that the run reaches
// the log before anything else and at the flush that precedes replies, and
// that the live state the Authenticator folds equals the replay of what the
// log holds (S-38) when runs are recorded.
import Foundation
import LocalAuthCore
import LocalAuthLog
@testable import LocalAuthServer
import XCTest

final class CheckRunTests: XCTestCase {
    let alice: UserID = 1000
    let ctx = ContextID(high: 0xC0_FFEE, low: 1)
    let other = ContextID(high: 0xC0_FFEE, low: 2)
    let t: Int64 = 1_700_000_000_000_000
    var directory = ""

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("checkrun-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: directory) }

    private func check(_ ctx: ContextID, _ policy: Policy = .biometrics, failure: Failure? = nil) -> PolicyCheck {
        PolicyCheck(uid: alice, ctx: ctx, policy: policy, biometry: .touchID, failure: failure, domainState: "token")
    }

    private func open(snapshotEvery: UInt64 = 0) throws -> (EventLog, LogRecorder) {
        let log = try EventLog.open(directory)
        return (log, LogRecorder(log: log, failure: FailureFlag(), snapshotEvery: snapshotEvery))
    }

    /// Every record of the log, decoded, with its time.
    private func events(_ log: EventLog) throws -> [Event] {
        try log.history(uid: alice).map { Event(time: $0.time, try EventCodec.decode(kind: $0.keys.type, payload: $0.payload)) }
    }

    private func repeated(_ ctx: ContextID, _ count: UInt32, span: Int64 = 0, policy: Policy = .biometrics,
                          result: LAErrorCode? = nil, reason: String? = nil) -> EventBody {
        .policyCheckedRepeatedly(RepeatedChecks(uid: alice, ctx: ctx, policy: policy, biometry: .touchID, result: result,
                                                reason: reason, count: count, span: span))
    }

    func test_S48_identicalChecksInARowShareOneSeqAndBecomeOneRecordAtTheFlush() throws {
        let (log, recorder) = try open()
        let seqs = try (0..<5).map { try recorder.record(check(ctx), time: t + Int64($0)) }
        XCTAssertEqual(Set(seqs), [1], "one run, one seq")
        XCTAssertEqual(recorder.lastSeq, 1, "the run counts as appended")
        XCTAssertEqual(log.lastSeq, 0, "not in the log before the flush")
        recorder.flush(durableThrough: 0)
        XCTAssertEqual(log.lastSeq, 1)
        XCTAssertFalse(log.hasUnwritten, "the flush wrote it to the file")
        XCTAssertEqual(try events(log), [Event(time: t + 4, repeated(ctx, 5, span: 4))], "the last time, the first 4 µs before")
    }

    func test_S48_oneCheckStaysAPlainPolicyChecked() throws {
        let (log, recorder) = try open()
        XCTAssertEqual(try recorder.record(check(ctx), time: t), 1)
        recorder.flush(durableThrough: 0)
        XCTAssertEqual(try events(log), [Event(time: t, check(ctx).event)])
    }

    func test_S48_aDifferentCheckOrAnyOtherEventEndsTheRunAndKeepsTheOrder() throws {
        let (log, recorder) = try open()
        let denied = Failure(.biometryLockout)
        let seqs = [
            try recorder.record(check(ctx), time: t),
            try recorder.record(check(ctx), time: t),
            try recorder.record(check(other), time: t),                    // another context
            try recorder.record(check(other, .owner), time: t),            // another policy
            try recorder.record(check(other, .owner, failure: denied), time: t),   // another result
            try recorder.record(check(other, .owner, failure: denied), time: t),
            try recorder.record(check(other, .owner, failure: Failure(.biometryLockout, reason: "why")), time: t),  // reason
            try recorder.record(Event(time: t, .contextReleased(uid: alice, ctx: other))),
            try recorder.record(check(ctx), time: t),
            try recorder.record(check(ctx), time: t - 1),                  // earlier: a new run
        ]
        XCTAssertEqual(seqs, [1, 1, 2, 3, 4, 4, 5, 6, 7, 8])
        recorder.flush(durableThrough: 0)
        XCTAssertEqual(try events(log).map(\.body), [
            repeated(ctx, 2), check(other).event, check(other, .owner).event,
            repeated(other, 2, policy: .owner, result: .biometryLockout),
            check(other, .owner, failure: Failure(.biometryLockout, reason: "why")).event,
            .contextReleased(uid: alice, ctx: other), check(ctx).event, check(ctx).event,
        ])
    }

    func test_S48_aRunAtASnapshotSeqTakesNoRepeats() throws {
        // The snapshot at seq 2 holds the state right after its first check.
        let (log, recorder) = try open(snapshotEvery: 2)
        let created = EventBody.contextCreated(uid: alice, ctx: ctx, pid: 1)
        XCTAssertEqual(try recorder.record(Event(time: t, created)), 1)
        let seqs = try (0..<4).map { _ in try recorder.record(check(ctx), time: t) }
        XCTAssertEqual(seqs, [2, 3, 3, 3])
        recorder.flush(durableThrough: 0)
        XCTAssertEqual(try events(log).map(\.body), [created, check(ctx).event, repeated(ctx, 3)])
    }

    func test_S38_theLiveStateOfCoalescedChecksIsTheReplayOfTheLog() throws {
        let (log, recorder) = try open()
        var initial = AuthState()
        for (index, body) in [EventBody.passcodeChanged(uid: alice, set: true, by: 0), .enrollmentChanged(uid: alice, templates: ["t"], by: 0, domainState: "ds"),
                              .contextCreated(uid: alice, ctx: ctx, pid: 1), .contextCreated(uid: alice, ctx: other, pid: 1)].enumerated() {
            let event = Event(time: t + Int64(index), body)
            _ = try recorder.record(event)
            initial.apply(event)
        }
        let authenticator = Authenticator(state: initial, recorder: recorder)
        var observed: [UInt64] = []
        authenticator.observe = { seq, _ in observed.append(seq) }
        for (index, (context, policy)) in [(ctx, Policy.biometrics), (ctx, .biometrics), (ctx, .biometrics), (other, .owner),
                                           (other, .owner), (ctx, .biometrics), (ctx, .companion), (ctx, .companion)].enumerated() {
            guard case .success = authenticator.canEvaluate(context, policy: policy, now: t + 10 + Int64(index / 2)) else {
                return XCTFail("check \(index) refused")
            }
        }
        authenticator.flush()
        XCTAssertEqual(observed, [5, 6, 7, 8], "each record observed once, at its first check")
        let replayed = try events(log).reduce(AuthState(), AuthState.evolve)
        XCTAssertEqual(authenticator.state, replayed, "S-38: live == fold(log)")
        XCTAssertEqual(replayed.eventCount, 8, "four set-up records, four check records")
        XCTAssertEqual(try events(log).dropFirst(4).map(\.body).map { body -> UInt32 in
            if case .policyCheckedRepeatedly(let checks) = body { return checks.count } else { return 1 }
        }, [3, 2, 1, 2], "every check is in the log: 8")
    }
}
