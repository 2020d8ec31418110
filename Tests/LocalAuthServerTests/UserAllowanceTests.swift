// S-48's per-uid token bucket on its own, with the clock in the test's hands:
// the burst, the refill, rate 0, and a wall clock set back or forward (the
// bucket refills on the loop turn's wall clock, LogBudget.swift).
import LocalAuthCore
@testable import LocalAuthServer
import XCTest

final class UserAllowanceTests: XCTestCase {
    let second: Int64 = 1_000_000

    func test_S48_givenAFullBucket_whenABurstIsTaken_thenTheNextIsRefusedUntilTimeRefillsIt() {
        let bucket = UserAllowance(uid: 1000, burst: 5, now: 0)
        for index in 0..<5 { XCTAssertTrue(bucket.take(1, rate: 2, burst: 5, now: 0), "event \(index) of the burst") }
        XCTAssertFalse(bucket.take(1, rate: 2, burst: 5, now: 0))
        // Half a second at 2 per second: one event.
        XCTAssertTrue(bucket.take(1, rate: 2, burst: 5, now: second / 2))
        XCTAssertFalse(bucket.take(1, rate: 2, burst: 5, now: second / 2))
        // A refused request took nothing: a request of 3 fails whole, then 1 fits.
        XCTAssertFalse(bucket.take(3, rate: 2, burst: 5, now: second))
        XCTAssertTrue(bucket.take(1, rate: 2, burst: 5, now: second))
    }

    func test_S48_givenAnHourIdle_thenTheBucketHoldsNoMoreThanTheBurst() {
        let bucket = UserAllowance(uid: 1000, burst: 3, now: 0)
        XCTAssertTrue(bucket.take(3, rate: 10, burst: 3, now: 0))
        XCTAssertTrue(bucket.take(3, rate: 10, burst: 3, now: 3600 * second))
        XCTAssertFalse(bucket.take(1, rate: 10, burst: 3, now: 3600 * second))
    }

    func test_S48_givenTheClockSetBackADay_thenTheBucketStillRefillsFromThere() {
        let bucket = UserAllowance(uid: 1000, burst: 2, now: 86_400 * second)
        XCTAssertTrue(bucket.take(2, rate: 1, burst: 2, now: 86_400 * second))
        // Set back a day: no refill for the jump, and none stalled for a day.
        XCTAssertFalse(bucket.take(1, rate: 1, burst: 2, now: 0))
        XCTAssertTrue(bucket.take(1, rate: 1, burst: 2, now: second))
    }

    func test_S48_givenRateZero_thenNothingIsLimited() {
        let bucket = UserAllowance(uid: 1000, burst: 1, now: 0)
        for _ in 0..<1000 { XCTAssertTrue(bucket.take(5, rate: 0, burst: 1, now: 0)) }
    }

    func test_S48_aRecordIsIdleOnlyWithoutConnectionsPropertiesOrAnUnfilledBucket() {
        let bucket = UserAllowance(uid: 1000, burst: 2, now: 0)
        XCTAssertTrue(bucket.isIdle(rate: 1, burst: 2, now: 0))
        XCTAssertTrue(bucket.take(2, rate: 1, burst: 2, now: 0))
        XCTAssertFalse(bucket.isIdle(rate: 1, burst: 2, now: second), "half empty: reconnecting must not refill it")
        XCTAssertTrue(bucket.isIdle(rate: 1, burst: 2, now: 2 * second))
        bucket.propertyBytes = 10
        XCTAssertFalse(bucket.isIdle(rate: 1, burst: 2, now: 3 * second))
        bucket.propertyBytes = 0
        bucket.connections = 1
        XCTAssertFalse(bucket.isIdle(rate: 1, burst: 2, now: 3 * second))
    }
}
