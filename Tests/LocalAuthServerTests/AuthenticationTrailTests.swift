// AuthenticationTrail, the journal's view of authentications as a value:
// given events folded into a state, the entries it asks for, and whether
// each waits for its event's fsync (S-40).
import LocalAuthCore
import XCTest
@testable import LocalAuthServer

final class AuthenticationTrailTests: XCTestCase {
    private let ctx = ContextID(high: 1, low: 2)

    /// The entries `event` makes once folded into `state` (which it changes).
    private func note(_ trail: inout AuthenticationTrail, _ state: inout AuthState, _ body: EventBody,
                      seq: UInt64) -> [(JournalEntry, Bool)] {
        let event = Event(time: 1_700_000_000_000_000, body)
        state.apply(event)
        var written: [(JournalEntry, Bool)] = []
        trail.note(event, seq: seq, in: state) { written.append(($0, $1)) }
        return written
    }

    func test_S42_S40_anOnBehalfEvaluationsEndNamesItsOriginAndWaitsForItsFsync() {
        var state = AuthState()
        var trail = AuthenticationTrail(state)
        let origin = ContextOrigin(caller: 0, service: "sudo", tty: "pts/1", rhost: nil, passcodePrompts: true)
        XCTAssertTrue(note(&trail, &state, .contextCreated(uid: 1000, ctx: ctx, pid: 7, origin: origin), seq: 1).isEmpty)
        let failed = note(&trail, &state, .evaluationFailed(uid: 1000, ctx: ctx, eval: 1, failure: Failure(.userCancel)), seq: 2)
        XCTAssertEqual(failed.count, 1)
        XCTAssertTrue(failed[0].1, "a failure's outcome waits for its fsync")
        XCTAssertEqual(failed[0].0.id, .evaluationFailed)
        XCTAssertTrue(failed[0].0.message.contains("via sudo"), failed[0].0.message)
        XCTAssertTrue(failed[0].0.fields.contains { $0 == ("LOCALAUTH_TTY", "pts/1") })
        XCTAssertTrue(failed[0].0.fields.contains { $0 == ("LOCALAUTH_SEQ", "2") })
    }

    func test_S03_aLockoutIsJournaledOnceWhenItEngagesAndLiftedWhenAResetEndsIt() {
        var state = AuthState()
        var trail = AuthenticationTrail(state)
        var engaged: [JournalEntry] = []
        for seq in 1...UInt64(state.rules.lockoutThreshold + 1) {
            engaged += note(&trail, &state, .biometricFailed(uid: 1000, ctx: ctx, eval: 1), seq: seq).map(\.0)
        }
        XCTAssertEqual(engaged.map(\.id), [.lockoutEngaged], "once, at the threshold")
        XCTAssertEqual(trail.lockedOut, [1000])
        let reset = note(&trail, &state, .userReset(uid: 1000, by: 0), seq: 99)
        XCTAssertEqual(reset.map(\.0.id), [.adminReset, .lockoutLifted])
        XCTAssertEqual(reset.map(\.1), [false, false], "an admin action's entries go out at once")
        XCTAssertTrue(trail.lockedOut.isEmpty)
    }
}
