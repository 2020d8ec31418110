// The sealed segments' hashes computed on several threads at open
// (SealedHashing): the same probe as one pass on the caller's thread for any
// number of workers, and the fast open still refuses a byte changed in any
// sealed segment, naming the first bad one in log order whichever thread
// hashed it and whenever it finished (S-49, FORMAT.md "Seals").

import LocalAuthSystem
import XCTest

@testable import LocalAuthLog
import LocalAuthTestSupport

final class SealedHashingTests: XCTestCase {
    private let segmentSize = 600
    private let count = 200

    private func sealedPaths(_ directory: TemporaryDirectory) throws -> [String] {
        try LogReader(logDirectory: directory.log).segments.dropLast().map { segmentPath(directory, $0) }
    }

    func testEveryWorkerCountGivesTheProbesOfOnePassOnTheCaller() throws {
        let directory = TemporaryDirectory(inMemory: true)
        try makeLog(directory, count: count, segmentSize: segmentSize)
        let paths = try sealedPaths(directory)
        XCTAssertGreaterThan(paths.count, 8, "enough segments for every worker to take several")
        let expected = try paths.map { path throws -> (ChainHead, Int) in
            let probe = try SealedSegmentProbe.run(DiskStorage.shared, path)
            return (probe.head, probe.length)
        }
        for (path, (head, length)) in zip(paths, expected) {
            let seal = try XCTUnwrap(SegmentSeal.load(DiskStorage.shared, directory.log, try XCTUnwrap(SegmentName.parse(
                String(path.split(separator: "/").last!), suffix: SegmentName.segmentSuffix))))
            XCTAssertEqual(head, seal.chainHead, "the probe is the seal's chain head")
            XCTAssertEqual(length, seal.length)
        }
        for workers in [1, 2, 3, 8, 100] {
            let hashing = SealedHashing(storage: DiskStorage.shared, paths: paths, workers: workers)
            // Asked for out of order too: the last first, then the rest.
            for index in [paths.count - 1] + Array(0..<paths.count) {
                guard case .success(let probe) = hashing.result(index) else { return XCTFail("\(workers) workers: \(index) failed") }
                XCTAssertEqual(probe.head, expected[index].0, "\(workers) workers, segment \(index)")
                XCTAssertEqual(probe.length, expected[index].1, "\(workers) workers, segment \(index)")
            }
            hashing.stop()
        }
    }

    func testAnUnreadableSegmentIsAFailureOfItsOwnProbeOnly() throws {
        let directory = TemporaryDirectory(inMemory: true)
        try makeLog(directory, count: count, segmentSize: segmentSize)
        var paths = try sealedPaths(directory)
        paths[2] = directory.log + "/no-such.seg"
        let hashing = SealedHashing(storage: DiskStorage.shared, paths: paths, workers: 2)
        defer { hashing.stop() }
        guard case .failure = hashing.result(2) else { return XCTFail("a missing file is a failure") }
        guard case .success = hashing.result(3) else { return XCTFail("the next segment is still hashed") }
    }

    /// A byte flipped in the first, a middle and the last sealed segment at
    /// once: the fast open names the first, as the full open and verify do.
    func test_S49_byteFlippedInSeveralSealedSegmentsStopsTheOpenAtTheFirst() throws {
        let directory = TemporaryDirectory(inMemory: true)
        try makeLog(directory, count: count, segmentSize: segmentSize)
        let names = try LogReader(logDirectory: directory.log).segments
        let sealed = Array(names.dropLast())
        for (first, also) in [(sealed[0], [sealed[sealed.count / 2], sealed.last!]), (sealed.last!, []), (sealed[sealed.count / 2], [sealed.last!])] {
            var originals: [String: [UInt8]] = [:]
            for segment in [first] + also {
                let path = segmentPath(directory, segment)
                let bytes = try readFile(path)
                originals[path] = bytes
                try flipBit(path, at: SegmentHeader.size + 30, bit: 3)  // inside the first record's keys
            }
            for readOnly in [true, false] {
                XCTAssertThrowsError(try EventLog.open(directory.path, options: .init(
                    segmentSize: segmentSize, verification: .sealed, readOnly: readOnly))) { error in
                    guard case LogError.untrustworthy(let corruption) = error else { return XCTFail("expected untrustworthy, got \(error)") }
                    XCTAssertEqual(corruption.segment, first, "\(corruption)")
                    XCTAssertEqual(try? EventLog.verify(directory.path).corruption, corruption, "the same record as verify")
                }
            }
            for (path, bytes) in originals { try writeFile(path, bytes) }
        }
        let log = try EventLog.open(directory.path, options: .init(segmentSize: segmentSize, verification: .sealed))
        XCTAssertEqual(log.recovery.sealedSegmentsTrusted, sealed.count)
        XCTAssertEqual(log.lastSeq, UInt64(count))
        try log.close()
    }
}
