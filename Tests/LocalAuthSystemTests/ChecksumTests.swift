import LocalAuthSystem
import XCTest
import LocalAuthTestSupport

final class CRC32CTests: XCTestCase {
    func testKnownVectors() {
        XCTAssertEqual(CRC32C.checksum(Array("123456789".utf8)), 0xE306_9283)
        XCTAssertEqual(CRC32C.checksum([]), 0)
        // RFC 3720 (iSCSI) B.4: 32 bytes of zeros, of 0xFF, and ascending.
        XCTAssertEqual(CRC32C.checksum([UInt8](repeating: 0, count: 32)), 0x8A91_36AA)
        XCTAssertEqual(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)), 0x62A8_AB43)
        XCTAssertEqual(CRC32C.checksum((0..<32).map { UInt8($0) }), 0x46DD_794E)
    }

    func testSeedContinuesTheChecksum() {
        let bytes = Array("123456789".utf8)
        let first = CRC32C.checksum(Array(bytes[..<4]))
        XCTAssertEqual(CRC32C.checksum(Array(bytes[4...]), seed: first), 0xE306_9283)
    }

    func testHardwareAndTablePathsAgree() {
        var generator = SeededGenerator(seed: 42)
        let buffer = (0..<4200).map { _ in UInt8.random(in: 0...255, using: &generator) }
        buffer.withUnsafeBytes { raw in
            for offset in 0..<9 {
                // Every tail length (0...7 bytes after the 8-byte words) at every offset.
                for length in Array(0...24) + [31, 63, 64, 69, 70, 71, 100, 255, 1000, 4096] {
                    let slice = UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + length)])
                    let seed = UInt32(truncatingIfNeeded: length &* 2_654_435_761)
                    XCTAssertEqual(CRC32C.checksum(slice, seed: seed), CRC32C.tableChecksum(slice, seed: seed),
                                   "offset \(offset) length \(length)")
                }
            }
        }
        XCTAssertEqual(CRC32C.tableChecksum(UnsafeRawBufferPointer(start: nil, count: 0)), 0)
    }
}

final class SHA256Tests: XCTestCase {
    func testKnownVectors() {
        XCTAssertEqual(Hex.encode(SHA256.hash(Array("abc".utf8))),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(Hex.encode(SHA256.hash([])),
                       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(Hex.encode(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))),
                       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testTwoPartHashIsTheHashOfTheConcatenation() {
        var generator = SeededGenerator(seed: 7)
        for (first, second) in [(0, 0), (0, 3), (32, 0), (32, 80), (55, 9), (64, 64), (1000, 1)] {
            let a = (0..<first).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let b = (0..<second).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var digest = [UInt8](repeating: 0, count: 32)
            a.withUnsafeBytes { a in b.withUnsafeBytes { b in digest.withUnsafeMutableBytes { SHA256.hash(a, b, into: $0) } } }
            XCTAssertEqual(digest, SHA256.hash(a + b), "\(first)+\(second) bytes")
        }
    }
}

