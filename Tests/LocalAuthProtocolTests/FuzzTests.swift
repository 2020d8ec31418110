// Random input never crashes the codec, and what it accepts round-trips.
// The seed is fixed: a failure reproduces on every run.

import XCTest
@testable import LocalAuthProtocol
import LocalAuthTestSupport

final class FuzzTests: XCTestCase {
    func testRandomGarbageNeverCrashes() {
        var rng = SeededGenerator(seed: 0xF022)
        // Mostly protocol-shaped bytes, with some of anything.
        let shaped = Array("ab09 =\"\\ntrx-._*\u{e9}".utf8) + [0, 9, 10, 13, 0x7F, 0x80, 0xBF, 0xC0, 0xED, 0xF4, 0xFF]
        var splitter = LineSplitter(maximumLineLength: 64)
        for _ in 0..<5000 {
            let count = Int.random(in: 0...48, using: &rng)
            let line: [UInt8] = (0..<count).map { _ in
                rng.next() % 4 == 0 ? UInt8.random(in: 0...255, using: &rng) : shaped.randomElement(using: &rng)!
            }
            switch Request.parse(line) {
            case .request(let request):
                // Whatever parses, re-encodes to a line that parses the same.
                var writer = LineWriter()
                writer.append(request)
                XCTAssertEqual(Request.parse(writer.bytes.dropLast()), .request(request), "\(line)")
            case .failure(let failure):
                XCTAssertFalse(failure.message.isEmpty)
                if let tag = failure.tag { XCTAssertTrue(line.starts(with: Array(tag.utf8))) }
            }
            if let response = try? Response.parse(line) {
                var writer = LineWriter()
                writer.append(response)
                XCTAssertEqual(try? Response.parse(writer.bytes.dropLast()), response, "\(line)")
            }
            splitter.append(contentsOf: line)
            while let event = splitter.next() {
                if case .line(let l) = event { _ = Request.parse(l) }
            }
            if splitter.hasFailed { splitter.reset() }
        }
    }
}
