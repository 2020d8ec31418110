// SyncPolicy.onDemand (the daemon's): `append` only buffers; `write()` chains
// and pwrites on the caller's thread (records then survive a kill of the
// process, not a power cut); the sync thread fdatasyncs only what
// `commit(through:)`, `waitDurable` or `close` ask for. Segment rotation then
// happens on the caller's thread inside `write()` while the sync thread
// fdatasyncs on a duplicated descriptor. Failures of either thread stop the
// writer once, and nothing acknowledged durable is lost.

import Dispatch
import Foundation
import Glibc
import LocalAuthSystem
import Synchronization
import XCTest

@testable import LocalAuthLog
import LocalAuthTestSupport

/// What the log's hooks were called with, in order.
final class LogHooks: Sendable {
    private let durable = Mutex<[UInt64]>([])
    private let failures = Mutex<[WriteFailure]>([])
    /// "D <seq>" and "F <firstNotDurable>" in the order the hooks ran.
    private let order = Mutex<[String]>([])

    var durableSeqs: [UInt64] { durable.withLock { $0 } }
    var writeFailures: [WriteFailure] { failures.withLock { $0 } }
    var calls: [String] { order.withLock { $0 } }

    func options(segmentSize: Int = 64 << 20, policy: SyncPolicy = .onDemand) -> EventLog.Options {
        .init(segmentSize: segmentSize, syncPolicy: policy, onDurable: { [self] seq in
            durable.withLock { $0.append(seq) }
            order.withLock { $0.append("D \(seq)") }
        }, onFailure: { [self] failure in
            failures.withLock { $0.append(failure) }
            order.withLock { $0.append("F \(failure.firstNotDurable)") }
        })
    }
}

/// Samples `durableSeq` (and `lastSeq`) on a thread of its own until `finish`:
/// durableSeq never goes back and never passes what was appended.
final class DurableWatch: Sendable {
    private let stop = Atomic<Bool>(false)
    private let problems = Mutex<[String]>([])
    private let samples = Atomic<Int>(0)
    private let done = DispatchSemaphore(value: 0)

    init(_ log: EventLog) {
        let thread = Thread { [self] in
            var previous: UInt64 = 0
            while !stop.load(ordering: .relaxed) {
                let durable = log.durableSeq
                let appended = log.lastSeq
                if durable < previous { problems.withLock { $0.append("durableSeq went back from \(previous) to \(durable)") } }
                if durable > appended { problems.withLock { $0.append("durableSeq \(durable) passed lastSeq \(appended)") } }
                previous = durable
                samples.add(1, ordering: .relaxed)
                usleep(20)
            }
            done.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Stops the thread; returns (problems, number of samples).
    /// A loaded machine may not have run the thread at all yet: wait for its
    /// first sample, so that "it watched" never depends on the scheduler.
    func finish() -> (problems: [String], samples: Int) {
        while samples.load(ordering: .relaxed) == 0 { usleep(100) }
        stop.store(true, ordering: .relaxed)
        done.wait()
        return (problems.withLock { $0 }, samples.load(ordering: .relaxed))
    }
}

final class OnDemandSyncTests: XCTestCase {
    override func tearDown() {
        FaultInjection.reset()
        super.tearDown()
    }

    // MARK: Helpers

    @discardableResult
    private func append(_ log: EventLog, _ index: Int) throws -> UInt64 {
        try log.append(time: Fixture.time(index), keys: Fixture.keys(index), payload: Fixture.payload(index))
    }

    /// Polls `condition` (safety net `timeout` seconds, not a timing assertion).
    private func eventually(
        _ what: String, timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line, _ condition: () -> Bool
    ) {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { return XCTFail("never happened: \(what)", file: file, line: line) }
            usleep(1_000)
        }
    }

    /// A copy of the log directory's files as they are now (what a killed
    /// process leaves: the page cache, not the disk, is what a copy reads).
    private func copyOfLog(_ directory: TemporaryDirectory) throws -> TemporaryDirectory {
        let copy = TemporaryDirectory()
        XCTAssertEqual(mkdir(copy.log, 0o750), 0)
        for name in try Directory.entries(directory.log) {
            try writeFile(copy.log + "/" + name, try readFile(directory.log + "/" + name))
        }
        return copy
    }

    /// Every finished segment has a seal that describes it (FORMAT.md
    /// "Seals"), the last one has none. Read-only: run it before any
    /// writable open, which would write missing seals itself.
    private func assertSealed(_ directory: TemporaryDirectory, file: StaticString = #filePath, line: UInt = #line) throws {
        let names = try LogReader(logDirectory: directory.log).segments
        for (index, name) in names.enumerated() {
            guard index < names.count - 1 else {
                XCTAssertFalse(File.exists(SegmentSeal.path(directory.log, name)), "the last segment is not sealed", file: file, line: line)
                continue
            }
            guard let seal = SegmentSeal.load(DiskStorage.shared, directory.log, name) else {
                XCTFail("segment \(name) has a successor but no seal", file: file, line: line)
                continue
            }
            let bytes = try readFile(segmentPath(directory, name))
            XCTAssertEqual(seal.firstSeq, name, file: file, line: line)
            XCTAssertEqual(seal.lastSeq, names[index + 1] - 1, "seal of \(name)", file: file, line: line)
            XCTAssertEqual(seal.length, bytes.count, "seal of \(name)", file: file, line: line)
            XCTAssertEqual(seal.fileCRC, CRC32C.checksum(bytes), "seal of \(name)", file: file, line: line)
            let next = try readFile(segmentPath(directory, names[index + 1]))
            XCTAssertEqual(next.withUnsafeBytes { SegmentHeader.decode($0) }?.chainBefore, seal.chainHead,
                           "seal of \(name) and the next header agree", file: file, line: line)
        }
    }

    /// The closed log holds exactly seqs 1...count: the seals first (before a
    /// writable open could write missing ones), the full chain, verify, the
    /// fast open agreeing with the full one, then a writable reopen.
    private func assertWholeLog(
        _ directory: TemporaryDirectory, count: Int, segmentSize: Int, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        try assertSealed(directory, file: file, line: line)
        let (seqs, last) = try readAll(directory)
        XCTAssertEqual(seqs, Array(1...UInt64(count)), "every seq once, in order", file: file, line: line)
        guard case .end = last else { return XCTFail("the log ends with \(last)", file: file, line: line) }
        let report = try EventLog.verify(directory.path)
        XCTAssertTrue(report.isOK, "\(report)", file: file, line: line)
        XCTAssertEqual(report.records, UInt64(count), file: file, line: line)
        XCTAssertEqual(report.lastSeq, UInt64(count), file: file, line: line)
        XCTAssertEqual(report.sealsChecked, report.segments - 1, "\(report)", file: file, line: line)
        XCTAssertNil(report.tornTail, file: file, line: line)
        let full = try EventLog.open(directory.path, options: .init(segmentSize: segmentSize, readOnly: true))
        let fast = try EventLog.open(directory.path, options: .init(segmentSize: segmentSize, verification: .sealed, readOnly: true))
        XCTAssertEqual(fast.recovery.sealedSegmentsTrusted, report.segments - 1, file: file, line: line)
        XCTAssertEqual(fast.recovery.lastSeq, UInt64(count), file: file, line: line)
        XCTAssertEqual(try fast.chainHead(at: UInt64(count)), try full.chainHead(at: UInt64(count)), file: file, line: line)
        let reopened = try EventLog.open(directory.path, options: .init(segmentSize: segmentSize, syncPolicy: .onDemand))
        XCTAssertEqual(reopened.recovery.lastSeq, UInt64(count), file: file, line: line)
        XCTAssertNil(reopened.recovery.tornTail, file: file, line: line)
        XCTAssertEqual(reopened.recovery.sealsWritten, 0, "the writer sealed every finished segment itself", file: file, line: line)
        try reopened.close()
    }

    private func writeFailure(_ error: Error, file: StaticString = #filePath, line: UInt = #line) -> WriteFailure? {
        guard case LogError.writeFailed(let failure) = error else {
            XCTFail("expected writeFailed, got \(error)", file: file, line: line)
            return nil
        }
        return failure
    }

    // MARK: (a) Written but not durable

    func testAppendOnlyBuffersAndNothingBecomesDurableUnlessAsked() throws {
        let directory = TemporaryDirectory()
        try makeLog(directory, count: 5)
        let hooks = LogHooks()
        let log = try EventLog.open(directory.path, options: hooks.options())
        XCTAssertEqual(log.durableSeq, 5)
        let kicks = log.syncKicks
        for index in 6...15 { XCTAssertEqual(try append(log, index), UInt64(index)) }
        XCTAssertEqual(log.lastSeq, 15)
        // Nobody asked: the sync threads, which only wake when asked, were not.
        XCTAssertEqual(log.syncKicks, kicks, "an append alone asks the sync threads for nothing")
        XCTAssertEqual(log.durableSeq, 5, "an append alone is not made durable")
        XCTAssertEqual(hooks.durableSeqs, [], "onDurable is not called for what nobody asked")
        XCTAssertEqual(try readAll(directory).seqs, Array(1...5), "an append alone writes nothing to the file")
        // The log's own reads see the records still in memory.
        let contextA = (1...15).filter { Fixture.keys($0).context == Fixture.contextA }.map(UInt64.init)
        XCTAssertEqual(try log.history(context: Fixture.contextA).map(\.seq), contextA)
        try log.close()
        XCTAssertEqual(log.durableSeq, 15)
    }

    func testWriteMakesRecordsReadableAndReopenableWithoutMakingThemDurable() throws {
        let directory = TemporaryDirectory()
        try makeLog(directory, count: 5)
        let hooks = LogHooks()
        let log = try EventLog.open(directory.path, options: hooks.options())
        let kicks = log.syncKicks
        for index in 6...15 { try append(log, index) }
        try log.write()
        // Written: on the file (page cache) with the whole chain...
        let (seqs, last) = try readAll(directory)
        XCTAssertEqual(seqs, Array(1...15))
        guard case .end = last else { return XCTFail("\(last)") }
        // ...so what a kill of the process leaves opens whole...
        let copy = try copyOfLog(directory)
        let reopened = try EventLog.open(copy.path)
        XCTAssertEqual(reopened.recovery.lastSeq, 15)
        XCTAssertNil(reopened.recovery.tornTail)
        try reopened.close()
        XCTAssertTrue(try EventLog.verify(copy.path).isOK)
        // ...but not durable: no fdatasync was asked for (the sync threads,
        // which only wake when asked, were not).
        XCTAssertEqual(log.syncKicks, kicks, "a write asks the sync threads for nothing")
        XCTAssertEqual(log.durableSeq, 5)
        XCTAssertEqual(hooks.durableSeqs, [])
        // A write with nothing new appended is harmless.
        try log.write()
        XCTAssertEqual(try readAll(directory).seqs, Array(1...15))
        try log.close()
        XCTAssertEqual(hooks.durableSeqs, [15])
    }

    func testRecordsWrittenBeforeSIGKILLAreAllThere() throws {
        try assertWrittenRecordsSurviveKills(preallocation: 0)
    }

    /// The same with zeros written ahead of the records (FORMAT.md "Preallocation").
    func testRecordsWrittenBeforeSIGKILLAreAllThereWithPreallocation() throws {
        try assertWrittenRecordsSurviveKills(preallocation: 4096)
    }

    private func assertWrittenRecordsSurviveKills(preallocation: Int) throws {
        var random = SeededGenerator(seed: 0x0d_e4a0d)
        let directory = TemporaryDirectory()
        var everWritten: UInt64 = 0
        for round in 0..<4 {
            let target = Int(random.next() % 400) + 1
            // `localauthlog-child written` appends for ever with `.onDemand`,
            // never asks for durability, and prints "W <seq>" after each write().
            let (maxWritten, seen) = try runChildUntilKilled(
                ["written", directory.path, String(preallocation)], prefix: "W ", lines: target)
            XCTAssertGreaterThanOrEqual(seen, target, "round \(round): the child wrote until killed")
            everWritten = max(everWritten, maxWritten)
            // Read-only first: what the kill left, before recovery touches it.
            let left = try EventLog.open(directory.path, options: .init(readOnly: true))
            XCTAssertGreaterThanOrEqual(left.recovery.lastSeq, maxWritten, "round \(round): a written record is missing after the kill")
            let log = try EventLog.open(directory.path)
            XCTAssertGreaterThanOrEqual(log.recovery.lastSeq, everWritten, "round \(round)")
            try log.close()
            try assertSealed(directory)
            let report = try EventLog.verify(directory.path)
            XCTAssertTrue(report.isOK, "round \(round): \(report)")
            XCTAssertEqual(report.records, report.lastSeq, "round \(round): no gaps")
        }
        XCTAssertGreaterThan(everWritten, 0)
    }

    // MARK: (b) commit(through:)

    func testCommitThroughDoesNotWaitAndOnDurableReportsAtLeastTheDemandedSeq() throws {
        let directory = TemporaryDirectory()
        let hooks = LogHooks()
        let log = try EventLog.open(directory.path, options: hooks.options())
        let watch = DurableWatch(log)
        for index in 1...20 { try append(log, index) }
        try log.write()
        log.commit(through: 10)
        eventually("seq 10 durable") { log.durableSeq >= 10 }
        eventually("onDurable called") { !hooks.durableSeqs.isEmpty }
        XCTAssertGreaterThanOrEqual(hooks.durableSeqs.first ?? 0, 10, "onDurable reports at least the demanded seq")
        // What was written before the demand shares its fdatasync.
        eventually("the written records ride along") { log.durableSeq == 20 }

        // A demand for records the owner did not write: the sync thread writes them.
        for index in 21...25 { try append(log, index) }
        log.commit(through: 23)
        eventually("seq 23 durable") { log.durableSeq >= 23 }
        XCTAssertGreaterThanOrEqual(try readAll(directory).seqs.count, 23)
        eventually("onDurable reports 23 or more") { (hooks.durableSeqs.last ?? 0) >= 23 }

        // Already durable: nothing to do, the sync threads are not even asked.
        let reports = hooks.durableSeqs.count
        let kicks = log.syncKicks
        log.commit(through: 5)
        XCTAssertEqual(log.syncKicks, kicks)
        // A demand for a seq nobody appended yet returns at once (it would
        // hang if commit waited) and makes nothing up: once a sync thread
        // has looked at it, nothing more is durable and nothing was reported.
        log.commit(through: 1_000)
        let asked = log.syncKicks
        eventually("a sync thread looked at the demand") { log.syncKicksServed >= asked }
        XCTAssertEqual(log.durableSeq, 25, "durableSeq never passes what was appended")
        XCTAssertEqual(hooks.durableSeqs.count, reports, "nothing new became durable, nothing was reported")

        try log.close()
        XCTAssertEqual(log.durableSeq, 25)
        let (problems, samples) = watch.finish()
        XCTAssertEqual(problems, [])
        XCTAssertGreaterThan(samples, 0)
        let durable = hooks.durableSeqs
        XCTAssertEqual(durable, durable.sorted(), "durableSeq only grows")
        XCTAssertEqual(Set(durable).count, durable.count, "each report is news")
        XCTAssertEqual(durable.last, 25)
        try assertWholeLog(directory, count: 25, segmentSize: 64 << 20)
    }

    /// F-22: Linux reports a writeback error once per open file
    /// description (the first fsync/fdatasync on it after the error). The
    /// two sync threads must each sync through a description of their own,
    /// not duplicates of one: else one thread could be told EIO and the
    /// other, syncing the same pages, success, and publish them durable
    /// before the first reports the failure. Shown by file offsets: a
    /// duplicate shares its offset with the original, a description of its
    /// own does not (the log writes with pwrite, so moving them is harmless).
    func test_S40_eachSyncThreadSyncsThroughAnOpenFileDescriptionOfItsOwn() throws {
        let directory = TemporaryDirectory()
        let hooks = LogHooks()
        let log = try EventLog.open(directory.path, options: hooks.options())
        let segment = segmentPath(directory, 1)
        func segmentDescriptors() -> [Int32] {
            let entries = (try? Directory.entries("/proc/self/fd")) ?? []
            return entries.compactMap { Int32($0) }.filter { fd in
                var buffer = [CChar](repeating: 0, count: 4096)
                let count = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count - 1)
                guard count > 0 else { return false }
                return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) == segment
            }
        }
        // Demands one after another until both threads hold a descriptor
        // (the appender's and one per thread; 10 s is a safety net).
        var index = 0
        let deadline = Date().addingTimeInterval(10)
        while segmentDescriptors().count < 3, Date() < deadline {
            index += 1
            try append(log, index)
            try log.write()
            try log.waitDurable(UInt64(index))
        }
        let descriptors = segmentDescriptors()
        XCTAssertEqual(descriptors.count, 3, "the appender's descriptor and one for each sync thread: \(descriptors)")
        for (position, fd) in descriptors.enumerated() {
            XCTAssertEqual(lseek(fd, off_t(1000 + position), SEEK_SET), off_t(1000 + position))
        }
        for (position, fd) in descriptors.enumerated() {
            XCTAssertEqual(lseek(fd, 0, SEEK_CUR), off_t(1000 + position),
                           "descriptor \(fd) shares its open file description with another of \(descriptors)")
        }
        try log.close()
        XCTAssertEqual(hooks.writeFailures.count, 0)
        try assertWholeLog(directory, count: index, segmentSize: 64 << 20)
    }

    // MARK: (c) waitDurable

    func testWaitDurableOnAnUnwrittenSeqHasTheSyncThreadWriteAndSyncIt() throws {
        let directory = TemporaryDirectory()
        let hooks = LogHooks()
        let log = try EventLog.open(directory.path, options: hooks.options())
        for index in 1...3 { try append(log, index) }
        XCTAssertEqual(try readAll(directory).seqs, [], "nothing written yet")
        try log.waitDurable(2)
        XCTAssertGreaterThanOrEqual(log.durableSeq, 2)
        // The sync thread wrote everything appended, not just the waited seq.
        XCTAssertEqual(try readAll(directory).seqs, [1, 2, 3])
        eventually("onDurable reports 2 or more") { (hooks.durableSeqs.last ?? 0) >= 2 }
        try log.waitDurable(3)
        XCTAssertEqual(log.durableSeq, 3)
        // A seq that was never appended never becomes durable by waiting.
        XCTAssertThrowsError(try log.waitDurable(4)) { error in XCTAssertEqual(error as? LogError, .closed) }
        // Waiters on several threads, each for a seq nobody wrote.
        let seqs = try (4...40).map { try append(log, $0) }
        onThreads(8) { thread in
            for seq in seqs where Int(seq) % 8 == thread {
                do { try log.waitDurable(seq) } catch { XCTFail("waitDurable(\(seq)): \(error)") }
            }
        }
        XCTAssertEqual(log.durableSeq, 40)
        try log.close()
        try assertWholeLog(directory, count: 40, segmentSize: 64 << 20)
    }

    // MARK: (d) close

    func testCloseMakesEverythingDurableAndTheLogReopensWhole() throws {
        let directory = TemporaryDirectory()
        let hooks = LogHooks()
        let segmentSize = 2 << 10
        let count = 300
        let log = try EventLog.open(directory.path, options: hooks.options(segmentSize: segmentSize))
        // Some written by the owner (rotating on this thread), the rest only appended.
        for index in 1...count {
            try append(log, index)
            if index % 7 == 0 { try log.write() }
        }
        XCTAssertEqual(log.durableSeq, 0, "nobody asked before close")
        try log.close()
        XCTAssertEqual(log.durableSeq, UInt64(count))
        XCTAssertEqual(hooks.durableSeqs.last, UInt64(count), "onDurable ran before close returned")
        XCTAssertEqual(hooks.writeFailures, [])
        XCTAssertThrowsError(try append(log, 0)) { error in XCTAssertEqual(error as? LogError, .closed) }
        XCTAssertGreaterThan(try LogReader(logDirectory: directory.log).segments.count, 5, "rotations happened")
        try assertWholeLog(directory, count: count, segmentSize: segmentSize)
    }

    // MARK: (e) Stress

    func testRotationsInWriteWhileTheSyncThreadSyncsLoseNothingAndSealEverySegment() throws {
        let directory = TemporaryDirectory()
        let hooks = LogHooks()
        let segmentSize = 8 << 10
        let count = 4_000
        let log = try EventLog.open(directory.path, options: hooks.options(segmentSize: segmentSize))
        let watch = DurableWatch(log)
        let appending = Atomic<Bool>(true)
        let historyReads = Atomic<Int>(0)
        onThreads(2) { thread in
            if thread == 0 {
                defer { appending.store(false, ordering: .releasing) }
                var random = SeededGenerator(seed: 0x5eed_0e5)
                do {
                    for index in 1...count {
                        let seq = try log.append(time: Fixture.time(index), keys: Fixture.keys(index), payload: Fixture.payload(index))
                        XCTAssertEqual(seq, UInt64(index))
                        let dice = random.next() % 64
                        if dice < 24 { try log.write() }
                        if dice % 8 == 0 { log.commit(through: seq - min(seq - 1, random.next() % 40)) }
                        if dice == 63 {
                            try log.waitDurable(seq)
                            XCTAssertGreaterThanOrEqual(log.durableSeq, seq)
                        }
                    }
                    try log.write()
                } catch {
                    XCTFail("\(error)")
                }
            } else {
                // The index and reads while records move from memory to files and segments rotate.
                var previous: [UInt64] = []
                while appending.load(ordering: .acquiring) {
                    do {
                        let seqs = try log.history(context: Fixture.contextA).map(\.seq)
                        XCTAssertEqual(Array(seqs.prefix(previous.count)), previous, "history only grows at the end")
                        XCTAssertEqual(seqs, seqs.sorted())
                        previous = seqs
                        historyReads.add(1, ordering: .relaxed)
                    } catch {
                        XCTFail("history while writing: \(error)")
                        return
                    }
                    usleep(200)
                }
            }
        }
        try log.close()
        let (problems, samples) = watch.finish()
        XCTAssertEqual(problems, [])
        XCTAssertGreaterThan(samples, 0)
        XCTAssertGreaterThan(historyReads.load(ordering: .relaxed), 0)
        XCTAssertEqual(hooks.writeFailures, [])
        let durable = hooks.durableSeqs
        XCTAssertEqual(durable, durable.sorted())
        XCTAssertEqual(Set(durable).count, durable.count)
        XCTAssertEqual(durable.last, UInt64(count))
        XCTAssertGreaterThan(try LogReader(logDirectory: directory.log).segments.count, 20, "many rotations")
        try assertWholeLog(directory, count: count, segmentSize: segmentSize)
        let reopened = try EventLog.open(directory.path, options: .init(segmentSize: segmentSize))
        let contextA = (1...count).filter { Fixture.keys($0).context == Fixture.contextA }.map(UInt64.init)
        XCTAssertEqual(try reopened.history(context: Fixture.contextA).map(\.seq), contextA)
        try reopened.close()
    }

    // MARK: (f) Failures

    /// Seqs 1–5 written and durable, 6–8 appended only.
    private func logWithFiveDurableAndThreePending(_ directory: TemporaryDirectory, _ hooks: LogHooks) throws -> EventLog {
        let log = try EventLog.open(directory.path, options: hooks.options())
        for index in 1...5 { try append(log, index) }
        try log.write()
        try log.waitDurable(5)
        for index in 6...8 { try append(log, index) }
        return log
    }

    /// pwrite fails inside `write()` on the caller's thread.
    private func assertWriteFailureOnTheCallersThread(errno code: Int32, file: StaticString = #filePath, line: UInt = #line) throws {
        let directory = TemporaryDirectory()
        let hooks = LogHooks()
        let log = try logWithFiveDurableAndThreePending(directory, hooks)
        FaultInjection.fail(.pwrite, errno: code, times: nil)
        XCTAssertThrowsError(try log.write(), file: file, line: line) { error in
            guard let failure = writeFailure(error, file: file, line: line) else { return }
            XCTAssertEqual(failure.firstNotDurable, 6, file: file, line: line)
            XCTAssertEqual(failure.cause.errno, code, file: file, line: line)
            XCTAssertEqual(failure.cause.call, "pwrite", file: file, line: line)
        }
        // onFailure ran before write() threw: the daemon looks at its flag right after.
        XCTAssertEqual(hooks.writeFailures.map(\.firstNotDurable), [6], file: file, line: line)
        XCTAssertThrowsError(try append(log, 9), file: file, line: line) { error in
            XCTAssertEqual(self.writeFailure(error, file: file, line: line)?.firstNotDurable, 6, file: file, line: line)
        }
        XCTAssertThrowsError(try log.write(), "write keeps failing", file: file, line: line)
        log.commit(through: 8)
        XCTAssertThrowsError(try log.waitDurable(8), file: file, line: line) { error in
            XCTAssertEqual(self.writeFailure(error, file: file, line: line)?.firstNotDurable, 6, file: file, line: line)
        }
        XCTAssertThrowsError(try log.waitDurable(6), file: file, line: line)
        XCTAssertNoThrow(try log.waitDurable(5), "what was durable stays so", file: file, line: line)
        XCTAssertEqual(log.durableSeq, 5, file: file, line: line)
        XCTAssertThrowsError(try log.close(), file: file, line: line)
        XCTAssertEqual(hooks.writeFailures.count, 1, "onFailure exactly once", file: file, line: line)
        XCTAssertEqual(hooks.durableSeqs.last, 5, "nothing after the failure is acknowledged", file: file, line: line)
        FaultInjection.reset()
        let reopened = try EventLog.open(directory.path, options: .init(syncPolicy: .onDemand))
        XCTAssertEqual(reopened.recovery.lastSeq, 5, "the failed pwrite never reached the file", file: file, line: line)
        let next = try reopened.append(time: 0, keys: RecordKeys(type: 1), payload: [9])
        XCTAssertEqual(next, 6, file: file, line: line)
        try reopened.write()
        try reopened.waitDurable(next)
        try reopened.close()
        XCTAssertTrue(try EventLog.verify(directory.path).isOK, file: file, line: line)
    }

    func testEIOOnPwriteInWriteFailsTheWriterOnceAndLosesNothingAcknowledged() throws {
        try assertWriteFailureOnTheCallersThread(errno: EIO)
    }

    func testENOSPCOnPwriteInWriteFailsTheWriterOnceAndLosesNothingAcknowledged() throws {
        try assertWriteFailureOnTheCallersThread(errno: ENOSPC)
    }

    /// A rotation inside `write()` fails at each of its steps: before the
    /// seal (fdatasync of the finished segment), writing the seal (fsync),
    /// creating the next segment after the seal (its header's pwrite).
    func testRotationFailureInWriteLeavesALogThatReopensWhole() throws {
        let segmentSize = 600
        // 100-byte records: five fill a segment (64 + 500), the sixth starts the next.
        let payload = [UInt8](repeating: 7, count: 100 - RecordFormat.headerSize)
        for (operation, call) in [(FaultInjection.Operation.fdatasync, "fdatasync"), (.fsync, "fsync"), (.pwrite, "pwrite")] {
            let directory = TemporaryDirectory()
            let hooks = LogHooks()
            let log = try EventLog.open(directory.path, options: hooks.options(segmentSize: segmentSize))
            for _ in 1...5 { try log.append(time: 0, keys: RecordKeys(type: 1), payload: payload) }
            try log.write()
            try log.waitDurable(5)
            XCTAssertEqual(try LogReader(logDirectory: directory.log).segments, [1])
            for _ in 6...7 { try log.append(time: 0, keys: RecordKeys(type: 1), payload: payload) }
            FaultInjection.fail(operation, errno: EIO, times: nil)
            XCTAssertThrowsError(try log.write(), "\(operation)") { error in
                guard let failure = writeFailure(error) else { return }
                XCTAssertEqual(failure.firstNotDurable, 6, "\(operation)")
                XCTAssertEqual(failure.cause.call, call, "\(operation)")
            }
            XCTAssertEqual(hooks.writeFailures.count, 1, "\(operation)")
            XCTAssertThrowsError(try log.waitDurable(6), "\(operation)")
            XCTAssertThrowsError(try log.close(), "\(operation)")
            XCTAssertEqual(log.durableSeq, 5, "\(operation)")
            FaultInjection.reset()
            let reopened = try EventLog.open(directory.path, options: .init(segmentSize: segmentSize, syncPolicy: .onDemand))
            XCTAssertEqual(reopened.recovery.lastSeq, 5, "\(operation)")
            // Writing on: the rotation happens again, this time whole.
            for _ in 6...12 { try reopened.append(time: 0, keys: RecordKeys(type: 1), payload: payload) }
            try reopened.write()
            try reopened.close()
            XCTAssertEqual(try LogReader(logDirectory: directory.log).segments, [1, 6, 11], "\(operation)")
            try assertWholeLog(directory, count: 12, segmentSize: segmentSize)
        }
    }

    func testFdatasyncFailureOnTheSyncThreadAfterACommitFailsTheWriterOnce() throws {
        let directory = TemporaryDirectory()
        let hooks = LogHooks()
        let log = try logWithFiveDurableAndThreePending(directory, hooks)
        try log.write()
        FaultInjection.fail(.fdatasync, errno: EIO, times: nil)
        log.commit(through: 7)
        eventually("onFailure called") { !hooks.writeFailures.isEmpty }
        let failure = try XCTUnwrap(hooks.writeFailures.first)
        XCTAssertEqual(failure.firstNotDurable, 6)
        XCTAssertEqual(failure.cause.errno, EIO)
        XCTAssertEqual(failure.cause.call, "fdatasync")
        XCTAssertEqual(log.durableSeq, 5)
        XCTAssertThrowsError(try log.waitDurable(7)) { error in
            XCTAssertEqual(self.writeFailure(error), failure)
        }
        XCTAssertThrowsError(try append(log, 9)) { error in XCTAssertEqual(self.writeFailure(error), failure) }
        XCTAssertThrowsError(try log.write()) { error in XCTAssertEqual(self.writeFailure(error), failure) }
        XCTAssertNoThrow(try log.waitDurable(5))
        XCTAssertThrowsError(try log.close())
        XCTAssertEqual(hooks.writeFailures.count, 1, "onFailure exactly once")
        XCTAssertEqual(hooks.durableSeqs.last, 5)
        XCTAssertEqual(log.durableSeq, 5)
        FaultInjection.reset()
        // The records were written (not durable): the reopen may find them; it must find 1...5.
        let reopened = try EventLog.open(directory.path)
        XCTAssertGreaterThanOrEqual(reopened.recovery.lastSeq, 5)
        XCTAssertLessThanOrEqual(reopened.recovery.lastSeq, 8)
        try reopened.close()
        XCTAssertTrue(try EventLog.verify(directory.path).isOK)
    }

    /// The caller's `write()` fails while the sync thread is in an
    /// fdatasync it started before: after `onFailure` no seq may be reported
    /// durable (FORMAT.md "Durability": no seq after the last durable one is
    /// ever acknowledged), and `firstNotDurable` stays `durableSeq + 1`.
    func testNothingBecomesDurableAfterAWriteFailedOnTheCallersThread() throws {
        var random = SeededGenerator(seed: 0xfa11)
        var violations: [String] = []
        for round in 0..<40 {
            let directory = TemporaryDirectory()
            let hooks = LogHooks()
            let log = try EventLog.open(directory.path, options: hooks.options())
            for index in 1...50 { try append(log, index) }
            try log.write()
            log.commit(through: 50)  // the sync thread's write has nothing to do: only its fdatasync runs
            usleep(UInt32(random.next() % 400))
            FaultInjection.fail(.pwrite, errno: EIO, times: nil)
            try append(log, 51)
            XCTAssertThrowsError(try log.write())
            FaultInjection.reset()
            _ = try? log.waitDurable(50)
            XCTAssertThrowsError(try log.close())
            let failure = try XCTUnwrap(hooks.writeFailures.first)
            XCTAssertEqual(hooks.writeFailures.count, 1)
            // (onDurable may run after onFailure for a seq made durable before the failure.)
            let reported = hooks.durableSeqs.max() ?? 0
            if reported >= failure.firstNotDurable || log.durableSeq >= failure.firstNotDurable {
                violations.append("round \(round): hooks \(hooks.calls), durableSeq \(log.durableSeq), firstNotDurable \(failure.firstNotDurable)")
            }
        }
        XCTAssertEqual(violations, [], "seqs reported durable after the writer failed")
    }
}
