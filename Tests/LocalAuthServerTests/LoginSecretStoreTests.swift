// The login secret's store (S-74, S-76) as a value and as a file: what it
// writes it reads back; a byte changed, a line added or dropped, another
// daemon's key, a symlink, a mode, a link or an owner it does not expect
// leave none of it used; a box opens only for its uid and its binding.
import Foundation
import Glibc
import LocalAuthCore
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest
@testable import LocalAuthServer

final class LoginSecretStoreTests: XCTestCase {
    let keys = LoginSecretKeys(daemonKey: Array(repeating: 7, count: 32))
    let otherKeys = LoginSecretKeys(daemonKey: Array(repeating: 8, count: 32))

    func store() -> LoginSecretStore {
        var store = LoginSecretStore(path: "/dev/null")
        store.enable(1000)
        store.enable(1001)
        let binding = keys.binding(uid: 1000, line: ArraySlice("alice:$y$j9T$salt$hash:19000:0:99999:7:::".utf8))
        store.keep(keys.seal(Array("correct horse".utf8), uid: 1000, binding: binding), for: 1000)
        return store
    }

    func test_HMAC_isRFC4231sSecondCase() {
        let mac = HMACSHA256.mac(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8))
        XCTAssertEqual(mac.map { String(format: "%02x", $0) }.joined(),
                       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        XCTAssertTrue(HMACSHA256.equal(mac, mac))
        XCTAssertFalse(HMACSHA256.equal(mac, Array(mac.dropLast())))
    }

    func test_S74_givenAStore_whenEncodedAndParsed_thenTheSameUsersAndCopiesComeBack() throws {
        let written = store()
        guard case .success(let users) = LoginSecretStore.parse(written.encoded(keys), keys) else { return XCTFail("not trusted") }
        XCTAssertEqual(users.count, 2)
        XCTAssertEqual(users[1000] ?? nil, written.copy(of: 1000))
        XCTAssertEqual(users[1001] ?? nil, nil, "enabled, nothing kept")
        let copy = try XCTUnwrap(written.copy(of: 1000))
        XCTAssertEqual(keys.open(copy, uid: 1000), Array("correct horse".utf8))
        XCTAssertFalse(written.encoded(keys).contains(subsequence: Array("correct horse".utf8)), "never in the clear (S-77)")
    }

    func test_S76_givenAnyChangedByte_thenTheStoreIsNotTrusted() {
        let bytes = store().encoded(keys)
        for index in bytes.indices {
            var changed = bytes
            changed[index] ^= 0x01
            if case .success = LoginSecretStore.parse(changed, keys) { XCTFail("byte \(index) changed and still trusted") }
        }
    }

    func test_S76_givenALineAddedDroppedOrCut_thenTheStoreIsNotTrusted() {
        let bytes = store().encoded(keys)
        let lines = bytes.split(separator: UInt8(ascii: "\n")).map(Array.init)
        let hostile: [[UInt8]] = [
            [], Array("\n".utf8), Array(bytes.dropLast()), Array(bytes.prefix(bytes.count / 2)),
            (lines[0] + [10] + lines[2] + [10] + lines[3] + [10]),          // a user's line dropped
            (lines[0] + [10] + lines[1] + [10] + lines[1] + [10] + lines[2] + [10] + lines[3] + [10]),  // one added
            bytes + Array("1002 - -\n".utf8),                                // after the MAC
            Array(repeating: UInt8(ascii: "a"), count: 5000),
        ]
        for (index, candidate) in hostile.enumerated() {
            if case .success = LoginSecretStore.parse(candidate, keys) { XCTFail("case \(index) trusted") }
        }
    }

    func test_S76_givenAnotherDaemonsKey_thenItIsForeignNotDamaged() {
        guard case .failure(let distrust) = LoginSecretStore.parse(store().encoded(otherKeys), keys) else {
            return XCTFail("another key's store trusted")
        }
        XCTAssertEqual(distrust.reason, .foreignKey)
    }

    func test_S74_aBoxOpensOnlyForItsUidAndItsBinding() throws {
        let copy = try XCTUnwrap(store().copy(of: 1000))
        XCTAssertNil(keys.open(copy, uid: 1001), "another uid")
        XCTAssertNil(otherKeys.open(copy, uid: 1000), "another key")
        var rebound = copy
        rebound.binding[0] ^= 1
        XCTAssertNil(keys.open(rebound, uid: 1000), "another binding (another shadow line)")
    }

    func test_S76_givenAFileTheDaemonDoesNotOwnAlone_thenNoneOfItIsUsed() throws {
        guard getuid() == 0 else { throw XCTSkip("chown needs root") }
        let directory = TemporaryDirectory()
        let path = directory.path + "/login-secrets"
        let good = Data(store().encoded(keys))
        func reset() throws {
            unlink(path)
            try good.write(to: URL(fileURLWithPath: path))
            chmod(path, 0o600)
        }
        try reset()
        let (trusted, none) = LoginSecretStore.open(directory: directory.path, keys: keys)
        XCTAssertNil(none)
        XCTAssertTrue(trusted.isEnabled(1000) && trusted.copy(of: 1000) != nil)
        let cases: [(String, () throws -> Void)] = [
            ("mode 0644", { chmod(path, 0o644) }),
            ("another owner", { chown(path, 65534, 65534) }),
            ("a second link", { link(path, directory.path + "/extra") }),
            ("a symlink", {
                try good.write(to: URL(fileURLWithPath: directory.path + "/real"))
                chmod(directory.path + "/real", 0o600)
                unlink(path)
                symlink(directory.path + "/real", path)
            }),
        ]
        for (name, spoil) in cases {
            try reset()
            try spoil()
            let (opened, distrust) = LoginSecretStore.open(directory: directory.path, keys: keys)
            XCTAssertEqual(distrust?.reason, .storeUntrusted, name)
            XCTAssertFalse(opened.isEnabled(1000), "\(name): nothing of it used")
            unlink(directory.path + "/extra")
        }
    }
}

private extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<($0 + subsequence.count)]) == subsequence }
    }
}
