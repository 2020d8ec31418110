// RightStore.bind (S-59) as a value: a right of a store written before
// S-59 is bound to its uid's account at the first lookup, its secret
// sealed again so that it opens only with the account in its additional
// data; a right bound to another name is dropped.
import LocalAuthCore
@testable import LocalAuthServer
import LocalAuthSystem
import XCTest

final class RightStoreBindTests: XCTestCase {
    private let key = [UInt8](repeating: 7, count: AESGCM.keySize)

    private func versionTwoStore() throws -> (RightStore, String) {
        let directory = NSTemporaryDirectory() + "right-bind-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let box = AESGCM.seal(Array("secret".utf8), key: key, additionalData: RightStore.additionalData(1000, "x", nil))
        let hex = box.map { String(format: "%02x", $0) }.joined()
        try "localauthd-rights 2\n1000 x default - \(hex) -\n".write(toFile: directory + "/rights", atomically: true, encoding: .utf8)
        return (try RightStore.open(directory: directory), directory)
    }

    func test_S59_anUnboundRightIsBoundAndItsSecretSealedAgain() throws {
        var (store, directory) = try versionTwoStore()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        XCTAssertNil(store.right(1000, "x")?.account)
        let bound = store.bind(1000, to: "alice", key: key, now: 5)
        XCTAssertTrue(bound.changed)
        XCTAssertTrue(bound.dropped.isEmpty)
        let right = try XCTUnwrap(store.right(1000, "x"))
        let account = try XCTUnwrap(right.account)
        XCTAssertEqual(account.name, "alice")
        let sealed = try XCTUnwrap(right.sealed)
        XCTAssertEqual(AESGCM.open(sealed, key: key, additionalData: RightStore.additionalData(1000, "x", account)), Array("secret".utf8))
        XCTAssertNil(AESGCM.open(sealed, key: key, additionalData: RightStore.additionalData(1000, "x", nil)),
                     "the old additional data no longer opens it")
        // The same account again changes nothing; another name drops it.
        XCTAssertFalse(store.bind(1000, to: "alice", key: key, now: 6).changed)
        let replaced = store.bind(1000, to: "bob", key: key, now: 7)
        XCTAssertEqual(replaced.dropped.map(\.0), ["x"])
        XCTAssertNil(store.right(1000, "x"))
    }

    func test_S59_theBoundStoreReadsBackWithItsAccount() throws {
        var (store, directory) = try versionTwoStore()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = store.bind(1000, to: nil, key: key, now: 5)
        try AtomicFile.write(store.path, bytes: store.encoded(), mode: 0o600)
        let again = try RightStore.open(directory: directory)
        XCTAssertEqual(again.right(1000, "x")?.account, store.right(1000, "x")?.account)
        XCTAssertNotNil(again.right(1000, "x")?.account, "nil name (no passwd entry) is an account too")
    }
}
