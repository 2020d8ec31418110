// SensorPrompts, the sensor as the core sees it (S-43): which users' scans
// a real backend is asked for, and the PROMPT lines held until the reader
// is their user's. A value: these drive it directly.
import LocalAuthCore
import XCTest
@testable import LocalAuthServer

final class SensorPromptsTests: XCTestCase {
    func test_S43_givenARealReader_thenAPromptIsHeldUntilItsScanStartsAndSentAtOnceWhileItRuns() {
        var sensor = SensorPrompts()
        sensor.useReal(name: "fprintd", problem: nil)
        XCTAssertEqual(sensor.update(1000, waiting: true), .scan(1000))
        XCTAssertNil(sensor.update(1000, waiting: true), "asked once")
        XCTAssertTrue(sensor.hold(1000, [1], for: 16))
        XCTAssertTrue(sensor.hold(1000, [2], for: 16), "the newest line replaces the held one")
        let released = sensor.apply(.scanShown(1000))
        XCTAssertEqual(released?.connection, 16)
        XCTAssertEqual(released?.bytes, [2])
        XCTAssertFalse(sensor.hold(1000, [3], for: 16), "the reader is theirs: sent at once")
        XCTAssertTrue(sensor.hold(1001, [4], for: 17), "another user waits for the reader")
        _ = sensor.apply(.scanEnded(1000))
        XCTAssertTrue(sensor.hold(1000, [5], for: 16), "a new scan must start first")
    }

    func test_S43_givenAStoppedScanOrAFailedReader_thenItsHeldPromptIsNeverSent() {
        var sensor = SensorPrompts()
        sensor.useReal(name: "fprintd", problem: nil)
        _ = sensor.update(1000, waiting: true)
        _ = sensor.update(1001, waiting: true)
        XCTAssertTrue(sensor.hold(1000, [1], for: 16))
        XCTAssertTrue(sensor.hold(1001, [2], for: 17))
        XCTAssertEqual(sensor.update(1000, waiting: false), .stopScan(1000))
        XCTAssertNil(sensor.apply(.scanShown(1000)))
        _ = sensor.apply(.promptsDropped(nil))
        XCTAssertNil(sensor.apply(.scanShown(1001)))
        XCTAssertEqual(sensor.stopAll(), [.stopScan(1001)])
        XCTAssertTrue(sensor.scanning.isEmpty)
    }

    func test_givenTheSimulatedSensor_thenNothingIsHeldAndTheBackendIsNeverAsked() {
        var sensor = SensorPrompts()
        XCTAssertNil(sensor.update(1000, waiting: true))
        XCTAssertEqual(sensor.scanning, [1000])
        XCTAssertFalse(sensor.hold(1000, [1], for: 16))
        XCTAssertEqual(sensor.stopAll(), [])
        XCTAssertEqual(sensor.statusFields.map(\.1), ["simulated", "", "true"])
    }
}
