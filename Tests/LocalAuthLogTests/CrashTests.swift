// Kill -9 at random moments. The writer is `localauthlog-child durable`
// (Tests/LocalAuthLogChild): four threads append and wait; every durable seq
// is printed ("D <seq>") from the onDurable hook. The parent kills it after a seeded random number of
// acknowledgements, reopens, and checks that every reported seq is present,
// verify passes and the seqs have no gap. 4 rounds; 60 with LOCALAUTH_SOAK=1.

import Foundation
import Glibc
import XCTest

@testable import LocalAuthLog
import LocalAuthTestSupport

final class CrashTests: XCTestCase {
    func testKillAtRandomMoments() throws {
        let soak = ProcessInfo.processInfo.environment["LOCALAUTH_SOAK"] == "1"
        var random = SeededGenerator(seed: 0x10ca_1a07)
        let directory = TemporaryDirectory()
        var everReported: UInt64 = 0
        for round in 0..<(soak ? 60 : 4) {
            let target = Int(random.next() % 300) + 1
            let (maxReported, _) = try runChildUntilKilled(["durable", directory.path], prefix: "D ", lines: target)
            everReported = max(everReported, maxReported)

            // The daemon's sealed open (read-only: the torn tail stays) agrees with the full one.
            let fast = try EventLog.open(directory.path, options: .init(verification: .sealed, readOnly: true))
            let log = try EventLog.open(directory.path)
            XCTAssertGreaterThanOrEqual(log.recovery.lastSeq, everReported, "round \(round): a reported durable seq is missing")
            XCTAssertEqual(fast.recovery.lastSeq, log.recovery.lastSeq, "round \(round)")
            XCTAssertEqual(try fast.chainHead(at: fast.recovery.lastSeq), try log.chainHead(at: log.recovery.lastSeq), "round \(round)")
            try log.close()
            let report = try EventLog.verify(directory.path)
            XCTAssertTrue(report.isOK, "round \(round): \(report)")
            // Crash ordering: a segment that has a successor is sealed.
            XCTAssertEqual(report.sealsChecked, report.segments - 1, "round \(round): \(report)")
            XCTAssertEqual(report.records, report.lastSeq, "round \(round): seqs 1...last without gaps")
            let (seqs, last) = try readAll(directory)
            XCTAssertEqual(seqs, Array(1...max(1, report.lastSeq)).filter { $0 <= report.lastSeq })
            guard case .end = last else { return XCTFail("round \(round): \(last)") }
        }
        XCTAssertGreaterThan(everReported, 0)
    }
}
