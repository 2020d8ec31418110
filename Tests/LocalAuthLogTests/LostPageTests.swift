// F-47 (the simulator, seed 21 at step 2069 and seed 18 at step 2542, once
// its storage lost unsynced pages each on its own as AsyncFileNonDurable
// does): writeback does not keep write order, so a power cut may keep a
// later page of unsynced records and lose an earlier one. The log then
// held a page of zeros followed by intact records, and open called it
// corruption (S-41): the daemon refused to start after a power cut,
// although no record that was ever acknowledged as durable was damaged.
// FORMAT.md "Decoding": such a page is a torn tail now; a flipped bit
// before an intact record is still corruption.
import LocalAuthSystem
import XCTest

@testable import LocalAuthLog
import LocalAuthTestSupport

final class LostPageTests: XCTestCase {
    /// A log of records spanning several 4 KiB pages of one segment.
    private func log() throws -> (TemporaryDirectory, [LogPosition], [UInt8]) {
        let directory = TemporaryDirectory(inMemory: true)
        let positions = try makeLog(directory, count: 200)
        let bytes = try readFile(segmentPath(directory, 1))
        XCTAssertGreaterThan(bytes.count, 3 * 4096)
        return (directory, positions, bytes)
    }

    func test_S41_F47_givenAPageOfUnsyncedRecordsLostBeforeLaterOnes_whenTheLogOpens_thenItIsCutThereAsATornTail() throws {
        let (directory, positions, original) = try log()
        for page in [4096, 8192] {
            var bytes = original
            for offset in page..<(page + 4096) { bytes[offset] = 0 }
            try writeFile(segmentPath(directory, 1), bytes)
            // The log ends before the first record that reaches into the lost page.
            let ends = positions.dropFirst().map(\.offset) + [original.count]
            let cut = try XCTUnwrap(ends.firstIndex { $0 > page })
            let log = try EventLog.open(directory.path)
            let torn = try XCTUnwrap(log.recovery.tornTail, "page at \(page)")
            XCTAssertEqual(torn.offset, positions[cut].offset, "page at \(page)")
            XCTAssertEqual(log.recovery.lastSeq, UInt64(cut), "page at \(page)")
            try log.close()
            XCTAssertTrue(try EventLog.verify(directory.path).isOK)
            try writeFile(segmentPath(directory, 1), original)
            for name in try Directory.entries(directory.log) where name.contains(".broken") {
                try File.unlink(directory.log + "/" + name)
            }
        }
    }

    func test_S41_givenAFlippedBitBeforeIntactRecords_whenTheLogOpens_thenItIsStillCorruption() throws {
        let (directory, positions, _) = try log()
        try flipBit(segmentPath(directory, 1), at: positions[60].offset + 50, bit: 3)
        XCTAssertThrowsError(try EventLog.open(directory.path)) { error in
            guard case LogError.untrustworthy = error else { return XCTFail("\(error)") }
        }
    }

    func test_S41_givenZerosInsideOnePageBeforeAnIntactRecord_whenTheLogOpens_thenItIsCorruption() throws {
        // Writeback loses whole pages: zeros that do not reach a page
        // boundary before the next intact record are not a lost page.
        let (directory, positions, _) = try log()
        let record = positions.first { $0.offset % 4096 < 2000 && $0.offset > 4096 }!
        var bytes = try readFile(segmentPath(directory, 1))
        for offset in record.offset..<(record.offset + 60) { bytes[offset] = 0 }
        try writeFile(segmentPath(directory, 1), bytes)
        XCTAssertThrowsError(try EventLog.open(directory.path)) { error in
            guard case LogError.untrustworthy = error else { return XCTFail("\(error)") }
        }
    }
}
