// S-64: the failures since the last sign-in, derived from the log alone.

import XCTest
@testable import LocalAuthCore

final class FailureNoticeRuleTests: XCTestCase {
    private func ready(_ rules: Rules = .default) -> Scenario {
        let s = Scenario(rules: rules)
        s.readyUser(alice)
        return s
    }

    func test_S64_missesWrongAndRefusedPasswordsAreTallied_aSignInClosesTheTallyIntoTheNotice() {
        let s = ready(Rules.default.with { $0.delayAfterFailures = 2 })
        let sudo = ContextOrigin(caller: 0, service: "sudo", tty: "/dev/pts/2", rhost: nil)
        s.given(.createContext(ctx: ctx(1), uid: alice, pid: 7, origin: sudo))
        s.given(.evaluate(ctx: ctx(1), policy: .owner, reason: vaultReason))
        s.feed(alice, .noMatch)
        s.feed(alice, .noMatch)
        s.given(.fallback(ctx: ctx(1)))
        s.enterPasscode(ctx(1), correct: false)
        XCTAssertEqual(s.user(alice).failuresSinceSignIn.biometric, 2)
        XCTAssertEqual(s.user(alice).failuresSinceSignIn.passcode, 1)
        s.advance(5)
        s.enterPasscode(ctx(1), correct: false)  // the second starts a delay
        s.newContext(ctx(2), uid: alice)
        s.given(.passcodeChecked(uid: alice, ctx: nil, eval: nil, correct: false, repeated: false))  // refused in the delay
        let tally = s.user(alice).failuresSinceSignIn
        XCTAssertEqual([tally.biometric, tally.passcode, tally.refused], [2, 2, 1])
        XCTAssertEqual(tally.lastAt, s.now)
        XCTAssertNil(tally.lastService, "the refused attempt had no context")
        // The sign-in.
        s.advance(120)
        s.given(.evaluate(ctx: ctx(2), policy: .biometrics, reason: vaultReason))
        s.feed(alice, .match)
        XCTAssertEqual(s.user(alice).notice, tally, "the notice is the closed tally")
        XCTAssertEqual(s.user(alice).failuresSinceSignIn, FailureTally(), "a new tally starts")
        XCTAssertEqual(s.user(alice).lastSignIn, s.now)
        XCTAssertEqual(s.refolded, s.state, "derived from the log alone (S-38)")
    }

    func test_S64_theLastFailureNamesItsContextsServiceTtyAndHost() {
        let s = ready()
        let ssh = ContextOrigin(caller: 0, service: "sshd", tty: "ssh", rhost: "laptop.example.org")
        s.given(.createContext(ctx: ctx(1), uid: alice, pid: 7, origin: ssh))
        s.given(.evaluate(ctx: ctx(1), policy: .biometrics, reason: vaultReason))
        s.feed(alice, .noMatch)
        let tally = s.user(alice).failuresSinceSignIn
        XCTAssertEqual(tally.lastService, "sshd")
        XCTAssertEqual(tally.lastTTY, "ssh")
        XCTAssertEqual(tally.lastRHost, "laptop.example.org")
        // And through a snapshot (StateCodec version 5).
        XCTAssertEqual(try StateCodec.decode(StateCodec.encode(s.state)), s.state)
    }

    func test_S64_cachedAndReuseAreNoSignIn_aResetKeepsTheTally() {
        let s = ready()
        s.newContext(ctx(1), uid: alice)
        s.given(.evaluate(ctx: ctx(1), policy: .biometrics, reason: vaultReason))
        s.feed(alice, .match)
        s.newContext(ctx(2), uid: alice)
        s.given(.evaluate(ctx: ctx(2), policy: .biometrics, reason: vaultReason))
        s.feed(alice, .noMatch)
        s.given(.cancel(ctx: ctx(2)))
        s.given(.evaluate(ctx: ctx(1), policy: .owner, reason: vaultReason))  // cached
        XCTAssertEqual(s.user(alice).failuresSinceSignIn.biometric, 1, "a cached success closes nothing")
        s.given(.reset(uid: alice, by: admin))
        XCTAssertEqual(s.user(alice).failuresSinceSignIn.biometric, 1, "the user has not been told yet")
        XCTAssertEqual(s.refolded, s.state)
    }

    func test_S64_S7_aRepeatedWrongPasswordIsAnAttemptToo() {
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.given(.evaluate(ctx: ctx(1), policy: .owner, reason: vaultReason))
        s.enterPasscode(ctx(1), correct: false)
        s.enterPasscode(ctx(1), correct: false, repeated: true)
        XCTAssertEqual(s.user(alice).passcodeFailures, 1, "S-7 counts it once")
        XCTAssertEqual(s.user(alice).failuresSinceSignIn.passcode, 2, "but both were attempts")
    }
}
