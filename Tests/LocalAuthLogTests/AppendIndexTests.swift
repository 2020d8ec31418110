// EventLog.Options.indexesAppends and the writer's reuse of its chunk buffer
// from one write to the next: neither may change a byte on the file.
import Foundation
import LocalAuthCore
@testable import LocalAuthLog
import XCTest
import LocalAuthTestSupport

final class AppendIndexTests: XCTestCase {
    /// Appends records 1...count in turns of `turn` records, each turn
    /// followed by `write()` (as the daemon's loop does), into a log opened
    /// with `indexesAppends`; small segments so chunks also start segments.
    private func writeLog(_ directory: TemporaryDirectory, indexesAppends: Bool, count: Int, turns: [Int]) throws {
        let log = try EventLog.open(directory.path, options: .init(
            segmentSize: 4096, syncPolicy: .onDemand, indexesAppends: indexesAppends))
        var index = 1
        var turn = 0
        while index <= count {
            for _ in 0..<turns[turn % turns.count] where index <= count {
                try log.append(time: Fixture.time(index), keys: Fixture.keys(index), payload: Fixture.payload(index))
                index += 1
            }
            try log.write()
            turn += 1
        }
        try log.close()
    }

    private func files(_ directory: TemporaryDirectory) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.log) {
            result[name] = try Data(contentsOf: URL(fileURLWithPath: directory.log + "/" + name))
        }
        return result
    }

    func testWithoutTheAppendIndexTheFilesAreByteForByteTheSame() throws {
        let indexed = TemporaryDirectory(), unindexed = TemporaryDirectory()
        // Turn sizes vary so a reused buffer is sometimes bigger, sometimes smaller than what follows.
        try writeLog(indexed, indexesAppends: true, count: 700, turns: [1, 90, 3, 250, 17])
        try writeLog(unindexed, indexesAppends: false, count: 700, turns: [1, 90, 3, 250, 17])
        let expected = try files(indexed)
        XCTAssertGreaterThan(expected.count, 4, "segments rotated while turns were written")
        XCTAssertEqual(try files(unindexed), expected)
        XCTAssertEqual(try readAll(unindexed).seqs, (1...700).map(UInt64.init))
    }

    func testHistoryOfALogWrittenWithoutTheIndexIsComplete() throws {
        let directory = TemporaryDirectory()
        try writeLog(directory, indexesAppends: false, count: 300, turns: [7, 64])
        // A reader opens with the index (the default) and rebuilds it from the file.
        let log = try EventLog.open(directory.path, options: .init(segmentSize: 4096))
        defer { try? log.close() }
        let contextA = (1...300).filter { Fixture.keys($0).context == Fixture.contextA }.map(UInt64.init)
        XCTAssertEqual(try log.history(context: Fixture.contextA).map(\.seq), contextA)
        let user = (1...300).filter { Fixture.keys($0).uid == UInt32.max }.map(UInt64.init)
        XCTAssertEqual(try log.history(uid: UInt32.max).map(\.seq), user)
    }
}
