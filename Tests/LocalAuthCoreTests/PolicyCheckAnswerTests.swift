// S-18/S-25: a failed can-evaluate answers with the very LAError an
// evaluation would end with (code, message, wire reason): the rule hands the
// reply its Failure, so the daemon re-derives no message.

import XCTest
@testable import LocalAuthCore

final class PolicyCheckAnswerTests: XCTestCase {
    private func check(_ s: Scenario, _ c: ContextID, _ policy: Policy,
                       file: StaticString = #filePath, line: UInt = #line) -> PolicyCheck? {
        guard case .success(let check) = s.state.canEvaluate(c, policy: policy, now: s.now) else {
            XCTFail("can-evaluate refused", file: file, line: line)
            return nil
        }
        return check
    }

    /// The failure evaluate ends with for the same state and policy.
    private func evaluationFailure(_ s: Scenario, _ c: ContextID, _ policy: Policy) -> Failure? {
        let eval = (s.state.contexts[c]?.lastEvaluation ?? 0) + 1
        s.evaluate(c, policy)
        return s.failure(c, eval)
    }

    func test_S18_S25_aPasscodeRequirementAnswersWithItsMessageAndReasonLikeEvaluate() {
        let s = Scenario(rules: Rules.default.with { $0.passcodeRequiredAfter = sec(60) })
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.advance(61)
        let answer = check(s, ctx(1), .biometrics)?.failure
        XCTAssertEqual(answer, passcodeRequired)
        XCTAssertEqual(answer, evaluationFailure(s, ctx(1), .biometrics))
        XCTAssertEqual(check(s, ctx(1), .biometrics)?.result, .biometryLockout, "the event's result")
        XCTAssertEqual(check(s, ctx(1), .biometrics)?.reason, "passcode-required", "the event's reason")
    }

    func test_S18_S43_aMissingReaderAnswersWithTheSensorsWords() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.setSensorProblem("No fingerprint reader is connected.")
        let answer = check(s, ctx(1), .biometrics)?.failure
        XCTAssertEqual(answer, Failure(.biometryNotAvailable, message: "No fingerprint reader is connected."))
        XCTAssertNil(check(s, ctx(1), .biometrics)?.reason, "the event records no reason for it")
        XCTAssertEqual(answer, evaluationFailure(s, ctx(1), .biometrics))
    }

    func test_S18_everyOtherFailureAnswersWithItsCodesDefaultMessage() {
        let s = Scenario()
        s.setPasscode(alice)
        s.newContext(ctx(1), uid: alice)
        XCTAssertEqual(check(s, ctx(1), .biometrics)?.failure, Failure(.biometryNotEnrolled))
        XCTAssertEqual(check(s, ctx(1), .companion)?.failure, Failure(.companionNotAvailable))
        XCTAssertEqual(check(s, ctx(1), .biometrics)?.failure, evaluationFailure(s, ctx(1), .biometrics))
        s.newContext(ctx(2), uid: bob)
        XCTAssertEqual(check(s, ctx(2), .owner)?.failure, Failure(.passcodeNotSet))
        s.given(.invalidate(ctx: ctx(2), reason: .app))
        XCTAssertEqual(check(s, ctx(2), .owner)?.failure, Failure(.invalidContext))
        let none = Scenario(rules: Rules.default.with { $0.biometryType = .none })
        none.setPasscode(alice)
        none.newContext(ctx(3), uid: alice)
        XCTAssertEqual(check(none, ctx(3), .biometrics)?.failure, Failure(.biometryNotAvailable))
    }

    func test_S19_aSuccessCarriesNoFailure() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        let ok = check(s, ctx(1), .biometrics)
        XCTAssertNil(ok?.failure)
        XCTAssertNil(ok?.result)
        XCTAssertEqual(ok?.event, .policyChecked(uid: alice, ctx: ctx(1), policy: .biometrics, biometry: .touchID,
                                                 result: nil, reason: nil))
    }
}
