import LocalAuthSystem
import XCTest

final class YescryptTests: XCTestCase {
    func testHashVerifiesTheRightSecretOnly() throws {
        let hash = try Yescrypt.hash(secret: "correct horse")
        XCTAssertTrue(hash.hasPrefix("$y$"), hash)
        XCTAssertTrue(Yescrypt.verify(secret: "correct horse", hash: hash))
        XCTAssertFalse(Yescrypt.verify(secret: "correct hors", hash: hash))
        XCTAssertFalse(Yescrypt.verify(secret: Array("correct horse!".utf8), hash: hash))
    }

    func testSaltsDiffer() throws {
        let first = try Yescrypt.hash(secret: Array("1234".utf8))
        let second = try Yescrypt.hash(secret: Array("1234".utf8))
        XCTAssertNotEqual(first, second)
        XCTAssertTrue(Yescrypt.verify(secret: "1234", hash: second))
    }

    func testMalformedHashAndNULSecret() {
        XCTAssertFalse(Yescrypt.verify(secret: "x", hash: ""))
        XCTAssertFalse(Yescrypt.verify(secret: "x", hash: "$y$garbage"))
        XCTAssertThrowsError(try Yescrypt.hash(secret: [0x41, 0, 0x42])) { error in
            XCTAssertEqual((error as? SystemError)?.errno, EINVAL)
        }
    }
}

final class SecureRandomTests: XCTestCase {
    func testLengthsAndUniqueness() {
        for count in [0, 1, 16, 32, 1000, 70_000] {
            XCTAssertEqual(SecureRandom.bytes(count).count, count)
        }
        XCTAssertNotEqual(SecureRandom.bytes(32), SecureRandom.bytes(32))
        let hex = SecureRandom.hex(bytes: 16)
        XCTAssertEqual(hex.count, 32)
        XCTAssertTrue(hex.allSatisfy { "0123456789abcdef".contains($0) }, hex)
        XCTAssertEqual(Set((0..<100).map { _ in SecureRandom.hex() }).count, 100)
    }
}
