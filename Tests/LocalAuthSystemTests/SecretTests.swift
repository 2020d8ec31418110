import Foundation
import Glibc
import LocalAuthSystem
import Synchronization
import LocalAuthTestSupport
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

    /// S-50 (F-23): hashing and verifying leave no copy of the secret in
    /// this process's memory once the caller wiped its own (the workers'
    /// promise). `run` built crypt's phrase as `secret.map { ... } + [0]`,
    /// whose intermediate array was freed unwiped. The secret is made here
    /// and the search looks for it through a mask, so the test itself
    /// holds no other copy.
    func test_S50_hashAndVerifyLeaveNoCopyOfTheSecret() throws {
        let mask: UInt8 = 0x5A
        let masked: [UInt8] = (0..<24).map { UInt8(0x41 + ($0 * 7 + 3) % 26) ^ mask }
        // On a thread of its own, as the daemon's workers do: what that
        // thread freed is not reused by this one's allocations before the look.
        let done = DispatchSemaphore(value: 0)
        let verified = Mutex<Bool?>(nil)
        let worker = Thread {
            var secret = masked.map { $0 ^ mask }
            let hash = try? Yescrypt.hash(secret: secret)
            let correct = hash.map { Yescrypt.verify(secret: secret, hash: $0) }
            SecretMemory.wipe(&secret)
            verified.withLock { $0 = correct }
            done.signal()
        }
        worker.start()
        done.wait()
        XCTAssertEqual(verified.withLock { $0 }, true)
        XCTAssertEqual(try copiesInOwnMemory(masked: masked, mask: mask), 0, "copies of the secret left in memory")
    }

    /// Occurrences of the unmasked bytes in this process's writable mappings.
    private func copiesInOwnMemory(masked: [UInt8], mask: UInt8) throws -> Int {
        let first = masked[0] ^ mask
        var copies = 0
        try ProcessMemory.forEachWritableMapping(of: "self") { buffer in
            var index = 0
            while index + masked.count <= buffer.count {
                if buffer[index] == first {
                    var same = true
                    for offset in 1..<masked.count where buffer[index + offset] != masked[offset] ^ mask {
                        same = false
                        break
                    }
                    if same { copies += 1 }
                }
                index += 1
            }
        }
        return copies
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
