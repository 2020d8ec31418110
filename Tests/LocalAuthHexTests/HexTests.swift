// The one hex parser (LocalAuthHex): the digit-pair parse every caller of
// bytes uses, and the eight-at-a-time parse of context ids, which must agree
// with the digit-by-digit one on every input, bad ones included.

import LocalAuthHex
import XCTest

final class HexTests: XCTestCase {
    func test_bytes_evenDigitsEitherCase_areTheirBytes() {
        XCTAssertEqual(Hex.bytes(Array("00ff7A80".utf8)), [0x00, 0xFF, 0x7A, 0x80])
        XCTAssertEqual(Hex.bytes(Array("ABCDEF".utf8)), [0xAB, 0xCD, 0xEF])
        XCTAssertEqual(Hex.bytes("0123456789abcdef".utf8), [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF])
    }

    func test_bytes_empty_isNoBytes() {
        XCTAssertEqual(Hex.bytes([UInt8]()), [])
    }

    func test_bytes_oddLength_isRefused() {
        XCTAssertNil(Hex.bytes(Array("abc".utf8)))
        XCTAssertNil(Hex.bytes(Array("a".utf8)))
    }

    func test_bytes_nonDigits_areRefused() {
        for bad in ["0g", "g0", "0 ", " 0", "0x", "-1", "0\n", "\u{0}0", "é0", "0/", "0:", "0@", "0G", "0`"] {
            XCTAssertNil(Hex.bytes(Array(bad.utf8)), bad)
        }
    }

    func test_bytes_lowercaseOnly_refusesUppercase() {
        XCTAssertEqual(Hex.bytes(Array("abcdef".utf8), .lowercaseOnly), [0xAB, 0xCD, 0xEF])
        XCTAssertNil(Hex.bytes(Array("aBcdef".utf8), .lowercaseOnly))
        XCTAssertNil(Hex.bytes(Array("ABCDEF".utf8), .lowercaseOnly))
        XCTAssertEqual(Hex.bytes(Array("aBcdef".utf8), .eitherCase), [0xAB, 0xCD, 0xEF])
    }

    func test_nibble_everyByte_matchesTheDigitTable() {
        for byte in 0...255 {
            let c = UInt8(byte)
            let expected: UInt8? = switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            case 0x41...0x46: c - 0x41 + 10
            default: nil
            }
            XCTAssertEqual(Hex.nibble(c), expected, "byte \(byte)")
            XCTAssertEqual(Hex.nibble(c, .lowercaseOnly), (0x41...0x46).contains(c) ? nil : expected, "byte \(byte)")
        }
    }

    func test_value128_32Digits_isTheId() {
        let text = Array("8c1f0a6e2b7d4e59A0C3F1D2E4B5A697".utf8)
        let value = text.withUnsafeBytes { Hex.value128($0) }
        XCTAssertEqual(value?.high, 0x8c1f_0a6e_2b7d_4e59)
        XCTAssertEqual(value?.low, 0xa0c3_f1d2_e4b5_a697)
    }

    func test_value128_wrongLength_isRefused() {
        for count in [0, 1, 16, 31, 33, 64] {
            let text = [UInt8](repeating: UInt8(ascii: "a"), count: count)
            XCTAssertNil(text.withUnsafeBytes { Hex.value128($0) }, "\(count) digits")
        }
    }

    /// Every byte value in every position: the word parse agrees with the
    /// digit table (bytes >= 0x80, the neighbours of each range, both cases).
    func test_value128_anyByteAnywhere_agreesWithTheDigitPairParse() {
        var generator = SplitMix(seed: 18)
        let valid = Array("0123456789abcdefABCDEF".utf8)
        for round in 0..<4096 {
            var text = (0..<32).map { _ in valid[Int(generator.next() % UInt64(valid.count))] }
            if round % 2 == 0 { text[round / 2 % 32] = UInt8(truncatingIfNeeded: round / 2 / 32 + round) }
            let fast = text.withUnsafeBytes { Hex.value128($0) }
            let slow = Hex.bytes(text).map { bytes in
                (bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            }
            XCTAssertEqual(fast?.high, slow?.0, String(decoding: text, as: UTF8.self))
            XCTAssertEqual(fast?.low, slow?.1, String(decoding: text, as: UTF8.self))
        }
        for byte in 0...255 {
            var text = [UInt8](repeating: UInt8(ascii: "7"), count: 32)
            text[byte % 32] = UInt8(byte)
            let fast = text.withUnsafeBytes { Hex.value128($0) }
            XCTAssertEqual(fast == nil, Hex.nibble(UInt8(byte)) == nil, "byte \(byte)")
        }
    }

    /// Several bad bytes in a word, bytes >= 0x80 before digits (their sums
    /// may carry into the next byte): refused exactly when a byte is not a
    /// digit, whatever the rest.
    func test_value128_manyBadBytes_agreesWithTheDigitPairParse() {
        var generator = SplitMix(seed: 21)
        let valid = Array("0123456789abcdefABCDEF".utf8)
        let edges: [UInt8] = [0x00, 0x10, 0x19, 0x2F, 0x3A, 0x40, 0x47, 0x60, 0x67, 0x7F, 0x80, 0xB0, 0xC1, 0xE6, 0xFF]
        for _ in 0..<20_000 {
            var text = (0..<32).map { _ in valid[Int(generator.next() % UInt64(valid.count))] }
            for _ in 0..<Int(generator.next() % 4) {
                let byte = generator.next() % 2 == 0 ? edges[Int(generator.next() % UInt64(edges.count))] : UInt8(truncatingIfNeeded: generator.next())
                text[Int(generator.next() % 32)] = byte
            }
            let fast = text.withUnsafeBytes { Hex.value128($0) }
            let slow = Hex.bytes(text).map { bytes in
                (bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            }
            XCTAssertEqual(fast?.high, slow?.0, "\(text)")
            XCTAssertEqual(fast?.low, slow?.1, "\(text)")
        }
    }

    func test_wordValue_digitsInLoadOrder_firstIsMostSignificant() {
        let word = Array("89abCDEF".utf8).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        XCTAssertEqual(Hex.wordValue(UInt64(littleEndian: word)), 0x89AB_CDEF)
        XCTAssertNil(Hex.wordValue(0x3030_3030_3030_30B0))
    }
}

/// A small seeded generator (the tests' inputs repeat run to run).
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
