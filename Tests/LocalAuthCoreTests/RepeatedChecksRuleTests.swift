// S-48's "repeated identical checks recorded as one event with a count"
// (kind 33, policy-checked-repeatedly) with S-19's promise kept: the record
// decodes to every check it stands for, and folding it gives the state that
// folding those checks one by one gives (the live daemon's path too:
// `apply(check)` once, `applyRepeated` for the others), with one record
// counted instead of `count`.

import XCTest

@testable import LocalAuthCore

final class RepeatedChecksRuleTests: XCTestCase {
    private let ctxBytes: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x00, 0xC0, 0xFF, 0xEE, 0, 0, 0, 0, 0, 0, 0, 0x01]

    func test_S48_repeatedChecksDecodeByteByByteAsTheFormatSays() throws {
        // Layout 1, policy-checked's fields (uid 1000, ctx, policy 1, biometry
        // touchID, no result, no reason), then count 300 (varint 0xAC 0x02)
        // and span 1,500 µs (varint 0xDC 0x0B).
        let bytes: [UInt8] = [0x01, 0xE8, 0x07] + ctxBytes + [0x02, 0x02, 0x00, 0x00, 0xAC, 0x02, 0xDC, 0x0B]
        let checks = RepeatedChecks(uid: 1000, ctx: ctx(1), policy: .biometrics, biometry: .touchID, result: nil, reason: nil,
                                    count: 300, span: 1_500)
        XCTAssertEqual(try EventCodec.decode(kind: 33, payload: bytes), .policyCheckedRepeatedly(checks))
        XCTAssertEqual(EventCodec.encode(.policyCheckedRepeatedly(checks)), bytes)
        // A failed check's result and reason, as in policy-checked.
        let locked = RepeatedChecks(uid: 0, ctx: ctx(1), policy: .owner, biometry: .faceID, result: .biometryLockout,
                                    reason: "r", count: 2, span: 0)
        XCTAssertEqual(EventCodec.encode(.policyCheckedRepeatedly(locked)),
                       [0x01, 0x00] + ctxBytes + [0x04, 0x04, 0x01, 0x0F, 0x01, 0x01, 0x72, 0x02, 0x00])
        XCTAssertEqual(EventKind(rawValue: 33), .policyCheckedRepeatedly)
        XCTAssertEqual(EventKind.policyCheckedRepeatedly.name, "policy-checked-repeatedly")
    }

    func test_S48_theDaemonsRepetitionOfACheckPayloadIsTheCodecsKind33() throws {
        // LogRecorder turns a kept check payload into kind 33 in place
        // (PolicyCheckedPayload.writeRepetition): the same bytes as EventCodec.
        for (result, reason) in [(nil, nil), (LAErrorCode.biometryNotEnrolled, nil), (.notInteractive, "passcode-required")] as [(LAErrorCode?, String?)] {
            let check = PolicyCheck(uid: 65534, ctx: ctx(9), policy: .biometricsOrCompanion, biometry: .opticID,
                                    result: result, reason: reason, domainState: "")
            let size = PolicyCheckedPayload.size(check)
            var buffer = [UInt8](repeating: 0xEE, count: size + PolicyCheckedPayload.repetitionRoom)
            let total = buffer.withUnsafeMutableBytes { raw in
                PolicyCheckedPayload.write(check, into: raw)
                return PolicyCheckedPayload.writeRepetition(count: 70_000, span: 3, after: size, in: raw)
            }
            let checks = RepeatedChecks(uid: 65534, ctx: ctx(9), policy: .biometricsOrCompanion, biometry: .opticID,
                                        result: result, reason: reason, count: 70_000, span: 3)
            XCTAssertEqual(Array(buffer[..<total]), EventCodec.encode(.policyCheckedRepeatedly(checks)))
        }
    }

    func test_S48_aCountBelowTwoOrASpanBeyondInt64IsCorrupt() {
        let head: [UInt8] = [0x01, 0xE8, 0x07] + ctxBytes + [0x02, 0x02, 0x00, 0x00]
        XCTAssertThrowsError(try EventCodec.decode(kind: 33, payload: head + [0x00, 0x00]), "count 0")
        XCTAssertThrowsError(try EventCodec.decode(kind: 33, payload: head + [0x01, 0x00]), "count 1: a plain policy-checked")
        XCTAssertThrowsError(try EventCodec.decode(kind: 33, payload: head + [0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x00]), "count beyond 32 bits")
        let huge: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]
        XCTAssertThrowsError(try EventCodec.decode(kind: 33, payload: head + [0x02] + huge), "span 2^64-1")
        XCTAssertThrowsError(try EventCodec.decode(kind: 33, payload: head + [0x02]), "no span")
        XCTAssertThrowsError(try EventCodec.decode(kind: 33, payload: head + [0x02, 0x00, 0x00]), "trailing byte")
        XCTAssertThrowsError(try EventCodec.decode(kind: 33, payload: [0x02] + head.dropFirst() + [0x02, 0x00]), "layout 2")
    }

    /// A started daemon, alice ready (passcode, enrolled) with one context.
    private func scenario() -> Scenario {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.newContext(ctx(2), uid: alice)
        return s
    }

    func test_S19_repeatedChecksFoldAsTheirCount() throws {
        for policy in [Policy.biometrics, .owner, .companion, .biometricsOrCompanion] {
            let s = scenario()
            let check = try s.state.canEvaluate(ctx(1), policy: policy, now: s.now).get()
            let first = s.now, last = s.now + 250
            let count: UInt32 = 5
            // Given five identical checks from the first time to the last,
            var oneByOne = s.state
            for index in 0..<Int(count) { oneByOne.apply(Event(time: index == 0 ? first : last, check.event)) }
            // when they are replayed from one record,
            let checks = RepeatedChecks(uid: alice, ctx: ctx(1), policy: policy, biometry: check.biometry,
                                        result: check.result, reason: check.reason, count: count, span: last - first)
            var replayed = s.state
            replayed.apply(Event(time: last, .policyCheckedRepeatedly(checks)))
            // and as the daemon folds them live (the first, then repeats),
            var live = s.state
            live.apply(check, time: first)
            for _ in 1..<count { live.applyRepeated(check, time: last) }
            // then the states are the same but for the record count.
            XCTAssertEqual(replayed, live, "\(policy)")
            XCTAssertEqual(replayed.eventCount, s.state.eventCount + 1, "one record")
            XCTAssertEqual(oneByOne.eventCount, s.state.eventCount + UInt64(count))
            oneByOne.eventCount = replayed.eventCount
            XCTAssertEqual(replayed, oneByOne, "\(policy): the fold of \(count) policy-checked events")
            XCTAssertEqual(replayed.clockHighWater, last)
            // The record's own expansion is those events.
            XCTAssertEqual(checks.events(at: last).map(\.time), [first, last, last, last, last])
            XCTAssertTrue(checks.events(at: last).allSatisfy { $0.body == check.event })
        }
    }

    func test_S17_repeatedChecksTellTheContextItsSensorLikeOneCheck() {
        var state = scenario().state
        let checks = RepeatedChecks(uid: alice, ctx: ctx(2), policy: .biometrics, biometry: .faceID, result: nil, reason: nil,
                                    count: 3, span: 0)
        XCTAssertNotEqual(state.contexts[ctx(2)]?.biometry, .faceID)
        state.apply(Event(time: t0, .policyCheckedRepeatedly(checks)))
        XCTAssertEqual(state.contexts[ctx(2)]?.biometry, .faceID, "S-17: the context knows the sensor type")
        XCTAssertEqual(state.contexts[ctx(1)]?.biometry, scenario().state.contexts[ctx(1)]?.biometry, "another context unchanged")
    }

    func test_S48_repeatedChecksStateRoundTripsThroughTheSnapshotCodec() throws {
        var state = scenario().state
        state.apply(Event(time: t0 + 9, .policyCheckedRepeatedly(RepeatedChecks(
            uid: alice, ctx: ctx(1), policy: .biometrics, biometry: .touchID, result: nil, reason: nil, count: 1_000, span: 9))))
        XCTAssertEqual(try StateCodec.decode(StateCodec.encode(state)), state)
    }
}
