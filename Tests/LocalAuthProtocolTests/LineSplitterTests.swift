// The splitter against a reference implementation, at every chunk size.

import XCTest
@testable import LocalAuthProtocol
import LocalAuthTestSupport

final class LineSplitterTests: XCTestCase {
    enum Out: Equatable {
        case line([UInt8])
        case tooLong
    }

    /// The obvious whole-buffer implementation of the framing rules.
    static func reference(_ input: [UInt8], cap: Int) -> [Out] {
        var out: [Out] = []
        var start = 0
        while start < input.count {
            guard let lf = input[start...].firstIndex(of: 10) else {
                if input.count - start >= cap { out.append(.tooLong) }
                return out
            }
            if lf - start + 1 > cap {
                out.append(.tooLong)
                return out
            }
            var line = Array(input[start..<lf])
            if line.last == 13 { line.removeLast() }
            out.append(.line(line))
            start = lf + 1
        }
        return out
    }

    /// Feeds `input` in chunks of the given sizes (cycled), draining after
    /// each, with `next()` and with `next(copyingInto:)` (the server's); the
    /// two must agree, and the result is `next()`'s.
    static func split(_ input: [UInt8], cap: Int, chunkSizes: [Int]) -> [Out] {
        let sliced = split(input, cap: cap, chunkSizes: chunkSizes, copying: false)
        let copied = split(input, cap: cap, chunkSizes: chunkSizes, copying: true)
        XCTAssertEqual(copied, sliced, "next(copyingInto:) differs from next() at cap \(cap), chunks \(chunkSizes)")
        return sliced
    }

    static func split(_ input: [UInt8], cap: Int, chunkSizes: [Int], copying: Bool) -> [Out] {
        var splitter = LineSplitter(maximumLineLength: cap)
        var out: [Out] = []
        var offset = 0
        var k = 0
        // Exactly the cap: the copy must never need more.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: cap, alignment: 1)
        defer { buffer.deallocate() }
        func drain() {
            if copying {
                while let event = splitter.next(copyingInto: buffer) {
                    switch event {
                    case .line(let l): out.append(.line(Array(l)))
                    case .lineTooLong: out.append(.tooLong)
                    }
                }
                return
            }
            while let event = splitter.next() {
                switch event {
                case .line(let l): out.append(.line(Array(l)))
                case .lineTooLong: out.append(.tooLong)
                }
            }
        }
        drain()
        while offset < input.count {
            let size = min(chunkSizes[k % chunkSizes.count], input.count - offset)
            k += 1
            input[offset..<offset + size].withUnsafeBytes { splitter.append($0) }
            offset += size
            drain()
        }
        return out
    }

    static func sampleInput(cap: Int) -> [UInt8] {
        var s: [UInt8] = []
        s += Array("c1 new\n".utf8)
        s += Array("c2 ping\r\n".utf8)
        s += Array("\n\r\n".utf8)  // empty lines
        s += Array("c3 set ctx=1 fallback-title=\"a b\"\r\r\n".utf8)  // only one CR dropped
        s += Array(repeating: UInt8(ascii: "x"), count: max(0, cap - 1)) + [10]  // exactly at the cap
        s += Array(repeating: UInt8(ascii: "y"), count: max(0, cap - 2)) + [13, 10]  // at the cap with CRLF
        s += Array("tail \u{e9}\n".utf8)
        s += Array("partial".utf8)
        return s
    }

    func testOneByteAtATimeMatchesWholeBuffer() {
        for cap in [1, 2, 8, 64, 8192] {
            let input = Self.sampleInput(cap: cap)
            let expected = Self.reference(input, cap: cap)
            XCTAssertEqual(Self.split(input, cap: cap, chunkSizes: [input.count]), expected, "cap \(cap)")
            XCTAssertEqual(Self.split(input, cap: cap, chunkSizes: [1]), expected, "cap \(cap)")
        }
    }

    func testEveryChunkSizeUpTo64() {
        let input = Self.sampleInput(cap: 100)
        let expected = Self.reference(input, cap: 100)
        XCTAssertEqual(expected.count, 8)  // the partial tail is not a line
        for size in 1...64 {
            XCTAssertEqual(Self.split(input, cap: 100, chunkSizes: [size]), expected, "chunk size \(size)")
        }
    }

    func testRandomChunkingsOfRandomInputs() {
        var rng = SeededGenerator(seed: 0x5EED_0001)
        let alphabet: [UInt8] = [10, 13, 32, 65, 97, 0, 0xFF]
        for round in 0..<300 {
            let cap = Int.random(in: 1...40, using: &rng)
            let input = (0..<Int.random(in: 0...200, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            let chunks = (0..<8).map { _ in Int.random(in: 1...50, using: &rng) }
            XCTAssertEqual(
                Self.split(input, cap: cap, chunkSizes: chunks), Self.reference(input, cap: cap), "round \(round)")
        }
    }

    /// The LF search reads words and takes the first LF from a word's bit
    /// pattern: an LF at every offset of lines of every length up to 40,
    /// after the bytes a word trick could mistake for one (0x0B, 0x8A, 0x09,
    /// 0x00, 0xFF; an LF right after a borrow), LFs in one word and in both
    /// words of one step, and a
    /// range ending at every distance from a word's end (the last word read
    /// overlapping the bytes before it), all against the reference.
    func testAnLFAtEveryOffsetIsFoundAfterEveryNearMiss() {
        let nearMisses: [UInt8] = [0x0B, 0x8A, 0x09, 0x00, 0xFF, 0x61, 0x01]
        for length in 0...40 {
            for filler in nearMisses {
                var input = [UInt8](repeating: filler, count: length) + [10]
                input += [UInt8](repeating: filler, count: length % 9) + [10, 10] + [UInt8](repeating: filler, count: length % 7)
                input += [UInt8](repeating: filler, count: 20) + [10]  // room for the two-word step past the LFs
                for cap in [8, 16, 41, 8192] {
                    let expected = Self.reference(input, cap: cap)
                    XCTAssertEqual(Self.split(input, cap: cap, chunkSizes: [input.count]), expected, "\(length) x \(filler), cap \(cap)")
                    XCTAssertEqual(Self.split(input, cap: cap, chunkSizes: [3, 8, 1]), expected, "\(length) x \(filler), cap \(cap)")
                }
            }
        }
    }

    func testCapIsInclusiveOfTheLF() {
        let accepted = Array(repeating: UInt8(ascii: "a"), count: 8191) + [10]
        XCTAssertEqual(accepted.count, 8192)
        var splitter = LineSplitter()
        splitter.append(contentsOf: accepted)
        XCTAssertEqual(splitter.next(), .line(accepted.dropLast()))
        XCTAssertNil(splitter.next())

        let rejected = Array(repeating: UInt8(ascii: "a"), count: 8192) + [10]
        XCTAssertEqual(rejected.count, 8193)
        var other = LineSplitter()
        other.append(contentsOf: rejected)
        XCTAssertEqual(other.next(), .lineTooLong)
        XCTAssertNil(other.next())
        XCTAssertTrue(other.hasFailed)
    }

    func testCRLFLineOfExactlyTheCap() {
        let line = Array(repeating: UInt8(ascii: "a"), count: 8190) + [13, 10]
        var splitter = LineSplitter()
        splitter.append(contentsOf: line)
        XCTAssertEqual(splitter.next(), .line(line.dropLast(2)))
    }

    func testTooLongIsReportedWithoutWaitingForTheLF() {
        var splitter = LineSplitter(maximumLineLength: 16)
        splitter.append(contentsOf: Array(repeating: UInt8(ascii: "a"), count: 15))
        XCTAssertNil(splitter.next())
        XCTAssertTrue(splitter.hasPartialLine)
        splitter.append(contentsOf: [UInt8(ascii: "a")])
        XCTAssertEqual(splitter.next(), .lineTooLong)
        // Reported once; later input is ignored.
        splitter.append(contentsOf: Array("ok\n".utf8))
        XCTAssertNil(splitter.next())
        XCTAssertEqual(splitter.bufferedByteCount, 0)
    }

    func testLinesBeforeTheLongOneAreDelivered() {
        var splitter = LineSplitter(maximumLineLength: 8)
        splitter.append(contentsOf: Array("a\nbb\n0123456789\nc\n".utf8))
        XCTAssertEqual(splitter.next(), .line(Array("a".utf8)[...]))
        XCTAssertEqual(splitter.next(), .line(Array("bb".utf8)[...]))
        XCTAssertEqual(splitter.next(), .lineTooLong)
        XCTAssertNil(splitter.next())
    }

    func testPartialLineAndBufferedCount() {
        var splitter = LineSplitter()
        XCTAssertFalse(splitter.hasPartialLine)
        splitter.append(contentsOf: Array("c1 ping\nc2 pi".utf8))
        XCTAssertTrue(splitter.hasPartialLine)
        XCTAssertEqual(splitter.bufferedByteCount, 13)
        XCTAssertEqual(splitter.next(), .line(Array("c1 ping".utf8)[...]))
        XCTAssertEqual(splitter.bufferedByteCount, 5)
        XCTAssertNil(splitter.next())
        XCTAssertTrue(splitter.hasPartialLine)
        splitter.append(contentsOf: Array("ng\n".utf8))
        XCTAssertFalse(splitter.hasPartialLine)
        XCTAssertEqual(splitter.next(), .line(Array("c2 ping".utf8)[...]))
        XCTAssertEqual(splitter.bufferedByteCount, 0)
        XCTAssertFalse(splitter.hasPartialLine)
    }

    func testResetReusesTheSplitterAfterFailure() {
        var splitter = LineSplitter(maximumLineLength: 4)
        splitter.append(contentsOf: Array("abcdef".utf8))
        XCTAssertEqual(splitter.next(), .lineTooLong)
        splitter.reset()
        XCTAssertFalse(splitter.hasFailed)
        splitter.append(contentsOf: Array("ab\n".utf8))
        XCTAssertEqual(splitter.next(), .line(Array("ab".utf8)[...]))
    }
}
