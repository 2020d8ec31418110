// S-42 (on-behalf contexts) and S-44 (login passwords reach only the PAM
// conversation) as the core sees them: who may ask is the daemon's check;
// the core records the origin, applies every per-user rule to the subject,
// and ends an ordinary client's evaluation with notInteractive where a
// login-password prompt would be shown.

import XCTest
@testable import LocalAuthCore

final class OnBehalfRuleTests: XCTestCase {
    let sudo = ContextOrigin(caller: 0, service: "sudo", tty: "/dev/pts/3", rhost: nil, passcodePrompts: true)
    let app = ContextOrigin(passcodePrompts: false)

    func test_S42_anOnBehalfContextRecordsItsOriginAndBelongsToTheSubject() {
        let s = Scenario()
        s.readyUser(alice)
        s.when(.createContext(ctx: ctx(1), uid: alice, pid: 501, origin: sudo))
        s.then(.contextCreated(uid: alice, ctx: ctx(1), pid: 501, origin: sudo))
        XCTAssertEqual(s.state.contexts[ctx(1)]?.uid, alice)
        XCTAssertEqual(s.user(alice).openContexts, 1)
        // Every per-user rule applies to the subject: its failures count for alice.
        s.evaluate(ctx(1), .biometrics)
        s.feed(alice, .noMatch)
        XCTAssertEqual(s.user(alice).biometricFailures, 1)
        XCTAssertEqual(s.user(admin).biometricFailures, 0)
    }

    func test_S42_S30_anOnBehalfPromptPreemptsTheSubjectsOwnPrompt() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.given(.createContext(ctx: ctx(2), uid: alice, pid: 501, origin: sudo))
        s.evaluate(ctx(1), .biometrics)
        s.evaluate(ctx(2), .owner)
        XCTAssertEqual(s.failure(ctx(1), 1), preempted)
        XCTAssertEqual(s.prompts, [firstBiometricPrompt])
    }

    func test_S44_anOrdinaryContextReachingThePasscodePhaseEndsWithNotInteractive() {
        let s = Scenario()
        s.readyUser(alice)
        s.given(.createContext(ctx: ctx(1), uid: alice, pid: 77, origin: app))
        XCTAssertEqual(s.state.contexts[ctx(1)]?.passcodePrompts, false)
        // can-evaluate is unchanged (S-44).
        s.when(.canEvaluate(ctx: ctx(1), policy: .owner))
        XCTAssertTrue(s.emitted.contains { if case .policyChecked(_, _, .owner, _, nil, _) = $0 { return true } else { return false } },
                      "\(s.emitted)")
        // The biometric phase runs as usual...
        s.evaluate(ctx(1), .owner)
        XCTAssertEqual(s.prompts, [firstBiometricPrompt])
        s.feed(alice, .noMatch)
        // ...and the passcode phase ends the evaluation at that point.
        s.when(.fallback(ctx: ctx(1)))
        XCTAssertEqual(s.failure(ctx(1), 1)?.code, .notInteractive)
        XCTAssertEqual(s.prompts, [])
        XCTAssertNil(s.evaluation(ctx(1)))
        XCTAssertEqual(s.user(alice).passcodeFailures, 0)
    }

    func test_S44_passcodeOnlyPathOfAnOrdinaryContextIsNotInteractiveButOnBehalfPrompts() {
        let s = Scenario()
        s.setPasscode(alice)
        s.given(.createContext(ctx: ctx(1), uid: alice, pid: 77, origin: app))
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 1, .owner), failed(alice, ctx(1), 1, Failure(.notInteractive,
            message: "The login password can only be entered through the system's login prompt (PAM).")))

        s.given(.createContext(ctx: ctx(2), uid: alice, pid: 501, origin: sudo))
        s.evaluate(ctx(2), .owner)
        s.then(started(alice, ctx(2), 1, .owner), prompted(alice, ctx(2), 1, passcodePrompt(left: 6)))
    }

    func test_S44_aDelayStillAnswersRetryAfterBeforeNotInteractive() {
        let s = Scenario(rules: Rules.default)
        s.setPasscode(alice)
        s.given(.createContext(ctx: ctx(9), uid: alice, pid: 501, origin: sudo))
        for _ in 0..<6 {
            s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false))
        }
        s.given(.createContext(ctx: ctx(1), uid: alice, pid: 77, origin: app))
        s.evaluate(ctx(1), .owner)
        XCTAssertEqual(s.failure(ctx(1), 1)?.retryAfter, 60)
    }

    func test_S38_theOriginSurvivesTheCodecAndASnapshot() throws {
        for origin in [sudo, app, ContextOrigin.own,
                       ContextOrigin(caller: 0, service: "login", tty: "tty1", rhost: "10.0.0.7", passcodePrompts: true)] {
            let body = EventBody.contextCreated(uid: alice, ctx: ctx(1), pid: 1, origin: origin)
            let bytes = EventCodec.encode(body)
            XCTAssertEqual(bytes.first, 4, "context-created is written in layout 4 (S-54)")
            XCTAssertEqual(try EventCodec.decode(kind: EventKind.contextCreated.rawValue, payload: bytes), body)
        }
        var state = AuthState()
        state.apply(Event(time: 1, .contextCreated(uid: alice, ctx: ctx(1), pid: 1, origin: app)))
        state.apply(Event(time: 2, .contextCreated(uid: alice, ctx: ctx(2), pid: 1, origin: sudo)))
        let decoded = try StateCodec.decode(StateCodec.encode(state))
        XCTAssertEqual(decoded, state)
        XCTAssertEqual(decoded.contexts[ctx(1)]?.passcodePrompts, false)
        XCTAssertEqual(decoded.contexts[ctx(2)]?.passcodePrompts, true)
    }

    func test_S38_aVersion1ContextCreatedStillDecodesAsTheSubjectsOwn() throws {
        var w = ByteWriter(capacity: 32)
        w.u8(1); w.varint(UInt64(alice)); w.context(ctx(1)); w.int(77)
        XCTAssertEqual(try EventCodec.decode(kind: EventKind.contextCreated.rawValue, payload: w.bytes),
                       .contextCreated(uid: alice, ctx: ctx(1), pid: 77, origin: .own))
        // A version 1 payload with the v2 fields appended is refused (trailing bytes).
        var longer = w
        longer.bool(true)
        XCTAssertThrowsError(try EventCodec.decode(kind: EventKind.contextCreated.rawValue, payload: longer.bytes))
        // And a version 2 one that is cut short.
        let v2 = EventCodec.encode(.contextCreated(uid: alice, ctx: ctx(1), pid: 77, origin: sudo))
        XCTAssertThrowsError(try EventCodec.decode(kind: EventKind.contextCreated.rawValue, payload: Array(v2.dropLast())))
    }

    func test_S38_aVersion1SnapshotLoadsWithPasscodePromptsAllowed() throws {
        var state = AuthState()
        state.apply(Event(time: 1, .contextCreated(uid: alice, ctx: ctx(1), pid: 1)))
        var bytes = StateCodec.encode(state)
        // Version 4 is version 5 without the user's tallies and last
        // sign-in and the context's labels (S-64); version 3 is version 4
        // without the context's prompt and route; version 1 is version 2
        // (which 3 is, with no evaluation) without the context's trailing flag.
        // Version 5 is version 6 without the context's requester and the
        // requester pairs (S-54).
        XCTAssertEqual(bytes[0], 6)
        XCTAssertEqual(bytes.removeLast(), 0, "no requester pairs")
        XCTAssertEqual(bytes.removeLast(), 0, "no prompting contexts")
        XCTAssertEqual(bytes.removeLast(), 0, "no requester")
        bytes[0] = 5
        XCTAssertEqual(try StateCodec.decode(bytes + [0]), state)
        XCTAssertEqual(bytes.removeLast(), 0, "no labels")
        // The user's fields end with openContexts (1, zigzag 2), then two
        // empty tallies (3 counts, 4 absent optionals each) and no sign-in.
        let tallies = [UInt8](repeating: 0, count: 15)
        let at = try XCTUnwrap((0..<(bytes.count - 17)).first { bytes[$0] == 2 && Array(bytes[($0 + 1)...($0 + 15)]) == tallies })
        bytes.removeSubrange((at + 1)...(at + 15))
        bytes[0] = 4
        XCTAssertEqual(try StateCodec.decode(bytes + [0]), state)
        XCTAssertEqual(bytes.removeLast(), 0, "no agent route")
        XCTAssertEqual(Array(bytes.suffix(7)), [6] + Array("client".utf8), "the prompt property")
        bytes.removeLast(7)
        bytes[0] = 3
        XCTAssertEqual(try StateCodec.decode(bytes + [0]), state)
        bytes[0] = 2
        XCTAssertEqual(try StateCodec.decode(bytes + [0]), state)
        XCTAssertEqual(bytes.removeLast(), 1, "the flag: passcode prompts allowed")
        bytes.append(0)
        bytes[0] = 1
        XCTAssertEqual(try StateCodec.decode(bytes), state)
    }
}
