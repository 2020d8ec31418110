// The strict base64 of `secret=` (PROTOCOL.md v1.1): round trips at every
// length, one encoding per secret, and hostile input refused without decoding.
import Foundation
import LocalAuthProtocol
import XCTest
import LocalAuthTestSupport

final class Base64Tests: XCTestCase {
    func testRoundTripsAtEveryLengthAndMatchesFoundation() {
        var rng = SeededGenerator(seed: 64)
        for length in 0..<80 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let text = Base64.encode(bytes)
            XCTAssertEqual(text, Data(bytes).base64EncodedString(), "length \(length)")
            XCTAssertEqual(Base64.decode(text, maximumBytes: 80), .success(bytes), "length \(length)")
        }
    }

    func testRefusesEverythingButCanonicalPaddedBase64() {
        for bad in ["A", "AA", "AAA", "AAAAA", "A===", "====", "AA=A", "=AAA", "AAAA====", "AB==", "AAB=", "AA==AA==",
                    "AA-A", "AA_A", "AA A", "AA\nA", "ÄAAA", "AAA\u{0}"] {
            XCTAssertEqual(Base64.decode(bad, maximumBytes: 100), .failure(.malformed), bad)
        }
        XCTAssertEqual(Base64.decode("AA==", maximumBytes: 1), .success([0]))
        XCTAssertEqual(Base64.decode("AAE=", maximumBytes: 2), .success([0, 1]))
    }

    func testTheBoundIsCheckedBeforeDecoding() {
        XCTAssertEqual(Base64.decode(String(repeating: "A", count: 12), maximumBytes: 8), .failure(.tooLong))
        XCTAssertEqual(Base64.decode("AAAAAAAAAAA=", maximumBytes: 8), .success([UInt8](repeating: 0, count: 8)))
        XCTAssertEqual(Base64.decode(String(repeating: "!", count: 1 << 20), maximumBytes: 10), .failure(.tooLong))
    }
}
