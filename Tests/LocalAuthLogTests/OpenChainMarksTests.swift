// The heads a writer keeps for snapshots (`Options.chainMarkEvery`) are also
// taken by the open's scan of the records it reads, so that the start's
// snapshot check does not rehash the last segment to find chain[seq]; they
// must be the chain's own heads.

import LocalAuthSystem
import XCTest

@testable import LocalAuthLog
import LocalAuthTestSupport

final class OpenChainMarksTests: XCTestCase {
    func testTheOpenKeepsTheHeadsItPassesAndTheyAreTheChains() throws {
        for (verification, segmentSize) in [(Verification.records, 64 << 20), (.sealed, 64 << 20), (.records, 4000), (.sealed, 4000)] {
            let directory = TemporaryDirectory(inMemory: true)
            try makeLog(directory, count: 230, segmentSize: segmentSize)
            let reader = try LogReader(logDirectory: directory.log, chain: .full)
            var heads: [UInt64: ChainHead] = [:]
            while case .record(let record) = reader.next() { heads[record.seq] = reader.chainHead }
            let lastSegmentStart = try XCTUnwrap(reader.segments.last)
            let log = try EventLog.open(directory.path, options: .init(segmentSize: segmentSize, verification: verification, chainMarkEvery: 10))
            let writer = try XCTUnwrap(log.writer)
            // The last four multiples of 10 the scan passed, in the last segment at least.
            var checked = 0
            for seq: UInt64 in [200, 210, 220, 230] where seq >= lastSegmentStart {
                checked += 1
                XCTAssertEqual(writer.markedChain(seq), heads[seq], "\(verification): chain[\(seq)]")
                XCTAssertEqual(try log.chainHead(at: seq), heads[seq])
            }
            if segmentSize > 4000 { XCTAssertEqual(checked, 4) }
            XCTAssertNil(writer.markedChain(190), "only the last \(ChainMark.kept) are kept")
            // Appends go on marking after them.
            for index in 231...240 { try log.append(time: Fixture.time(index), keys: Fixture.keys(index), payload: Fixture.payload(index)) }
            try log.waitDurable(240)
            XCTAssertNotNil(writer.markedChain(240))
            XCTAssertNil(writer.markedChain(200))
            try log.close()
            XCTAssertTrue(try EventLog.verify(directory.path).isOK)
        }
    }
}
