// S-54: attempts made by one user against another (X runs `su ALICE`)
// count for the pair (alice, X): they delay X's further attempts against
// alice, never alice's own, and never take alice's prompt from her.

import XCTest
@testable import LocalAuthCore

final class RequesterRuleTests: XCTestCase {
    let mallory: UserID = 1666
    /// `su alice` run by mallory: root's module, mallory's attempt.
    var suByMallory: ContextOrigin { ContextOrigin(caller: 0, service: "su", tty: "/dev/pts/4", requester: mallory) }
    /// alice's own sudo (its requester is alice).
    var sudoByAlice: ContextOrigin { ContextOrigin(caller: 0, service: "sudo", tty: "/dev/pts/2", requester: alice) }

    /// Given alice with a passcode, mallory's `su alice` fails `count` times.
    private func malloryGuesses(_ s: Scenario, _ count: Int, from first: UInt64 = 10, waiting: Int64 = 0) {
        for n in 0..<UInt64(count) {
            s.advance(waiting)
            s.given(.createContext(ctx: ctx(first + n), uid: alice, pid: 900, origin: suByMallory))
            s.evaluate(ctx(first + n), .owner)
            s.enterPasscode(ctx(first + n), correct: false)
            s.given(.invalidate(ctx: ctx(first + n), reason: .disconnect))
        }
    }

    func test_S54_anotherUsersWrongPasswordsDelayThemAndNotTheSubject() {
        let s = Scenario(rules: Rules.default)
        s.setPasscode(alice)
        // When mallory's `su alice` fails six times (a delay after six),
        malloryGuesses(s, 6)
        // then alice's own counters are untouched,
        XCTAssertEqual(s.user(alice).passcodeFailures, 0)
        XCTAssertNil(s.user(alice).passcodeRetryAt)
        XCTAssertEqual(s.state.requesterAttempts[RequesterPair(subject: alice, requester: mallory)]?.passcodeFailures, 6)
        // her own sudo is prompted with all her attempts and her right password succeeds,
        s.given(.createContext(ctx: ctx(1), uid: alice, pid: 501, origin: sudoByAlice))
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 1, .owner), prompted(alice, ctx(1), 1, passcodePrompt(left: 6)))
        s.enterPasscode(ctx(1), correct: true)
        XCTAssertEqual(s.success(ctx(1), 1), .passcode)
        // and mallory's next attempt is refused for his delay, unchecked.
        s.given(.createContext(ctx: ctx(2), uid: alice, pid: 900, origin: suByMallory))
        s.evaluate(ctx(2), .owner)
        XCTAssertEqual(s.failure(ctx(2), 1), retryAfter(60))
    }

    func test_S54_theSubjectsOwnDelayHoldsForRequestersToo() {
        let s = Scenario(rules: Rules.default)
        s.setPasscode(alice)
        // Given alice in a delay of her own (six wrong answers of hers),
        for _ in 0..<6 { s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false)) }
        // when mallory tries, he is refused too: a pair never adds guesses.
        s.given(.createContext(ctx: ctx(2), uid: alice, pid: 900, origin: suByMallory))
        s.evaluate(ctx(2), .owner)
        XCTAssertEqual(s.failure(ctx(2), 1), retryAfter(60))
    }

    func test_S54_aLateVerdictCountsForTheRequesterTheAttemptCarried() {
        let s = Scenario(rules: Rules.default)
        s.setPasscode(alice)
        s.given(.createContext(ctx: ctx(3), uid: alice, pid: 900, origin: suByMallory))
        s.evaluate(ctx(3), .owner)
        s.given(.submitPasscode(ctx: ctx(3)))
        // Given the context gone before its check came back (su killed),
        s.given(.invalidate(ctx: ctx(3), reason: .disconnect))
        // when the verdict comes with the requester the job took at submission,
        s.when(.passcodeChecked(uid: alice, ctx: ctx(3), eval: 1, correct: false, repeated: false, requester: mallory))
        // then the failure is recorded for mallory's pair, not for alice.
        s.then(.passcodeRejected(uid: alice, ctx: ctx(3), eval: 1, counted: true, requester: mallory))
        XCTAssertEqual(s.user(alice).passcodeFailures, 0)
        XCTAssertEqual(s.state.requesterAttempts[RequesterPair(subject: alice, requester: mallory)]?.passcodeFailures, 1)
    }

    func test_S54_theSubjectsOwnAttemptsStillCountForTheSubject() {
        let s = Scenario(rules: Rules.default)
        s.setPasscode(alice)
        s.given(.createContext(ctx: ctx(1), uid: alice, pid: 501, origin: sudoByAlice))
        XCTAssertNil(s.state.contexts[ctx(1)]?.requester)
        s.evaluate(ctx(1), .owner)
        s.enterPasscode(ctx(1), correct: false)
        XCTAssertEqual(s.user(alice).passcodeFailures, 1)
        XCTAssertTrue(s.state.requesterAttempts.isEmpty)
    }

    func test_S54_aResetOfTheSubjectLiftsEveryPairAndARightPasswordLiftsItsOwn() {
        let s = Scenario(rules: Rules.default.with { $0.maxPasscodeFailures = 8 })
        s.setPasscode(alice)
        malloryGuesses(s, 8, from: 10, waiting: 4000)
        // Given mallory locked for alice (MaxPasscodeFailures=8), alice herself is not,
        XCTAssertEqual(s.state.requesterAttempts[RequesterPair(subject: alice, requester: mallory)]?.locked, true)
        XCTAssertFalse(s.user(alice).adminLocked)
        s.advance(4000)
        s.given(.createContext(ctx: ctx(2), uid: alice, pid: 900, origin: suByMallory))
        s.evaluate(ctx(2), .owner)
        XCTAssertEqual(s.failure(ctx(2), 1)?.adminLocked, true)
        // when an administrator resets alice, mallory may try again.
        s.given(.reset(uid: alice, by: admin))
        XCTAssertTrue(s.state.requesterAttempts.isEmpty)
        s.evaluate(ctx(2), .owner)
        s.enterPasscode(ctx(2), correct: true)
        XCTAssertEqual(s.success(ctx(2), 2), .passcode)
    }

    func test_S54_anotherUsersEvaluationNeverPreemptsTheSubjectsPrompt() {
        let s = Scenario()
        s.readyUser(alice)
        // Given alice at her own prompt,
        s.given(.createContext(ctx: ctx(1), uid: alice, pid: 501, origin: sudoByAlice))
        s.evaluate(ctx(1), .owner)
        XCTAssertEqual(s.prompts, [firstBiometricPrompt])
        // when mallory's `su alice` reaches a prompt, it ends, hers goes on;
        s.given(.createContext(ctx: ctx(2), uid: alice, pid: 900, origin: suByMallory))
        s.evaluate(ctx(2), .owner)
        XCTAssertEqual(s.failure(ctx(2), 1)?.reason, "prompt-held")
        XCTAssertEqual(s.failure(ctx(2), 1)?.code, .systemCancel)
        XCTAssertNotNil(s.evaluation(ctx(1)))
        XCTAssertEqual(s.user(alice).promptHolder, ctx(1))
        // and alice's own new evaluation still takes the prompt from his.
        s.given(.cancel(ctx: ctx(1)))
        s.evaluate(ctx(2), .owner)
        XCTAssertEqual(s.user(alice).promptHolder, ctx(2))
        s.newContext(ctx(3), uid: alice)
        s.evaluate(ctx(3), .biometrics)
        XCTAssertEqual(s.failure(ctx(2), 2), preempted)
    }

    func test_S54_theRequesterIsRecordedAndThePairsSurviveSnapshotAndReplay() throws {
        let s = Scenario(rules: Rules.default)
        s.setPasscode(alice)
        s.given(.createContext(ctx: ctx(7), uid: alice, pid: 900, origin: suByMallory))
        XCTAssertEqual(s.log.last?.body, .contextCreated(uid: alice, ctx: ctx(7), pid: 900, origin: suByMallory))
        XCTAssertEqual(s.state.contexts[ctx(7)]?.requester, mallory)
        malloryGuesses(s, 7, from: 20)
        // The snapshot's codec keeps the pairs and the context's requester,
        let decoded = try StateCodec.decode(StateCodec.encode(s.state))
        XCTAssertEqual(decoded, s.state)
        XCTAssertEqual(decoded.requesterAttempts.count, 1)
        // and a replay of the log rebuilds them.
        let replayed = s.log.reduce(AuthState(rules: Rules.default), AuthState.evolve)
        XCTAssertEqual(replayed, s.state)
    }
}
