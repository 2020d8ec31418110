// The passcode store's write is the shell's (`.commitPasscode`), and its
// answer an input (`passcodeCommitted`): the record is stored before its
// event is recorded (S-36: after a crash between the two, the store wins),
// and the lines a clear-passcode's connection sent after it wait for the
// answer, so their replies keep their order and see the change.
import LocalAuthConfig
import LocalAuthCore
import LocalAuthSystem
import XCTest
@testable import LocalAuthServer
@testable import LocalAuthSimulation

final class PasscodeCommitTests: XCTestCase {
    /// uid 1000 with passcode 1234, set by root on `admin`.
    private func passcodeSet(_ h: CoreHarness) throws -> Connection.ID {
        let admin = try XCTUnwrap(h.open(uid: 0))
        h.feed("a set-passcode uid=1000 secret=1234\n", on: admin)
        h.runJobs()
        XCTAssertEqual(h.reply("a", on: admin), "a OK")
        return admin
    }

    func test_S36_givenClearPasscodePipelined_whenTheStoreIsWritten_thenNoEventYetAndTheLaterLinesWaitThenSeeTheChange() throws {
        // Given a passcode,
        let h = CoreHarness()
        let admin = try passcodeSet(h)
        let recorded = h.recorder.events.count
        // when clear-passcode and a status come in one read,
        var atCommit: (events: Int, status: String?)?
        h.onCommit = { atCommit = (h.recorder.events.count, h.reply("s", on: admin)) }
        h.feed("c clear-passcode uid=1000\ns status uid=1000\n", on: admin)
        // then the store was written before anything was recorded, and
        // before the status was handled;
        XCTAssertEqual(atCommit?.events, recorded)
        XCTAssertNotNil(atCommit)
        XCTAssertNil(atCommit?.status ?? nil)
        // once it answered: the change recorded, OK, then the status, which sees it.
        XCTAssertFalse(h.passcodes.isSet(1000))
        guard case .passcodeChanged(1000, false, 0)? = h.recorder.events.last?.body else {
            return XCTFail("\(String(describing: h.recorder.events.last))")
        }
        let lines = h.lines(admin).filter { $0.hasPrefix("c ") || $0.hasPrefix("s ") }
        XCTAssertEqual(lines.first, "c OK")
        XCTAssertTrue(lines.last?.contains("passcode-set=false") ?? false, "\(lines)")
        XCTAssertTrue(h.core.isReading(admin))
    }

    func test_S36_givenTheStoreCannotBeWritten_whenClearPasscode_thenInternalNothingRecordedAndTheConnectionGoesOn() throws {
        let h = CoreHarness()
        let admin = try passcodeSet(h)
        let recorded = h.recorder.events.count
        h.passcodes.failNextCommit = true
        h.feed("c clear-passcode uid=1000\np ping\n", on: admin)
        XCTAssertEqual(h.recorder.events.count, recorded, "a change the store did not take is not recorded")
        XCTAssertTrue(h.reply("c", on: admin)?.hasPrefix("c ERR domain=protocol name=internal") ?? false, "\(h.lines(admin))")
        XCTAssertEqual(h.reply("p", on: admin), "p OK")
        XCTAssertTrue(h.passcodes.isSet(1000))
        XCTAssertTrue(h.journal.contains { $0.message.hasPrefix("Failed to write the passcode store") })
    }

    func test_S36_givenSetPasscode_whenItsHashIsMade_thenTheStoreIsWrittenBeforeTheChangeIsRecorded() throws {
        let h = CoreHarness()
        let admin = try XCTUnwrap(h.open(uid: 0))
        h.feed("a set-passcode uid=1000 secret=1234\n", on: admin)
        let recorded = h.recorder.events.count
        var atCommit: Int?
        h.onCommit = { atCommit = h.recorder.events.count }
        h.runJobs()
        XCTAssertEqual(atCommit, recorded)
        XCTAssertEqual(h.recorder.events.count, recorded + 1)
        XCTAssertEqual(h.reply("a", on: admin), "a OK")
    }
}
