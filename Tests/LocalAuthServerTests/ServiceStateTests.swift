// ServiceState, the daemon's life as systemd sees it: a value, driven directly.
import XCTest
@testable import LocalAuthServer

final class ServiceStateTests: XCTestCase {
    func test_givenAWatchdog_thenAPingIsDueEveryHalfIntervalAndTheNextDeadlineSaysWhen() {
        var service = ServiceState()
        XCTAssertFalse(service.watchdogIsDue(at: 10_000_000_000))
        XCTAssertNil(service.nextDeadline)
        service.watchdogInterval = 2_000_000  // 2 s in µs
        XCTAssertTrue(service.watchdogIsDue(at: 10_000_000_000))
        XCTAssertEqual(service.nextDeadline, 11_000_000_001)
        XCTAssertFalse(service.watchdogIsDue(at: 11_000_000_000))
        XCTAssertTrue(service.watchdogIsDue(at: 11_000_000_001))
    }

    func test_S40_statusIsSentOnceASecondOnlyWhenItChangedAndNeverWhileOutputIsHeld() {
        var service = ServiceState()
        XCTAssertEqual(service.status(at: 1_000_000_000, held: { false }, { "a" }), "a")
        XCTAssertNil(service.status(at: 1_500_000_000, held: { false }, { "b" }), "not within a second")
        XCTAssertNil(service.status(at: 2_000_000_000, held: { false }, { "a" }), "unchanged")
        XCTAssertNil(service.status(at: 3_000_000_000, held: { true }, { XCTFail("made while held"); return "b" }))
        XCTAssertEqual(service.status(at: 3_000_000_000, held: { false }, { "b" }), "b")
    }

    func test_givenSignals_thenStopReloadAndTheTestHookAreWhatTheServiceAllows() {
        var service = ServiceState()
        XCTAssertNil(service.signal(.testHang), "the hook is off")
        service.testHangSeconds = 3
        XCTAssertEqual(service.signal(.testHang), 3)
        XCTAssertNil(service.signal(.reload))
        XCTAssertFalse(service.reloadIsDue(), "nothing to reload: asked and forgotten")
        service.canReload = true
        _ = service.signal(.reload)
        XCTAssertTrue(service.reloadIsDue())
        XCTAssertFalse(service.reloadIsDue(), "once per SIGHUP")
        _ = service.signal(.stop)
        XCTAssertTrue(service.isStopping)
        XCTAssertFalse(service.isStopped)
        service.stopped()
        XCTAssertTrue(service.isStopped)
    }
}
