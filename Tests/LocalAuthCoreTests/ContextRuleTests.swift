// SEMANTICS §4 and §5: context lifecycle (S-12 .. S-16) and canEvaluate
// (S-17 .. S-20).

import XCTest
@testable import LocalAuthCore

final class ContextRuleTests: XCTestCase {
    // S-12: binding a context to its connection is the daemon's; the core
    // holds that ids are as given and unknown ids are unknown-context.
    func test_S12_contextIdsAreAsGivenAndUnknownIdsAreUnknownContext() {
        let s = Scenario()
        let id = ContextID(hex: "8c1f0a6e2b7d4e59a0c3f1d2e4b5a697")!
        XCTAssertEqual(id.hex, "8c1f0a6e2b7d4e59a0c3f1d2e4b5a697")
        XCTAssertEqual(ContextID(bytes: id.bytes), id)
        XCTAssertNil(ContextID(hex: "8c1f0a6e2b7d4e59a0c3f1d2e4b5a69"))
        s.when(.createContext(ctx: id, uid: alice, pid: 77))
        s.then(.contextCreated(uid: alice, ctx: id, pid: 77))
        XCTAssertEqual(s.state.contexts[id]?.uid, alice)
        s.when(.createContext(ctx: id, uid: bob, pid: 78))
        s.thenRejected(.badArgument)

        let unknown = ctx(999)
        let commands: [Command] = [
            .setProperty(ctx: unknown, property: .cancelTitle("x")),
            .invalidate(ctx: unknown, reason: .app),
            .invalidate(ctx: unknown, reason: .disconnect),
            .canEvaluate(ctx: unknown, policy: .owner),
            .evaluate(ctx: unknown, policy: .owner, reason: vaultReason),
            .fallback(ctx: unknown),
            .submitPasscode(ctx: unknown),
            .cancel(ctx: unknown),
        ]
        for command in commands {
            s.when(command)
            s.thenRejected(.unknownContext)
        }
    }

    func test_S13_invalidateIsIdempotentCancelsTheEvaluationAndLaterAnswersInvalidContext() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .biometrics)
        s.when(.invalidate(ctx: ctx(1), reason: .app))
        s.then(failed(alice, ctx(1), 1, .appCancel), .contextInvalidated(uid: alice, ctx: ctx(1), reason: .app))
        s.when(.invalidate(ctx: ctx(1), reason: .app))
        s.then()  // idempotent

        s.canEvaluate(ctx(1), .biometrics)
        s.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .biometrics, biometry: .touchID,
                              result: .invalidContext, reason: nil))
        s.canEvaluate(ctx(1), .owner)
        s.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .owner, biometry: .touchID,
                              result: .invalidContext, reason: nil))
        s.evaluate(ctx(1), .owner)
        s.then(started(alice, ctx(1), 2, .owner), failed(alice, ctx(1), 2, .invalidContext))
        s.evaluate(ctx(1), .companion)
        s.then(started(alice, ctx(1), 3, .companion), failed(alice, ctx(1), 3, .invalidContext))
        XCTAssertEqual(s.state.status(alice, now: s.now).contexts, 0, "an invalidated context is not open")
    }

    func test_S13_invalidatedContextDoesNotReuseAnEarlierSuccess() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .biometrics)
        s.feed(alice, .match)
        s.given(.invalidate(ctx: ctx(1), reason: .app))
        s.evaluate(ctx(1), .biometrics)
        s.then(started(alice, ctx(1), 2, .biometrics), failed(alice, ctx(1), 2, .invalidContext))
    }

    func test_S14_disconnectInvalidatesAndEndsTheEvaluation() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.newContext(ctx(2), uid: alice)
        s.given(.invalidate(ctx: ctx(2), reason: .app))
        s.evaluate(ctx(1), .owner)
        s.when(.invalidate(ctx: ctx(1), reason: .disconnect))
        s.then(failed(alice, ctx(1), 1, Failure(.systemCancel, message: "The client disconnected.", reason: "disconnect")),
               .contextInvalidated(uid: alice, ctx: ctx(1), reason: .disconnect))
        XCTAssertNil(s.state.contexts[ctx(1)])
        s.canEvaluate(ctx(1), .owner)
        s.thenRejected(.unknownContext)

        // An app-invalidated context is released when its connection goes.
        s.when(.invalidate(ctx: ctx(2), reason: .disconnect))
        s.then(.contextReleased(uid: alice, ctx: ctx(2)))
        XCTAssertNil(s.state.contexts[ctx(2)])
        XCTAssertEqual(s.user(alice).openContexts, 0)
    }

    func test_S15_startInvalidatesLeftoverContextsWithReasonRestart() {
        let s = Scenario()
        s.readyUser(alice)
        s.setPasscode(bob)
        s.newContext(ctx(1), uid: alice)
        s.newContext(ctx(2), uid: bob)
        s.newContext(ctx(3), uid: alice)
        s.given(.invalidate(ctx: ctx(3), reason: .app))
        s.evaluate(ctx(1), .biometrics)
        // The daemon dies here (no stop) and starts again.
        let rules = Rules.default.with { $0.biometryType = .faceID }
        s.when(.start(version: "1.1", bootID: "boot-1", pid: 99, rules: rules))
        s.then(.daemonStarted(version: "1.1", bootID: "boot-1", pid: 99),
               .rulesApplied(rules),
               failed(alice, ctx(1), 1, Failure(.systemCancel, message: "The daemon restarted.", reason: "restart")),
               .contextInvalidated(uid: alice, ctx: ctx(1), reason: .restart),
               .contextInvalidated(uid: bob, ctx: ctx(2), reason: .restart),
               .contextReleased(uid: alice, ctx: ctx(3)))
        XCTAssertTrue(s.state.contexts.isEmpty)
        XCTAssertTrue(s.state.prompting.isEmpty)
        XCTAssertNil(s.user(alice).promptHolder)
        XCTAssertEqual(s.user(alice).openContexts, 0)
        XCTAssertEqual(s.state.rules, rules)
        XCTAssertEqual(s.refolded, s.state)
    }

    func test_S15_startFromGivenEventsOfACrashedRun() {
        // The same, with the crashed run given as events (what replay sees).
        let s = Scenario(started: false)
        s.given(events: .daemonStarted(version: "1.0", bootID: "b", pid: 1), .rulesApplied(.default),
                .passcodeChanged(uid: alice, set: true, by: admin),
                .contextCreated(uid: alice, ctx: ctx(5), pid: 3),
                .evaluationStarted(uid: alice, ctx: ctx(5), eval: 1, policy: .owner, reason: "r"),
                .promptShown(uid: alice, ctx: ctx(5), eval: 1, prompt: passcodePrompt(left: 6)),
                .passcodeSubmitted(uid: alice, ctx: ctx(5), eval: 1))
        s.when(.start(version: "1.0", bootID: "b", pid: 2, rules: .default))
        s.then(.daemonStarted(version: "1.0", bootID: "b", pid: 2), .rulesApplied(.default),
               failed(alice, ctx(5), 1, Failure(.systemCancel, message: "The daemon restarted.", reason: "restart")),
               .contextInvalidated(uid: alice, ctx: ctx(5), reason: .restart))
        XCTAssertNil(s.user(alice).promptHolder)
    }

    func test_S16_contextPropertiesAndTheirDefaults() {
        let s = Scenario()
        s.newContext(ctx(1), uid: alice)
        let context = s.state.contexts[ctx(1)]!
        XCTAssertEqual(context.effectiveFallbackTitle, "Enter Password")
        XCTAssertEqual(context.effectiveCancelTitle, "Cancel")
        XCTAssertEqual(context.reuseDuration, 0)
        XCTAssertFalse(context.interactionNotAllowed)
        XCTAssertNil(context.localizedReason)

        s.when(.setProperty(ctx: ctx(1), property: .fallbackTitle("")))
        s.then(.contextPropertySet(uid: alice, ctx: ctx(1), property: .fallbackTitle("")))
        XCTAssertNil(s.state.contexts[ctx(1)]?.effectiveFallbackTitle, "empty hides the fallback")
        s.set(ctx(1), .fallbackTitle("Use PIN"))
        XCTAssertEqual(s.state.contexts[ctx(1)]?.effectiveFallbackTitle, "Use PIN")
        s.set(ctx(1), .cancelTitle(""))
        XCTAssertEqual(s.state.contexts[ctx(1)]?.effectiveCancelTitle, "Cancel")
        s.set(ctx(1), .cancelTitle("Nope"))
        XCTAssertEqual(s.state.contexts[ctx(1)]?.effectiveCancelTitle, "Nope")
        s.set(ctx(1), .reuseDuration(1000))
        XCTAssertEqual(s.state.contexts[ctx(1)]?.reuseDuration, 300, "larger values act as 300")
        s.set(ctx(1), .interactionNotAllowed(true))
        XCTAssertEqual(s.state.contexts[ctx(1)]?.interactionNotAllowed, true)
        s.set(ctx(1), .localizedReason("Sign in"))
        XCTAssertEqual(s.state.contexts[ctx(1)]?.localizedReason, "Sign in")
        // Property changes on an invalidated context are still recorded.
        s.given(.invalidate(ctx: ctx(1), reason: .app))
        s.when(.setProperty(ctx: ctx(1), property: .cancelTitle("x")))
        s.then(.contextPropertySet(uid: alice, ctx: ctx(1), property: .cancelTitle("x")))
    }

    func test_S16_propertyWireParsing() {
        XCTAssertEqual(ContextProperty(name: "reuse-duration", value: "0"), .reuseDuration(0))
        XCTAssertEqual(ContextProperty(name: "reuse-duration", value: "300"), .reuseDuration(300))
        XCTAssertEqual(ContextProperty(name: "reuse-duration", value: "301"), .reuseDuration(300))
        XCTAssertEqual(ContextProperty(name: "reuse-duration", value: "99999999999999999999999"), .reuseDuration(300))
        XCTAssertNil(ContextProperty(name: "reuse-duration", value: "-1"))
        XCTAssertNil(ContextProperty(name: "reuse-duration", value: ""))
        XCTAssertNil(ContextProperty(name: "reuse-duration", value: "1.5"))
        XCTAssertEqual(ContextProperty(name: "interaction-not-allowed", value: "true"), .interactionNotAllowed(true))
        XCTAssertEqual(ContextProperty(name: "interaction-not-allowed", value: "false"), .interactionNotAllowed(false))
        XCTAssertNil(ContextProperty(name: "interaction-not-allowed", value: "yes"))
        XCTAssertEqual(ContextProperty(name: "fallback-title", value: ""), .fallbackTitle(""))
        XCTAssertEqual(ContextProperty(name: "cancel-title", value: "Stop"), .cancelTitle("Stop"))
        XCTAssertEqual(ContextProperty(name: "localized-reason", value: "Pay"), .localizedReason("Pay"))
        XCTAssertNil(ContextProperty(name: "biometry-type", value: "1"))
        for name in ContextProperty.names {
            let value = name == "reuse-duration" ? "5" : name == "interaction-not-allowed" ? "true" : name == "prompt" ? "agent" : "v"
            XCTAssertEqual(ContextProperty(name: name, value: value)?.name, name)
            XCTAssertEqual(ContextProperty(name: name, value: value)?.value, value)
        }
    }

    func test_S17_biometryTypeIsNoneUntilTheFirstCanEvaluateEvenAFailingOne() {
        let s = Scenario(rules: Rules.default.with { $0.biometryType = .faceID })
        s.setPasscode(alice)  // nothing enrolled
        s.newContext(ctx(1), uid: alice)
        XCTAssertEqual(s.state.contexts[ctx(1)]?.biometry, BiometryType.none)
        s.evaluate(ctx(1), .owner)
        s.given(.cancel(ctx: ctx(1)))
        XCTAssertEqual(s.state.contexts[ctx(1)]?.biometry, BiometryType.none, "evaluate does not set it")
        s.canEvaluate(ctx(1), .biometrics)
        s.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .biometrics, biometry: .faceID,
                              result: .biometryNotEnrolled, reason: nil))
        XCTAssertEqual(s.state.contexts[ctx(1)]?.biometry, .faceID)

        let noSensor = Scenario(rules: Rules.default.with { $0.biometryType = .none })
        noSensor.newContext(ctx(1), uid: alice)
        noSensor.canEvaluate(ctx(1), .owner)
        noSensor.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .owner, biometry: .none,
                                     result: .passcodeNotSet, reason: nil))
        XCTAssertEqual(noSensor.state.contexts[ctx(1)]?.biometry, BiometryType.none)
    }

    func test_S18_checkOrderFirstFailureWins() {
        func check(_ rules: Rules = .default, setup: (Scenario) -> Void, _ policy: Policy,
                   _ expected: LAErrorCode?, line: UInt = #line) {
            let s = Scenario(rules: rules)
            s.newContext(ctx(1), uid: alice)
            setup(s)
            s.canEvaluate(ctx(1), policy)
            s.then([.policyChecked(uid: alice, ctx: ctx(1), policy: policy, biometry: rules.biometryType,
                                   result: expected, reason: nil)], line: line)
        }
        let noSensor = Rules.default.with { $0.biometryType = .none }
        // 1. invalidated first, whatever else is wrong.
        check(setup: { $0.given(.invalidate(ctx: ctx(1), reason: .app)) }, .companion, .invalidContext)
        check(noSensor, setup: { $0.given(.invalidate(ctx: ctx(1), reason: .app)) }, .biometrics, .invalidContext)
        // 2. companions.
        check(setup: { $0.readyUser(alice) }, .companion, .companionNotAvailable)
        // 3. biometrics: sensor, passcode, enrollment, lockout.
        check(noSensor, setup: { _ in }, .biometrics, .biometryNotAvailable)
        check(setup: { _ in }, .biometrics, .passcodeNotSet)
        check(setup: { $0.enroll(alice) }, .biometrics, .passcodeNotSet)
        check(setup: { $0.setPasscode(alice) }, .biometrics, .biometryNotEnrolled)
        check(setup: { $0.readyUser(alice); $0.failBiometry(alice, on: ctx(1), times: 5) }, .biometrics, .biometryLockout)
        check(setup: { $0.readyUser(alice) }, .biometrics, nil)
        // Policy 4 behaves as policy 1.
        check(setup: { $0.setPasscode(alice) }, .biometricsOrCompanion, .biometryNotEnrolled)
        check(setup: { $0.readyUser(alice) }, .biometricsOrCompanion, nil)
        // 4. owner: only the passcode matters.
        check(setup: { $0.enroll(alice) }, .owner, .passcodeNotSet)
        check(noSensor, setup: { $0.setPasscode(alice) }, .owner, nil)
        check(setup: { $0.setPasscode(alice) }, .owner, nil)
        check(setup: { $0.readyUser(alice); $0.failBiometry(alice, on: ctx(1), times: 5) }, .owner, nil)
    }

    func test_S18_policy5IsABadArgument() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.canEvaluate(ctx(1), .wrist)
        s.thenRejected(.badArgument)
        s.evaluate(ctx(1), .wrist)
        s.thenRejected(.badArgument)
        XCTAssertEqual(s.state.contexts[ctx(1)]?.lastEvaluation, 0)
    }

    func test_S19_successfulBiometricCheckReturnsTheDomainStateAndEveryCheckIsRecorded() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.canEvaluate(ctx(1), .owner)
        XCTAssertEqual(s.state.contexts[ctx(1)]?.domainState, "", "policy 2 hands out no domain state")
        s.canEvaluate(ctx(1), .biometrics)
        s.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .biometrics, biometry: .touchID, result: nil, reason: nil))
        XCTAssertEqual(s.state.contexts[ctx(1)]?.domainState, "ds-1000-right-thumb")
        s.canEvaluate(ctx(1), .companion)
        s.then(.policyChecked(uid: alice, ctx: ctx(1), policy: .companion, biometry: .touchID,
                              result: .companionNotAvailable, reason: nil))
        XCTAssertEqual(s.log.filter { $0.body.kind == .policyChecked }.count, 3)
    }

    func test_S19_theRuleHandsTheReplyTheDomainStateItCheckedAgainstAndTheEventDecideEmits() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.newContext(ctx(2), uid: bob)
        for (context, policy) in [(ctx(1), Policy.biometrics), (ctx(1), .owner), (ctx(1), .companion), (ctx(2), .biometrics)] {
            guard case .success(let check) = s.state.canEvaluate(context, policy: policy, now: s.now) else {
                return XCTFail("\(policy) on \(context) was refused")
            }
            XCTAssertEqual(check.domainState, s.state.users[s.state.contexts[context]!.uid]?.domainState ?? "")
            // The daemon's path and decide's give the same one event.
            XCTAssertEqual(try decide(.canEvaluate(ctx: context, policy: policy), s.state, now: s.now).get().map(\.body),
                           [check.event])
            // And the daemon's fold of the check is the event's.
            var viaEvent = s.state, viaCheck = s.state
            viaEvent.apply(Event(time: s.now + 7, check.event))
            viaCheck.apply(check, time: s.now + 7)
            XCTAssertEqual(viaCheck, viaEvent, "\(policy) on \(context)")
        }
        XCTAssertEqual(s.state.canEvaluate(ctx(9), policy: .owner, now: s.now).map(\.event),
                       .failure(Rejection(.unknownContext, "No such context.")))
    }

    func test_S20_canEvaluateNeverPromptsAndNeverChangesCounters() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.newContext(ctx(2), uid: alice)
        s.failBiometry(alice, on: ctx(1), times: 2)
        XCTAssertNotNil(s.evaluation(ctx(1)))
        let users = s.state.users
        for policy in [Policy.biometrics, .owner, .companion, .biometricsOrCompanion] {
            for c in [ctx(1), ctx(2)] {
                s.canEvaluate(c, policy)
                XCTAssertEqual(s.emitted.map(\.kind), [.policyChecked])
            }
        }
        XCTAssertEqual(s.state.users, users)
        XCTAssertEqual(s.evaluation(ctx(1))?.biometricFailures, 2, "the running evaluation is untouched")
    }
}
