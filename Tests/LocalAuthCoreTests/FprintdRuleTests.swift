// S-43 in the core: fprintd's fingers become the user's templates through
// enrollment-changed (source fprintd), a reader that is not there answers
// biometryNotAvailable with the reason, and an error without a verdict ends
// the prompt with systemCancel and counts nothing.
import XCTest
@testable import LocalAuthCore

final class FprintdRuleTests: XCTestCase {
    func test_S43_listedFingersAreRecordedOnlyWhenTheyChange() {
        let s = Scenario()
        s.setPasscode(alice)
        s.when(.fingersListed(uid: alice, fingers: ["right-index-finger"], by: admin, domainState: "d1"))
        s.then(.enrollmentChanged(uid: alice, templates: ["right-index-finger"], by: admin, domainState: "d1", source: .fprintd))
        XCTAssertEqual(s.user(alice).templates, ["right-index-finger"])
        // The same set again: nothing recorded, the domain state stays (S-10).
        s.when(.fingersListed(uid: alice, fingers: ["right-index-finger"], by: admin, domainState: "d2"))
        s.then()
        XCTAssertEqual(s.state.domainState(alice).description, "d1")
        s.when(.fingersListed(uid: alice, fingers: [], by: admin, domainState: "d3"))
        s.then(.enrollmentChanged(uid: alice, templates: [], by: admin, domainState: "d3", source: .fprintd))
        XCTAssertTrue(s.user(alice).templates.isEmpty)
    }

    func test_S43_noReaderAnswersBiometryNotAvailableWithTheReason() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.setSensorProblem("fprintd is not running.")
        guard case .success(let check) = s.state.canEvaluate(ctx(1), policy: .biometrics, now: s.now) else {
            return XCTFail("can-evaluate refused")
        }
        XCTAssertEqual(check.result, .biometryNotAvailable)
        XCTAssertEqual(s.state.biometryUnusable(alice, now: s.now)?.message, "fprintd is not running.")
        // Policy 2 goes straight to the passcode; policy 1 fails.
        s.evaluate(ctx(1), .biometrics)
        XCTAssertEqual(s.failure(ctx(1), 1)?.code, .biometryNotAvailable)
        s.setSensorProblem(nil)
        guard case .success(let again) = s.state.canEvaluate(ctx(1), policy: .biometrics, now: s.now) else {
            return XCTFail("can-evaluate refused")
        }
        XCTAssertNil(again.result)
    }

    func test_S43_aSensorErrorEndsThePromptWithSystemCancelAndCountsNothing() {
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .biometrics)
        s.feed(alice, .error(message: "The fingerprint reader failed."))
        s.then(failed(alice, ctx(1), 1, Failure(.systemCancel, message: "The fingerprint reader failed.")))
        XCTAssertEqual(s.user(alice).biometricFailures, 0)
    }

    func test_S43_enrollmentChangedLayout1StillDecodesAsAnAdminsChange() throws {
        // Layout 1 (before fprintd): no source byte.
        var w = ByteWriter(capacity: 32)
        w.u8(1); w.varint(1000); w.varint(1); w.string("thumb"); w.varint(0); w.string("aa")
        let body = try EventCodec.decode(kind: EventKind.enrollmentChanged.rawValue, payload: w.bytes)
        XCTAssertEqual(body, .enrollmentChanged(uid: 1000, templates: ["thumb"], by: 0, domainState: "aa", source: .admin))
        // Layout 2 carries it; an unknown source is refused.
        var v2 = EventCodec.encode(.enrollmentChanged(uid: 1, templates: ["left-thumb"], by: 0, domainState: "bb", source: .fprintd))
        XCTAssertEqual(v2.first, 2)
        v2[v2.count - 1] = 9
        XCTAssertThrowsError(try EventCodec.decode(kind: EventKind.enrollmentChanged.rawValue, payload: v2))
    }
}
