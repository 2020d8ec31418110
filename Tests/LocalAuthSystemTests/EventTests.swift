import Glibc
import LocalAuthSystem
import XCTest

final class EventTests: XCTestCase {
    func testEpollReportsReadability() throws {
        let epoll = try Epoll(capacity: 8)
        let (a, b) = try UnixSocket.pair()
        defer {
            try? a.close()
            try? b.close()
        }
        try epoll.add(b, events: [.readable, .readHangUp], data: 77)
        XCTAssertTrue(try epoll.wait(timeoutMilliseconds: 0).isEmpty)

        _ = try a.send([1, 2, 3])
        let ready = try epoll.wait(timeoutMilliseconds: 5000)
        XCTAssertEqual(ready.count, 1)
        XCTAssertEqual(ready.first?.data, 77)
        XCTAssertTrue(ready.first?.events.contains(.readable) ?? false)

        try epoll.modify(b, events: .writable, data: 78)
        XCTAssertEqual(try epoll.wait(timeoutMilliseconds: 5000).map(\.data), [78])
        try epoll.remove(b)
        XCTAssertTrue(try epoll.wait(timeoutMilliseconds: 0).isEmpty)
        XCTAssertThrowsError(try epoll.remove(b)) { error in
            XCTAssertEqual((error as? SystemError)?.call, "epoll_ctl(DEL)")
        }
    }

    func testEventFDWakesEpollFromAnotherThread() throws {
        let epoll = try Epoll()
        let wake = try EventFD()
        defer { try? wake.close() }
        try epoll.add(wake.fileDescriptor, events: .readable, data: 1)
        XCTAssertNil(try wake.drain())

        let worker = Thread { try? wake.post(2) }
        worker.start()
        let ready = try epoll.wait(timeoutMilliseconds: 10_000)
        XCTAssertEqual(ready.map(\.data), [1])
        try wake.post()
        XCTAssertEqual(try wake.drain(), 3)
        XCTAssertNil(try wake.drain())
    }

    func testTimerFires() throws {
        let epoll = try Epoll()
        let timer = try TimerFD()
        defer { try? timer.close() }
        try epoll.add(timer.fileDescriptor, events: .readable, data: 9)
        XCTAssertNil(try timer.readExpirations())
        try timer.arm(afterNanoseconds: 1_000_000)
        XCTAssertEqual(try epoll.wait(timeoutMilliseconds: 10_000).map(\.data), [9])
        XCTAssertEqual(try timer.readExpirations(), 1)

        try timer.arm(afterNanoseconds: 1_000_000, intervalNanoseconds: 1_000_000)
        XCTAssertEqual(try epoll.wait(timeoutMilliseconds: 10_000).map(\.data), [9])
        XCTAssertGreaterThanOrEqual(try timer.readExpirations() ?? 0, 1)
        try timer.disarm()
    }

    func testSignalFDReadsABlockedSignal() throws {
        let signals = try SignalFD(signals: [SIGUSR1])
        defer { try? signals.close() }
        XCTAssertNil(try signals.nextSignal())
        raise(SIGUSR1)  // directed at this thread, where it is now blocked
        XCTAssertEqual(try signals.nextSignal(), SIGUSR1)
        XCTAssertNil(try signals.nextSignal())
    }

    func testClocks() {
        XCTAssertGreaterThan(WallClock.nowMicros(), 1_600_000_000_000_000)
        let first = MonotonicClock.nowNanos()
        XCTAssertGreaterThanOrEqual(MonotonicClock.nowNanos(), first)
    }
}
