// Group commit and failure: many threads append and wait on shared
// fdatasyncs; durableSeq only grows; every waited seq is there after reopen.
// ENOSPC and EIO (FaultInjection) stop the writer: the caller learns which
// seqs are not durable, later appends fail, nothing acknowledged is lost.

import Dispatch
import Glibc
import LocalAuthSystem
import Synchronization
import XCTest

@testable import LocalAuthLog
import LocalAuthTestSupport

final class GroupCommitTests: XCTestCase {
    override func tearDown() {
        FaultInjection.reset()
        super.tearDown()
    }

    func testManyThreadsAppendAndWait() throws {
        let directory = TemporaryDirectory()
        let reported = Mutex<[UInt64]>([])
        let log = try EventLog.open(directory.path, options: .init(segmentSize: 16 << 10, onDurable: { seq in
            reported.withLock { $0.append(seq) }
        }))
        let threads = 16
        let perThread = 60
        let waited = Mutex<[UInt64]>([])
        onThreads(threads) { thread in
            for index in 0..<perThread {
                do {
                    let seq = try log.append(time: Int64(index), keys: RecordKeys(type: UInt16(thread), uid: UInt32(thread)), payload: Fixture.payload(index))
                    try log.waitDurable(seq)
                    XCTAssertGreaterThanOrEqual(log.durableSeq, seq)
                    waited.withLock { $0.append(seq) }
                } catch {
                    XCTFail("\(error)")
                }
            }
        }
        try log.close()
        let total = threads * perThread
        XCTAssertEqual(Set(waited.withLock { $0 }), Set(1...UInt64(total)))
        let durable = reported.withLock { $0 }
        XCTAssertEqual(durable.last, UInt64(total))
        XCTAssertEqual(durable, durable.sorted())
        XCTAssertEqual(Set(durable).count, durable.count, "durableSeq strictly increases")
        XCTAssertLessThanOrEqual(durable.count, total)
        let reopened = try EventLog.open(directory.path)
        XCTAssertEqual(reopened.recovery.lastSeq, UInt64(total))
        for thread in 0..<threads { XCTAssertEqual(reopened.positions(uid: UInt32(thread)).count, perThread) }
        try reopened.close()
        XCTAssertTrue(try EventLog.verify(directory.path).isOK)
    }

    func testAppendIsNotBlockedAndCloseFlushes() throws {
        let directory = TemporaryDirectory()
        let log = try EventLog.open(directory.path)
        for index in 1...500 { try log.append(time: 0, keys: Fixture.keys(index), payload: Fixture.payload(index)) }
        XCTAssertEqual(log.lastSeq, 500)
        try log.close()
        XCTAssertThrowsError(try log.append(time: 0, keys: RecordKeys(type: 0), payload: [])) { error in
            XCTAssertEqual(error as? LogError, .closed)
        }
        XCTAssertEqual(try readAll(directory).seqs.count, 500)
    }

    private func assertFailure(
        _ operation: FaultInjection.Operation, errno code: Int32, segmentSize: Int = 64 << 20, records: Int = 2,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let directory = TemporaryDirectory()
        let failures = Mutex<[WriteFailure]>([])
        let log = try EventLog.open(directory.path, options: .init(segmentSize: segmentSize, onFailure: { failure in
            failures.withLock { $0.append(failure) }
        }))
        for index in 1...3 { try log.append(time: 0, keys: Fixture.keys(index), payload: Fixture.payload(index)) }
        try log.waitDurable(3)
        FaultInjection.fail(operation, errno: code, times: nil)
        var last: UInt64 = 0
        for index in 4..<(4 + records) {
            // The sync thread may fail before the loop ends: then appends throw.
            do {
                last = try log.append(time: 0, keys: Fixture.keys(index), payload: Fixture.payload(index))
            } catch LogError.writeFailed {
                break
            }
        }
        XCTAssertGreaterThanOrEqual(last, 4, file: file, line: line)
        XCTAssertThrowsError(try log.waitDurable(last), file: file, line: line) { error in
            guard case LogError.writeFailed(let failure) = error else { return XCTFail("\(error)", file: file, line: line) }
            // Whatever was durable before the failure stays so; nothing after is acknowledged.
            XCTAssertEqual(failure.firstNotDurable, log.durableSeq + 1, file: file, line: line)
            XCTAssertEqual(failure.cause.errno, code, file: file, line: line)
            XCTAssertTrue("\(error)".contains("seq \(failure.firstNotDurable)"), "\(error)", file: file, line: line)
        }
        let durable = log.durableSeq
        XCTAssertLessThan(durable, last, file: file, line: line)
        if operation != .fsync { XCTAssertEqual(durable, 3, file: file, line: line) }
        XCTAssertThrowsError(try log.append(time: 0, keys: RecordKeys(type: 0), payload: []), file: file, line: line)
        XCTAssertThrowsError(try log.close(), file: file, line: line)
        XCTAssertEqual(failures.withLock { $0.map(\.firstNotDurable) }, [durable + 1], file: file, line: line)
        FaultInjection.reset()
        // Recovery is close + open: acknowledged records are all there.
        let reopened = try EventLog.open(directory.path, options: .init(segmentSize: segmentSize))
        XCTAssertGreaterThanOrEqual(reopened.recovery.lastSeq, durable, file: file, line: line)
        let next = try reopened.append(time: 0, keys: RecordKeys(type: 1), payload: [9])
        XCTAssertEqual(next, reopened.recovery.lastSeq + 1, file: file, line: line)
        try reopened.waitDurable(next)
        try reopened.close()
        let report = try EventLog.verify(directory.path)
        XCTAssertTrue(report.isOK, "\(report)", file: file, line: line)
    }

    func testENOSPCOnWrite() throws { try assertFailure(.pwrite, errno: ENOSPC) }
    func testEIOOnWrite() throws { try assertFailure(.pwrite, errno: EIO) }
    func testEIOOnFdatasync() throws { try assertFailure(.fdatasync, errno: EIO) }
    func testENOSPCOnFdatasync() throws { try assertFailure(.fdatasync, errno: ENOSPC) }
    /// Rotation creates a segment with fsync: a failure there stops the writer too.
    func testFailureWhileCreatingSegment() throws {
        try assertFailure(.fsync, errno: ENOSPC, segmentSize: 300, records: 8)
    }
}
