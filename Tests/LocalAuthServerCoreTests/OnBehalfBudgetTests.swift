// S-55: PAM traffic (contexts root opens on behalf of a subject, S-42) pays
// a budget of its own per (subject, requester) and never writes into the
// space reserve, even though its connection is root's; root's own requests
// and other users are served as before.
import LocalAuthCore
import XCTest
@testable import LocalAuthServer

final class OnBehalfBudgetTests: XCTestCase {
    private func harness(reserve: Int = 0) -> CoreHarness {
        let h = CoreHarness {
            $0.log.userEventRate = 1
            $0.log.userEventBurst = 8
            $0.log.reserveSpace = reserve
            // On-behalf contexts on the simulated backends: the test-only switch (S-52).
            $0.daemon.insecureTestBackendsForPAM = true
        }
        return h
    }

    func test_S55_aSuLoopIsRefusedPastItsPairsBudgetWhileRootAndOthersAreServed() throws {
        // Given PAM's root connection (pam_localauth inside su) and a budget of 8 events
        // (a `new` on behalf pays 2: the context's creation and its end),
        let h = harness()
        let pam = try XCTUnwrap(h.open(uid: 0, pid: 700))
        // when uid 1001 asks for uid 1000 again and again,
        for n in 0..<4 {
            h.feed("n\(n) new uid=1000 service=su requester=1001\n", on: pam)
            XCTAssertTrue(h.reply("n\(n)", on: pam)?.hasPrefix("n\(n) OK ctx=") ?? false, "\(h.lines(pam))")
        }
        // then the fifth is refused for load (PAM_AUTH_ERR, not a fall through), recording nothing,
        let recorded = h.recorder.events.count
        h.feed("n4 new uid=1000 service=su requester=1001\n", on: pam)
        XCTAssertTrue(h.reply("n4", on: pam)?.contains("name=limit-exceeded") ?? false, "\(h.lines(pam))")
        XCTAssertEqual(h.recorder.events.count, recorded)
        // while another requester, another subject, root's own and an ordinary user are served.
        h.feed("m new uid=1000 service=su requester=1002\n", on: pam)
        XCTAssertTrue(h.reply("m", on: pam)?.hasPrefix("m OK ctx=") ?? false, "\(h.lines(pam))")
        h.feed("o new uid=1002 service=su requester=1001\n", on: pam)
        XCTAssertTrue(h.reply("o", on: pam)?.hasPrefix("o OK ctx=") ?? false, "\(h.lines(pam))")
        let root = try XCTUnwrap(h.open(uid: 0, pid: 701))
        for n in 0..<8 {
            h.feed("r\(n) new\n", on: root)
            XCTAssertTrue(h.reply("r\(n)", on: root)?.hasPrefix("r\(n) OK ctx=") ?? false, "\(h.lines(root))")
        }
        let user = try XCTUnwrap(h.open(uid: 1003, pid: 702))
        h.feed("u new\n", on: user)
        XCTAssertTrue(h.reply("u", on: user)?.hasPrefix("u OK ctx=") ?? false, "\(h.lines(user))")
        // And the record names the requester (S-54).
        XCTAssertTrue(h.recorder.events.contains {
            if case .contextCreated(1000, _, _, let origin) = $0.body { return origin.requester == 1001 } else { return false }
        })
    }

    func test_S55_pamTrafficNeverWritesIntoTheReserveAndRootsOwnDoes() throws {
        // Given a 64 MiB reserve and 1 MiB free,
        let h = harness(reserve: 64 << 20)
        h.core.freeSpace = { _ in 1 << 20 }
        let pam = try XCTUnwrap(h.open(uid: 0, pid: 700))
        // when PAM asks for a context, it is refused, with nothing recorded,
        h.feed("n new uid=1000 service=login\n", on: pam)
        XCTAssertTrue(h.reply("n", on: pam)?.contains("name=unavailable") ?? false, "\(h.lines(pam))")
        // and root's own localauthctl is still served.
        h.feed("r new\n", on: pam)
        XCTAssertTrue(h.reply("r", on: pam)?.hasPrefix("r OK ctx=") ?? false, "\(h.lines(pam))")
    }
}
