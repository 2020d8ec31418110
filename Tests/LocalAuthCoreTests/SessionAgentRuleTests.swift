// S-65..S-69 as the core sees them: which agent may register, and which
// app's evaluation has an agent, are the server's to judge (logind, its
// agent table); the core records registrations and refusals, records the
// route just before a routed evaluation's first prompt, lets that route
// carry passcode prompts under a login-password backend (S-68 amending
// S-44), and ends what an agent that went away was prompting for.

import XCTest
@testable import LocalAuthCore

final class SessionAgentRuleTests: XCTestCase {
    /// An ordinary client's context under Backend=shadow (S-44).
    let app = ContextOrigin(passcodePrompts: false)
    let sessionA = AgentRoute(session: "2", agentPID: 700, passcodePrompts: true)
    let sessionB = AgentRoute(session: "c5", agentPID: 800, passcodePrompts: true)

    func routed(_ c: ContextID, _ eval: EvaluationID, _ route: AgentRoute, uid: UserID = alice) -> EventBody {
        .promptsRouted(uid: uid, ctx: c, eval: eval, route: route)
    }

    let agentGone = Failure(.systemCancel, message: "The authentication agent went away.", reason: "agent-gone")

    func test_S65_registrationsAndRefusalsAreRecordedAndChangeNoState() {
        let s = Scenario()
        s.readyUser(alice)
        let before = s.state
        s.when(.registerAgent(uid: alice, session: "2", pid: 700))
        s.then(.agentRegistered(uid: alice, session: "2", pid: 700))
        let refusal = AgentRefusal(uid: bob, pid: 900, request: .registerAgent, reason: .notSessionOwner, session: "2")
        s.when(.refuseAgent(refusal))
        s.then(.agentRefused(refusal))
        s.when(.unregisterAgent(uid: alice, session: "2", pid: 700, reason: .disconnect, routed: []))
        s.then(.agentUnregistered(uid: alice, session: "2", pid: 700, reason: .disconnect))
        XCTAssertEqual(s.state.users, before.users)
        XCTAssertEqual(s.state.contexts, before.contexts)
        XCTAssertEqual(s.refolded, s.state, "S-38")
    }

    func test_S65_aSessionIdOutsideLogindsGrammarIsRefusedUnrecorded() {
        let s = Scenario()
        s.when(.registerAgent(uid: alice, session: "2;rm", pid: 700))
        s.thenRejected(.badArgument)
    }

    func test_S66_thePromptPropertyIsRecordedLikeAnyOther() {
        let s = Scenario()
        s.newContext(ctx(1), uid: alice)
        s.when(.setProperty(ctx: ctx(1), property: .prompt(.agent)))
        s.then(.contextPropertySet(uid: alice, ctx: ctx(1), property: .prompt(.agent)))
        XCTAssertEqual(s.state.contexts[ctx(1)]?.prompt, .agent)
        XCTAssertEqual(ContextProperty(name: "prompt", value: "client"), .prompt(.client))
        XCTAssertNil(ContextProperty(name: "prompt", value: "system"))
        XCTAssertEqual(s.refolded, s.state, "S-38")
    }

    func test_S66_aRoutedEvaluationRecordsItsRouteJustBeforeItsFirstPrompt() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.when(.evaluate(ctx: ctx(1), policy: .biometrics, reason: vaultReason, options: EvaluationOptions(route: sessionA)))
        s.then(started(alice, ctx(1), 1, .biometrics), routed(ctx(1), 1, sessionA),
               prompted(alice, ctx(1), 1, firstBiometricPrompt))
        XCTAssertEqual(s.evaluation(ctx(1))?.route, sessionA)
        // Every later prompt is the routed evaluation's, without a new record.
        s.feed(alice, .noMatch)
        XCTAssertFalse(s.emitted.contains { if case .promptsRouted = $0 { return true } else { return false } })
        XCTAssertEqual(s.evaluation(ctx(1))?.route, sessionA)
        XCTAssertEqual(s.refolded, s.state, "S-38")
    }

    func test_S66_anEvaluationThatEndsBeforeAnyPromptIsNotRouted() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .biometrics)
        s.feed(alice, .match)
        // S-23: the cached success needs no prompt.
        s.when(.evaluate(ctx: ctx(1), policy: .biometrics, reason: vaultReason, options: EvaluationOptions(route: sessionA)))
        s.then(started(alice, ctx(1), 2, .biometrics), succeeded(alice, ctx(1), 2, .cached))
        // S-26: nor does notInteractive.
        s.newContext(ctx(2), uid: alice)
        s.set(ctx(2), .interactionNotAllowed(true))
        s.when(.evaluate(ctx: ctx(2), policy: .owner, reason: vaultReason, options: EvaluationOptions(route: sessionA)))
        s.then(started(alice, ctx(2), 1, .owner), failed(alice, ctx(2), 1, .notInteractive))
    }

    func test_S68_aRoutedEvaluationTakesTheLoginPasswordThatAnAppCannot() {
        let s = Scenario()
        s.setPasscode(alice)  // nothing enrolled: policy 2 goes straight to the passcode
        s.given(.createContext(ctx: ctx(1), uid: alice, pid: 77, origin: app))
        s.when(.evaluate(ctx: ctx(1), policy: .owner, reason: vaultReason, options: EvaluationOptions(route: sessionA)))
        s.then(started(alice, ctx(1), 1, .owner), routed(ctx(1), 1, sessionA), prompted(alice, ctx(1), 1, passcodePrompt(left: 6)))
        // The passcode is checked and counted as any (S-5, S-28).
        s.enterPasscode(ctx(1), correct: false)
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true),
               prompted(alice, ctx(1), 1, passcodePrompt(left: 5, wrong: true)))
        s.enterPasscode(ctx(1), correct: true)
        XCTAssertEqual(s.success(ctx(1), 1), .passcode)
        // Unrouted, the same context still ends with notInteractive (S-44).
        s.evaluate(ctx(1), .owner)
        XCTAssertEqual(s.success(ctx(1), 2), .cached)
        s.given(.createContext(ctx: ctx(2), uid: alice, pid: 77, origin: app))
        s.evaluate(ctx(2), .owner)
        XCTAssertEqual(s.failure(ctx(2), 1)?.code, .notInteractive)
        XCTAssertEqual(s.refolded, s.state, "S-38")
    }

    func test_S66_S60_aRoutedOwnerEvaluationTouchesOrTypesAtOnce() {
        let s = Scenario()
        s.readyUser(alice)
        s.given(.createContext(ctx: ctx(1), uid: alice, pid: 77, origin: app))
        // Without prompt=combined: the agent's dialog reads the finger and
        // takes the login password together.
        s.when(.evaluate(ctx: ctx(1), policy: .owner, reason: vaultReason, options: EvaluationOptions(route: sessionA)))
        s.then(started(alice, ctx(1), 1, .owner), routed(ctx(1), 1, sessionA),
               prompted(alice, ctx(1), 1, Prompt(kind: .biometricOrPasscode, attempt: 1, attemptsLeft: 6)))
        s.enterPasscode(ctx(1), correct: true)
        XCTAssertEqual(s.success(ctx(1), 1), .passcode)
    }

    func test_S68_aRouteWithoutPasscodePromptsShowsTheSensorAloneAndItsFallbackIsNotInteractive() {
        let s = Scenario()
        s.readyUser(alice)
        s.given(.createContext(ctx: ctx(1), uid: alice, pid: 77, origin: app))
        var strict = sessionA
        strict.passcodePrompts = false
        s.when(.evaluate(ctx: ctx(1), policy: .owner, reason: vaultReason, options: EvaluationOptions(route: strict)))
        s.then(started(alice, ctx(1), 1, .owner), routed(ctx(1), 1, strict), prompted(alice, ctx(1), 1, firstBiometricPrompt))
        s.feed(alice, .noMatch)
        s.when(.fallback(ctx: ctx(1)))
        XCTAssertEqual(s.failure(ctx(1), 1)?.code, .notInteractive)
    }

    func test_S68_clientPromptsNoKeepsTheLoginPasswordForPAMAlone() {
        let s = Scenario()
        s.setPasscode(alice)
        s.given(.createContext(ctx: ctx(1), uid: alice, pid: 77, origin: app))
        var strict = sessionA
        strict.passcodePrompts = false
        s.when(.evaluate(ctx: ctx(1), policy: .owner, reason: vaultReason, options: EvaluationOptions(route: strict)))
        s.then(started(alice, ctx(1), 1, .owner), failed(alice, ctx(1), 1, Failure(.notInteractive,
            message: "The login password can only be entered through the system's login prompt (PAM).")))
    }

    func test_S68_theAgentGoingAwayEndsItsPromptWithSystemCancelAndCountsNothing() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.given(.evaluate(ctx: ctx(1), policy: .owner, reason: vaultReason, options: EvaluationOptions(route: sessionA)))
        s.feed(alice, .noMatch)
        let before = s.user(alice)
        s.when(.unregisterAgent(uid: alice, session: "2", pid: 700, reason: .disconnect, routed: [ctx(1)]))
        s.then(.agentUnregistered(uid: alice, session: "2", pid: 700, reason: .disconnect), failed(alice, ctx(1), 1, agentGone))
        XCTAssertNil(s.evaluation(ctx(1)))
        XCTAssertEqual(s.user(alice).biometricFailures, before.biometricFailures)
        XCTAssertEqual(s.user(alice).passcodeFailures, before.passcodeFailures)
        XCTAssertNil(s.user(alice).promptHolder)
        // A reading after that finds no prompt: nothing counts.
        s.feed(alice, .noMatch)
        s.thenRejected(.badState)
    }

    func test_S68_aPasscodeBeingCheckedWhenTheAgentLeavesStillCountsWhenItsVerdictComes() {
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        s.given(.evaluate(ctx: ctx(1), policy: .owner, reason: vaultReason, options: EvaluationOptions(route: sessionA)))
        s.given(.submitPasscode(ctx: ctx(1)))
        s.when(.unregisterAgent(uid: alice, session: "2", pid: 700, reason: .disconnect, routed: [ctx(1)]))
        s.thenFailed(ctx(1), 1, agentGone)
        s.when(.passcodeChecked(uid: alice, ctx: ctx(1), eval: 1, correct: false, repeated: false))
        s.then(.passcodeRejected(uid: alice, ctx: ctx(1), eval: 1, counted: true))
        XCTAssertEqual(s.user(alice).passcodeFailures, 1)
    }

    func test_S68_anAgentEndsOnlyWhatItPromptsFor() {
        let s = Scenario()
        s.readyUser(alice)
        s.readyUser(bob)
        s.newContext(ctx(1), uid: alice)
        s.newContext(ctx(2), uid: bob)
        s.given(.evaluate(ctx: ctx(1), policy: .owner, reason: vaultReason, options: EvaluationOptions(route: sessionA)))
        s.given(.evaluate(ctx: ctx(2), policy: .owner, reason: vaultReason, options: EvaluationOptions(route: sessionB)))
        // Listing a context the agent does not prompt for ends nothing.
        s.when(.unregisterAgent(uid: alice, session: "2", pid: 700, reason: .disconnect, routed: [ctx(2)]))
        s.then(.agentUnregistered(uid: alice, session: "2", pid: 700, reason: .disconnect))
        XCTAssertNotNil(s.evaluation(ctx(2)))
        // At a clean stop the agent's evaluations end with S-32's answer instead.
        s.when(.unregisterAgent(uid: alice, session: "2", pid: 700, reason: .shutdown, routed: [ctx(1)]))
        s.then(.agentUnregistered(uid: alice, session: "2", pid: 700, reason: .shutdown))
        XCTAssertNotNil(s.evaluation(ctx(1)))
    }

    func test_S66_S30_twoSessionsOfOneUserShareTheUsersOnePrompt() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.newContext(ctx(2), uid: alice)
        s.given(.evaluate(ctx: ctx(1), policy: .biometrics, reason: vaultReason, options: EvaluationOptions(route: sessionA)))
        var inB = sessionB
        inB.session = "3"
        s.when(.evaluate(ctx: ctx(2), policy: .biometrics, reason: vaultReason, options: EvaluationOptions(route: inB)))
        s.then(started(alice, ctx(2), 1, .biometrics), failed(alice, ctx(1), 1, preempted), routed(ctx(2), 1, inB),
               prompted(alice, ctx(2), 1, firstBiometricPrompt))
        // The reading goes to the newer prompt, in session 3.
        s.feed(alice, .match)
        XCTAssertEqual(s.success(ctx(2), 1), .biometric)
        // Session 2's agent leaving now ends nothing.
        s.when(.unregisterAgent(uid: alice, session: "2", pid: 700, reason: .disconnect, routed: [ctx(1)]))
        s.then(.agentUnregistered(uid: alice, session: "2", pid: 700, reason: .disconnect))
    }
}
