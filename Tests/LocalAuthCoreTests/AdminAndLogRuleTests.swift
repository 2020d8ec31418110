// SEMANTICS §7 and §8: administration (S-35, S-36) and events (S-37 .. S-41),
// plus the constants of §2.

import XCTest
@testable import LocalAuthCore

final class AdminAndLogRuleTests: XCTestCase {
    // S-35: who is an administrator is the daemon's check; the core records
    // every administrative fact with the acting uid (`by`).
    func test_S35_adminActionsAreRecordedWithTheAdminsUid() {
        let s = Scenario()
        let operatorUid: UserID = 500
        s.when(.enroll(uid: alice, template: "thumb", by: operatorUid, domainState: "d1"))
        s.then(.enrollmentChanged(uid: alice, templates: ["thumb"], by: operatorUid, domainState: "d1"))
        s.when(.unenroll(uid: alice, template: nil, by: admin, domainState: "d2"))
        s.then(.enrollmentChanged(uid: alice, templates: [], by: admin, domainState: "d2"))
        s.when(.changePasscode(uid: alice, set: true, by: operatorUid))
        s.then(.passcodeChanged(uid: alice, set: true, by: operatorUid))
        s.when(.changePasscode(uid: alice, set: false, by: admin))
        s.then(.passcodeChanged(uid: alice, set: false, by: admin))
        XCTAssertFalse(s.user(alice).passcodeSet)
        s.when(.reportUnlock(uid: alice, by: operatorUid))
        s.then(.deviceUnlocked(uid: alice, by: operatorUid))
        XCTAssertEqual(s.user(alice).lastDeviceUnlock, s.now)
        s.when(.reset(uid: bob, by: operatorUid))
        s.then(.userReset(uid: bob, by: operatorUid))
        s.when(.repairLog(firstLostSeq: 12, by: operatorUid))
        s.then(.logRepaired(firstLostSeq: 12, by: operatorUid))
        XCTAssertEqual(s.state.status(alice, now: s.now).templates, 0)
    }

    // S-36: a user setting their own passcode gives the old one, checked as
    // an attempt (counted); the change is recorded with the user's own uid.
    func test_S36_ownPasscodeChangeChecksTheOldOneAsACountedAttempt() {
        let s = Scenario()
        s.setPasscode(alice)
        s.when(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false))
        s.then(.passcodeRejected(uid: alice, ctx: nil, eval: nil, counted: true))
        XCTAssertEqual(s.user(alice).passcodeFailures, 1)
        s.when(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: true))
        s.then(.passcodeRejected(uid: alice, ctx: nil, eval: nil, counted: false))
        XCTAssertEqual(s.user(alice).passcodeFailures, 1)
        s.when(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: true, repeated: false))
        s.then(.passcodeAccepted(uid: alice, ctx: nil, eval: nil))
        XCTAssertEqual(s.user(alice).passcodeFailures, 0)
        s.when(.changePasscode(uid: alice, set: true, by: alice))
        s.then(.passcodeChanged(uid: alice, set: true, by: alice))
        // Six wrong old passcodes start a delay like any attempt.
        for _ in 0..<6 {
            s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false))
        }
        XCTAssertEqual(s.state.status(alice, now: s.now).retryAfter, 60)
    }

    func test_S37_eventKindsHaveStableUniqueNamesAndCodes() {
        let kinds = EventKind.allCases
        XCTAssertEqual(Set(kinds.map(\.name)).count, kinds.count)
        // Dense and append-only; 26..32 were handed out together (issue #15) and
        // land one by one, so a gap is allowed there only.
        let codes = kinds.map(\.rawValue)
        XCTAssertEqual(codes, codes.sorted(), "append-only")
        XCTAssertEqual(Set(codes).count, codes.count)
        XCTAssertEqual(codes.filter { $0 <= 25 }, Array(1...25), "codes are dense")
        // 34..40 and 41..62 were handed out per task (HELPERS.md) and land
        // one by one: issue 29's are 41..45,
        // issue 33's 57..60 (57 and 58 used).
        XCTAssertTrue(codes.allSatisfy { $0 <= 33 || (34...62).contains($0) }, "no code beyond the assigned ones")
        XCTAssertTrue(codes.filter { $0 > 40 && $0 <= 45 }.allSatisfy { [41, 42, 43].contains($0) })
        // Issue 31's are 46..49.
        XCTAssertTrue(codes.filter { $0 > 45 && $0 <= 49 }.allSatisfy { (46...49).contains($0) })
        for kind in kinds { XCTAssertEqual(EventKind(name: kind.name), kind) }
        let audit = ["daemon-started", "daemon-stopped", "context-created", "context-property-set",
                     "context-invalidated", "policy-checked", "evaluation-started", "biometric-matched",
                     "biometric-failed", "biometric-retry", "fallback-chosen", "passcode-accepted",
                     "passcode-rejected", "evaluation-succeeded", "evaluation-failed", "enrollment-changed",
                     "passcode-changed", "device-unlocked", "user-reset", "log-repaired",
                     "right-saved", "right-removed", "right-authorized", "right-secret-read"]
        for name in audit { XCTAssertNotNil(EventKind(name: name), "AUDIT.md type \(name)") }
    }

    func test_S37_stateChangingCommandsAreRecordedAndPureQueriesChangeNothing() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        let before = s.state
        s.when(.applyRules(.default))
        s.then()  // the same rules: nothing to record
        XCTAssertEqual(s.state, before)
        let faceID = Rules.default.with { $0.biometryType = .faceID }
        s.when(.applyRules(faceID))
        s.then(.rulesApplied(faceID))
        XCTAssertEqual(s.state.rules, faceID)
        // Rejections never change state.
        let snapshot = s.state
        s.when(.cancel(ctx: ctx(1)))
        s.thenRejected(.badState)
        XCTAssertEqual(s.state, snapshot)
    }

    func test_S38_liveStateIsTheFoldOfTheLog() {
        let s = Scenario()
        s.readyUser(alice)
        s.setPasscode(bob)
        s.newContext(ctx(1), uid: alice)
        s.newContext(ctx(2), uid: bob)
        s.failBiometry(alice, on: ctx(1), times: 6)
        s.evaluate(ctx(1), .owner)
        s.enterPasscode(ctx(1), correct: false)
        s.failPasscode(on: ctx(2), times: 7)
        s.given(.reportUnlock(uid: alice, by: admin), .invalidate(ctx: ctx(2), reason: .app))
        XCTAssertEqual(s.refolded, s.state)
        XCTAssertEqual(s.refolded.eventCount, UInt64(s.log.count))
        // Folding from a midpoint (a snapshot) gives the same state.
        let mid = s.log.count / 2
        let snapshot = s.log.prefix(mid).reduce(AuthState(), AuthState.evolve)
        XCTAssertEqual(s.log.suffix(from: mid).reduce(snapshot, AuthState.evolve), s.state)
        XCTAssertEqual(s.refolded.status(bob, now: s.now), s.state.status(bob, now: s.now))
    }

    func test_S39_noEventCarriesAPasscode() {
        // The core never receives a secret: no command has a field for one.
        // What a wrong attempt leaves is a bare verdict.
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .owner)
        s.enterPasscode(ctx(1), correct: false)
        XCTAssertEqual(s.emitted.first, .passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true))
    }

    /// S-40 as the server relies on it: the reply gate holds output behind
    /// every event whose `isDurableBeforeReply` is true, so every event that
    /// makes a user's standing worse (a failure counted, a lockout begun) must
    /// be one of them, and it must come before the events that reveal it.
    /// A new failure kind the gate does not know fails here.
    func test_S40_everyEventThatCountsAFailureHoldsTheRepliesUntilItIsDurable() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .biometrics)
        s.feed(alice, .noMatch)
        XCTAssertEqual(s.emitted.first?.kind, .biometricFailed, "the failure comes before the prompt that reveals it")
        s.failBiometry(alice, on: ctx(1), times: 6)
        var context: UInt64 = 2
        s.newContext(ctx(context), uid: alice)
        s.evaluate(ctx(context), .owner)
        for _ in 0..<12 {
            s.advance(86_400)
            s.enterPasscode(ctx(context), correct: false)
            if s.emitted.contains(where: { $0.kind == .passcodeRejected }) {
                XCTAssertEqual(s.emitted.first?.kind, .passcodeRejected, "the failure comes before what reveals it")
            }
            if s.evaluation(ctx(context)) == nil {
                context += 1
                s.newContext(ctx(context), uid: alice)
                s.evaluate(ctx(context), .owner)
            }
        }

        var state = AuthState()
        var worsened: [EventKind] = []
        for event in s.log {
            let before = state.user(alice)
            state.apply(event)
            let after = state.user(alice)
            let worse = after.biometricFailures > before.biometricFailures
                || after.passcodeFailures > before.passcodeFailures
                || (after.biometryLockedOut && !before.biometryLockedOut)
                || (after.adminLocked && !before.adminLocked)
                || (after.passcodeRetryAt ?? .min) > (before.passcodeRetryAt ?? .min)
            guard worse else { continue }
            worsened.append(event.body.kind)
            XCTAssertTrue(event.body.isDurableBeforeReply, "\(event.body) counts a failure but does not hold replies (S-40)")
        }
        XCTAssertTrue(worsened.contains(.biometricFailed), "\(worsened)")
        XCTAssertTrue(worsened.contains(.passcodeRejected), "\(worsened)")
        XCTAssertTrue(s.user(alice).biometryLockedOut, "the scenario reached the biometric lockout")
    }

    func test_S41_logRepairLeavesEveryUserLockedOutOfBiometry() {
        let s = Scenario()
        s.readyUser(alice)
        s.readyUser(bob)
        s.newContext(ctx(1), uid: alice)
        s.when(.repairLog(firstLostSeq: 3, by: admin))
        s.then(.logRepaired(firstLostSeq: 3, by: admin))
        XCTAssertTrue(s.user(alice).biometryLockedOut)
        XCTAssertTrue(s.user(bob).biometryLockedOut)
        s.canEvaluate(ctx(1), .biometrics)
        s.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .biometrics, biometry: .touchID,
                              result: .biometryLockout, reason: nil))
        // The lost events may have held passcode failures: the longest delay runs first (issue #15 item 9).
        s.advance(3600)
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 1, .owner), prompted(alice, ctx(1), 1, passcodePrompt(left: 1)))
        s.enterPasscode(ctx(1), correct: true)
        XCTAssertFalse(s.user(alice).biometryLockedOut, "the passcode proves the user again")
        XCTAssertTrue(s.user(bob).biometryLockedOut)
    }

    // Issue #15 item 9: a repair never shortens a passcode delay nor forgets
    // counted failures: what the cut events did is unknown, so every user with
    // a passcode is left at the longest step of the backoff, from the repair.
    func test_S41_logRepairKeepsOrRaisesEveryPasscodeDelay() {
        let s = Scenario()
        s.setPasscode(alice)
        s.setPasscode(bob)
        for _ in 0..<6 { s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false)) }
        s.advance(61)  // past the first delay (S-46: nothing is checked during one)
        s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false))
        XCTAssertEqual(s.state.status(alice, now: s.now).retryAfter, 300, "given: alice is in the 300 s step")
        XCTAssertEqual(s.user(bob).passcodeFailures, 0)
        s.advance(10)
        s.when(.repairLog(firstLostSeq: 20, by: admin))
        s.then(.logRepaired(firstLostSeq: 20, by: admin))
        XCTAssertEqual(s.state.status(alice, now: s.now).retryAfter, 3600, "raised to the longest step")
        XCTAssertEqual(s.state.status(bob, now: s.now).retryAfter, 3600, "a user with no failures left is raised too")
        XCTAssertGreaterThanOrEqual(s.user(alice).passcodeFailures, 7, "failures kept")
        XCTAssertEqual(s.user(bob).passcodeFailures, 9, "the next failure stays at the longest step")
        XCTAssertFalse(s.user(alice).adminLocked)
        // A wrong passcode after the delay starts the longest delay again.
        s.advance(3600)
        s.given(.passcodeChecked(uid: bob, ctx: nil, eval: nil, correct: false, repeated: false))
        XCTAssertEqual(s.state.status(bob, now: s.now).retryAfter, 3600)
    }

    func test_S41_logRepairNeverReachesTheAdminLockItself() {
        let s = Scenario()
        s.given(.applyRules(Rules.default.with { $0.maxPasscodeFailures = 8 }))
        s.setPasscode(alice)
        s.when(.repairLog(firstLostSeq: 5, by: admin))
        XCTAssertEqual(s.user(alice).passcodeFailures, 7, "one below MaxPasscodeFailures")
        XCTAssertFalse(s.user(alice).adminLocked)
        XCTAssertEqual(s.state.status(alice, now: s.now).retryAfter, 3600)
    }

    func test_S41_aUserWithoutAPasscodeGetsNoDelayOnlyTheBiometricLockout() {
        let s = Scenario()
        s.enroll(alice)
        s.when(.repairLog(firstLostSeq: 5, by: admin))
        XCTAssertTrue(s.user(alice).biometryLockedOut)
        XCTAssertNil(s.user(alice).passcodeRetryAt)
    }

    // S-49: an accepted rollback is a loss of events like a repair.
    func test_S49_acceptedRollbackIsRecordedAndFoldsLikeARepair() {
        let s = Scenario()
        s.readyUser(alice)
        s.when(.acceptLogRollback(journalSeq: 90, logSeq: 40, by: admin))
        s.then(.logRollbackAccepted(journalSeq: 90, logSeq: 40, by: admin))
        XCTAssertTrue(s.user(alice).biometryLockedOut)
        XCTAssertEqual(s.state.status(alice, now: s.now).retryAfter, 3600)
        XCTAssertTrue(EventBody.logRollbackAccepted(journalSeq: 1, logSeq: 0, by: 0).isDurableBeforeReply)
    }

    // S-49: a recorded snapshot digest changes nothing but the event count.
    func test_S49_snapshotRecordedChangesNoUserOrContext() {
        let s = Scenario()
        s.readyUser(alice)
        let before = s.state
        s.when(.recordSnapshot(seq: 7, sha256: String(repeating: "0f", count: 32)))
        s.then(.snapshotRecorded(snapshotSeq: 7, sha256: String(repeating: "0f", count: 32)))
        XCTAssertEqual(s.state.users, before.users)
        XCTAssertEqual(s.state.eventCount, before.eventCount + 1)
        XCTAssertFalse(EventBody.snapshotRecorded(snapshotSeq: 7, sha256: "").isDurableBeforeReply)
    }

    func test_Constants_rawValuesAndWireNames() {
        XCTAssertEqual(Policy.allCases.map(\.rawValue), [1, 2, 3, 4, 5])
        XCTAssertEqual(BiometryType.allCases.map(\.rawValue), [0, 1, 2, 4])
        let codes: [LAErrorCode: Int] = [
            .authenticationFailed: -1, .userCancel: -2, .userFallback: -3, .systemCancel: -4,
            .passcodeNotSet: -5, .biometryNotAvailable: -6, .biometryNotEnrolled: -7, .biometryLockout: -8,
            .appCancel: -9, .invalidContext: -10, .companionNotAvailable: -11, .biometryNotPaired: -12,
            .biometryDisconnected: -13, .invalidDimensions: -14, .notInteractive: -1004,
        ]
        XCTAssertEqual(codes.count, LAErrorCode.allCases.count)
        for (code, raw) in codes { XCTAssertEqual(code.rawValue, raw) }
        XCTAssertEqual(LAErrorCode.touchIDLockout.wireName, "biometryLockout")
        XCTAssertEqual(LAErrorCode.touchIDNotAvailable, .biometryNotAvailable)
        XCTAssertEqual(LAErrorCode.touchIDNotEnrolled, .biometryNotEnrolled)
        XCTAssertEqual(LAErrorCode.watchNotAvailable, .companionNotAvailable)
        for code in LAErrorCode.allCases { XCTAssertEqual(LAErrorCode(wireName: code.wireName), code) }
        for policy in Policy.allCases {
            XCTAssertEqual(Policy(wireName: policy.wireName), policy)
            XCTAssertEqual(Policy(wireName: String(policy.rawValue)), policy)
        }
        XCTAssertEqual(Policy(wireName: "deviceOwnerAuthenticationWithBiometricsOrWatch"), .biometricsOrCompanion)
        for type in BiometryType.allCases { XCTAssertEqual(BiometryType(wireName: type.wireName), type) }
        XCTAssertEqual(laErrorDomain, "com.apple.LocalAuthentication")
    }
}

// LARight's right events (AUDIT.md v1.1): recorded as given, and only on the
// user's own open context; they change no user or context state.
final class RightRuleTests: XCTestCase {
    func test_RightEvents_needTheUsersOpenContext_andChangeNoState() throws {
        let ctx = ContextID(hex: "0123456789abcdef0123456789abcdef")!
        var state = AuthState()
        state.apply(Event(time: 1, .contextCreated(uid: 1000, ctx: ctx, pid: 1)))
        let authorized = decide(.recordRight(.authorized(uid: 1000, ctx: ctx, identifier: "a", method: .biometric)), state, now: 2)
        XCTAssertEqual(try authorized.get().map(\.body), [.rightAuthorized(uid: 1000, ctx: ctx, identifier: "a", method: .biometric)])
        let before = state
        for event in try authorized.get() { state.apply(event) }
        XCTAssertEqual(state.users, before.users)
        XCTAssertEqual(state.contexts, before.contexts)

        guard case .failure = decide(.recordRight(.secretRead(uid: 1001, ctx: ctx, identifier: "a")), state, now: 3) else {
            return XCTFail("another uid's context")
        }
        state.apply(Event(time: 4, .contextInvalidated(uid: 1000, ctx: ctx, reason: .app)))
        guard case .failure = decide(.recordRight(.secretRead(uid: 1000, ctx: ctx, identifier: "a")), state, now: 5) else {
            return XCTFail("an invalidated context")
        }
        XCTAssertEqual(try decide(.recordRight(.saved(uid: 7, identifier: "b", requirement: .biometryCurrentSet)), state, now: 6)
            .get().map(\.body), [.rightSaved(uid: 7, identifier: "b", requirement: .biometryCurrentSet)])
    }

    func test_RightIdentifiers_followTheProtocolGrammar() {
        XCTAssertTrue(RightIdentifier.isValid("com.example.Login_2-x"))
        XCTAssertTrue(RightIdentifier.isValid(String(repeating: "z", count: 128)))
        for bad in ["", String(repeating: "z", count: 129), "a b", "a/b", "é", "a=b", "a\u{0}"] {
            XCTAssertFalse(RightIdentifier.isValid(bad), bad)
        }
        XCTAssertEqual(RightRequirement.allCases.map(\.wireName),
                       ["default", "biometry", "biometry-passcode-fallback", "biometry-current-set"])
        XCTAssertEqual(RightRequirement.biometryCurrentSet.policy, .biometrics)
        XCTAssertEqual(RightRequirement.default.policy, .owner)
    }
}
