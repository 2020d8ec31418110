// The log's claim on file system space (SpaceClaim.swift, F-16): what the
// appended records will take once written, counted at append. The daemon's
// space reserve (S-48) subtracts it from the free space of its last look, so
// it must never fall below what the files really grow by, and should not
// run far above it either (that refuses users early).

import Glibc
import LocalAuthSystem
import XCTest

@testable import LocalAuthLog
import LocalAuthTestSupport

final class SpaceClaimTests: XCTestCase {
    private let block = Int64(SpaceClaim.block)

    // MARK: - The model alone

    func test_S48_givenAPreallocatedStep_whenRecordsLandInsideIt_thenNothingIsClaimed() {
        var claim = SpaceClaim(allocated: 8192, step: 8192)
        claim.extend(to: 100)
        claim.extend(to: 8191)
        XCTAssertEqual(claim.total, 0, "statvfs counted the zeros already")
    }

    func test_S48_givenARecordPastTheAllocatedEnd_thenTheWholeNextStepIsClaimedInBlocks() {
        var claim = SpaceClaim(allocated: 8192, step: 32768)
        claim.extend(to: 8200)
        XCTAssertEqual(claim.total, 32768 - 8192, "up to the step after the record, as the appender writes it")
        claim.extend(to: 20000)
        XCTAssertEqual(claim.total, 32768 - 8192, "inside the new step")
    }

    func test_S48_givenARecordEndingExactlyAtTheAllocatedEnd_thenTheNextStepIsClaimed() {
        // The appender preallocates past a chunk that ends where its zeros end.
        var claim = SpaceClaim(allocated: 32768, step: 32768)
        claim.extend(to: 32768)
        XCTAssertEqual(claim.total, 32768)
    }

    func test_S48_givenAnUnalignedStartAndNoPreallocation_thenRecordsClaimTheBlocksTheyStart() {
        var claim = SpaceClaim(allocated: 100, step: 0)
        claim.extend(to: 4000)
        XCTAssertEqual(claim.total, 0, "still in the file's first block")
        claim.extend(to: 4097)
        XCTAssertEqual(claim.total, block)
        claim.extend(to: 3 * 4096 + 1)
        XCTAssertEqual(claim.total, 3 * block)
    }

    func test_S48_givenANewSegment_thenItsHeaderAndTheSealClaimABlockEach_andItsFirstRecordAStep() {
        var claim = SpaceClaim(allocated: 32768, step: 32768)
        claim.newSegment(headerSize: 64)
        XCTAssertEqual(claim.total, 2 * block)
        claim.extend(to: 64 + 300)
        XCTAssertEqual(claim.total, 2 * block + 32768 - block, "the step, its first block already counted with the header")
    }

    // MARK: - Against a real log's files

    /// Bytes the files of the log directory occupy (st_blocks).
    private func occupied(_ directory: TemporaryDirectory) throws -> Int64 {
        var total: Int64 = 0
        for name in try Directory.entries(directory.log) {
            var info = stat()
            XCTAssertEqual(stat(directory.log + "/" + name, &info), 0, name)
            total += Int64(info.st_blocks) * 512
        }
        return total
    }

    func test_S48_givenAPreallocatingLogAcrossSegments_whenWritten_thenTheClaimNeverFallsBelowTheFilesGrowth() throws {
        let directory = TemporaryDirectory()
        let step = 32 << 10, segmentSize = 256 << 10
        let log = try EventLog.open(directory.path, options: .init(
            segmentSize: segmentSize, syncPolicy: .onDemand, preallocation: step))
        let before = try occupied(directory)
        XCTAssertEqual(log.bytesClaimed, 0)
        var rotations = 0
        var segments = 1
        var generator = SeededGenerator(seed: 16)
        for round in 0..<400 {
            // Turns of 1..40 records of 0..1500 bytes, written at the turn's end.
            for _ in 0..<Int.random(in: 1...40, using: &generator) {
                let payload = [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: Int.random(in: 0...1500, using: &generator))
                try log.append(time: Int64(round), keys: RecordKeys(type: 1), payload: payload)
            }
            let claimed = log.bytesClaimed
            try log.write()
            let grown = try occupied(directory) - before
            XCTAssertGreaterThanOrEqual(claimed, grown, "round \(round): claimed \(claimed), the files grew \(grown)")
            let now = try LogReader(logDirectory: directory.log).segments.count
            rotations += now - segments
            segments = now
            // Above it by the zeros cut off finished segments (a step each, not
            // given back) and the open segment's unused zeros, at most.
            XCTAssertLessThanOrEqual(claimed - grown, Int64((rotations + 1) * (step + 2 * SpaceClaim.block)), "round \(round)")
        }
        XCTAssertGreaterThan(rotations, 20, "the test crossed many segments")
        try log.close()
        XCTAssertTrue(try EventLog.verify(directory.path).isOK)
    }

    func test_S48_givenRecordsAppendedButNotWritten_thenTheWrittenClaimLagsUntilTheyAreWritten() throws {
        let directory = TemporaryDirectory()
        let log = try EventLog.open(directory.path, options: .init(syncPolicy: .onDemand, preallocation: 32 << 10))
        try log.append(time: 1, keys: RecordKeys(type: 1), payload: [UInt8](repeating: 1, count: 100))
        XCTAssertEqual(log.bytesClaimed, 32 << 10 - 4096, "the first step (its first block held the header)")
        XCTAssertEqual(log.bytesClaimedWritten, 0, "nothing on the file yet: a look's free space does not show it")
        try log.write()
        XCTAssertEqual(log.bytesClaimedWritten, log.bytesClaimed)
        try log.close()
    }

    func test_S48_givenALogReopenedOverPreallocatedZeros_thenRecordsInThemClaimNothing() throws {
        let directory = TemporaryDirectory()
        let options = EventLog.Options(segmentSize: 64 << 20, syncPolicy: .onDemand, preallocation: 64 << 10)
        var log = try EventLog.open(directory.path, options: options)
        try log.append(time: 1, keys: RecordKeys(type: 1), payload: [1, 2, 3])
        try log.close()
        log = try EventLog.open(directory.path, options: options)
        for index in 0..<100 { try log.append(time: 2, keys: RecordKeys(type: 1), payload: [UInt8](repeating: 7, count: 100 + index)) }
        XCTAssertEqual(log.bytesClaimed, 0, "~20 KB of records inside the 64 KiB the first writer preallocated")
        try log.close()
    }
}
