// Preallocation (FORMAT.md "Preallocation"): the writer keeps zeros ahead of
// its records; readers take them for the clean end of the last segment; a
// finished segment is cut to its records before it is sealed; reopening goes
// on right after the last record. (A kill loses nothing written:
// OnDemandSyncTests.testRecordsWrittenBeforeSIGKILLAreAllThereWithPreallocation.)

import LocalAuthSystem
import XCTest

@testable import LocalAuthLog
import LocalAuthTestSupport

final class PreallocationTests: XCTestCase {
    private let step = 4096

    private func options(segmentSize: Int = 64 << 20, policy: SyncPolicy = .eachAppend) -> EventLog.Options {
        .init(segmentSize: segmentSize, syncPolicy: policy, preallocation: step)
    }

    private func fileSize(_ path: String) throws -> Int {
        let file = try FileDescriptor.open(path, .readOnly)
        defer { try? file.close() }
        return Int(try file.size())
    }

    func testZerosAheadOfTheRecordsAreTheCleanEndAndReopenGoesOnAfterTheLastRecord() throws {
        let directory = TemporaryDirectory()
        var log = try EventLog.open(directory.path, options: options())
        for index in 1...50 { try log.append(time: Fixture.time(index), keys: Fixture.keys(index), payload: Fixture.payload(index)) }
        try log.waitDurable(50)
        let path = segmentPath(directory, 1)
        let size = try fileSize(path)
        XCTAssertEqual(size % step, 0, "whole steps are preallocated")
        try log.close()
        let reader = try LogReader(logDirectory: directory.log, chain: .full)
        var seqs: [UInt64] = []
        while case .record(let record) = reader.next() { seqs.append(record.seq) }
        XCTAssertEqual(seqs, Array(1...50))
        guard case .end = reader.next() else { return XCTFail("the zeros are the clean end") }
        let dataEnd = reader.currentOffset
        XCTAssertLessThan(dataEnd, size, "zeros follow the records")
        XCTAssertTrue(try readFile(path)[dataEnd...].allSatisfy { $0 == 0 })

        for round in 0..<3 {
            log = try EventLog.open(directory.path, options: options())
            XCTAssertNil(log.recovery.tornTail, "round \(round)")
            XCTAssertEqual(log.recovery.lastSeq, UInt64(50 + 10 * round))
            for index in 1...10 {
                let seq = try log.append(time: Fixture.time(index), keys: Fixture.keys(index), payload: Fixture.payload(index))
                XCTAssertEqual(seq, UInt64(50 + 10 * round + index))
            }
            try log.close()
        }
        XCTAssertEqual(try readAll(directory).seqs, Array(1...80))
        XCTAssertTrue(try EventLog.verify(directory.path).isOK)
        // Tools that do not preallocate read and append to the same log.
        let plain = try EventLog.open(directory.path)
        XCTAssertNil(plain.recovery.tornTail)
        XCTAssertEqual(try plain.append(time: 1, keys: RecordKeys(type: 1), payload: [1]), 81)
        try plain.close()
        XCTAssertTrue(try EventLog.verify(directory.path).isOK)
    }

    func testFinishedSegmentsAreCutToTheirRecordsBeforeTheyAreSealed() throws {
        let directory = TemporaryDirectory()
        let log = try EventLog.open(directory.path, options: options(segmentSize: 3000, policy: .onDemand))
        for index in 1...400 {
            try log.append(time: Fixture.time(index), keys: Fixture.keys(index), payload: Fixture.payload(index))
            if index % 7 == 0 { try log.write() }
        }
        try log.close()
        let names = try LogReader(logDirectory: directory.log).segments
        XCTAssertGreaterThan(names.count, 5)
        for name in names.dropLast() {
            let seal = try XCTUnwrap(SegmentSeal.load(DiskStorage.shared, directory.log, name), "seal of \(name)")
            XCTAssertEqual(try fileSize(segmentPath(directory, name)), seal.length, "segment \(name) holds nothing after its records")
        }
        let fast = try EventLog.open(directory.path, options: .init(segmentSize: 3000, verification: .sealed))
        XCTAssertEqual(fast.recovery.lastSeq, 400)
        XCTAssertEqual(fast.recovery.sealsWritten, 0, "every seal matched its cut segment")
        try fast.close()
        XCTAssertTrue(try EventLog.verify(directory.path).isOK)
    }
}

/// Synced log pages leave the page cache (a DONTNEED hint after each sync
/// and at rotation): the log is written once and read back only at a start
/// or by an auditor. Checked with mincore(2) on a disk-backed file (tmpfs
/// pages cannot be dropped).
final class PageCacheTests: XCTestCase {
    func testSyncedRecordsLeaveThePageCacheAndTheZerosAheadStay() throws {
        // A hint, not a promise: under load (CI at 17:40, a load of 8 on two
        // cores) the kernel once kept all 242 pages. Without the hint every
        // page stays in every run, so three runs with none dropped is a fault.
        var kept: [String] = []
        for _ in 1...3 {
            guard let report = try syncedPagesStillCached() else { return }
            kept.append(report)
        }
        XCTFail("in three runs the synced pages stayed cached: \(kept.joined(separator: "; "))")
    }

    /// One run: nil when most synced pages left the cache, else what stayed.
    private func syncedPagesStillCached() throws -> String? {
        let directory = TemporaryDirectory()
        let log = try EventLog.open(directory.path, options: .init(syncPolicy: .onDemand, preallocation: 1 << 20))
        let payload = [UInt8](repeating: 7, count: 200)
        var seq: UInt64 = 0
        for _ in 0..<4000 { seq = try log.append(time: 1, keys: RecordKeys(type: 1), payload: payload) }
        log.commit(through: seq)
        try log.waitDurable(seq)
        // A sync thread drops what it synced just after it publishes the
        // seq (waitDurable can return in between): closing joins the threads.
        try log.close()
        let end = SegmentHeader.size + 4000 * RecordFormat.recordSize(payload: payload.count)
        let path = directory.log + "/" + SegmentName.fileName(1)
        let resident = try residentPages(path)
        XCTAssertEqual(resident.count, (1 << 20) / 4096, "preallocated to the next MiB")
        let synced = end / 4096  // whole pages below the synced end
        XCTAssertGreaterThan(synced, 200, "the test writes ~1 MB")
        // A hint, not a promise: the kernel skips pages still batched on
        // another CPU's LRU list (the writing thread's). Without the hint
        // every page stays (memory is plentiful); with it most go.
        let stillCached = resident[..<synced].filter { $0 }.count
        // The zeros ahead of the records are where the next records go: kept.
        let ahead = resident[(synced + 1)...]
        XCTAssertGreaterThan(ahead.filter { $0 }.count, ahead.count / 2, "zeros ahead dropped")
        // Nothing was lost by dropping them: the records read back from disk.
        XCTAssertEqual(try positions(directory).count, 4000)
        return stillCached < synced * 3 / 4 ? nil : "\(stillCached) of \(synced) synced pages still cached"
    }

    /// Syncs that cover less than `LogWriter.dropStep` leave their pages:
    /// the hint waits for a step of synced bytes instead of sitting between
    /// every fdatasync and the next (many small syncs under figure 2's load).
    func testSyncsSmallerThanTheDropStepKeepTheirPages() throws {
        let directory = TemporaryDirectory()
        let log = try EventLog.open(directory.path, options: .init(syncPolicy: .onDemand, preallocation: 1 << 20))
        let payload = [UInt8](repeating: 7, count: 200)
        var seq: UInt64 = 0
        for _ in 0..<5 {
            for _ in 0..<80 { seq = try log.append(time: 1, keys: RecordKeys(type: 1), payload: payload) }
            log.commit(through: seq)
            try log.waitDurable(seq)
        }
        let end = SegmentHeader.size + 400 * RecordFormat.recordSize(payload: payload.count)
        XCTAssertLessThan(end, LogWriter.dropStep, "the test stays below one step")
        let synced = end / 4096
        XCTAssertGreaterThan(synced, 20)
        let resident = try residentPages(directory.log + "/" + SegmentName.fileName(1))
        XCTAssertEqual(resident[..<synced].filter { $0 }.count, synced, "no synced page dropped before a step")
        try log.close()
    }

    /// mincore(2) of the whole file: one Bool per page.
    private func residentPages(_ path: String) throws -> [Bool] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw SystemError.current("open", path: path) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemError.current("fstat", path: path) }
        let size = Int(info.st_size)
        guard let map = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), map != MAP_FAILED else {
            throw SystemError.current("mmap", path: path)
        }
        defer { munmap(map, size) }
        var vector = [UInt8](repeating: 0, count: (size + 4095) / 4096)
        guard mincore(map, size, &vector) == 0 else { throw SystemError.current("mincore", path: path) }
        return vector.map { $0 & 1 != 0 }
    }
}
