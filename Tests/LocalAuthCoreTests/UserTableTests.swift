// UserTable: the users of an AuthState behave as the Dictionary they
// replace (get, set, remove, the `default:` subscript, iteration, equality),
// whatever the order of insertions and removals (removal moves the last user
// into the hole, which must keep every other user findable).

import XCTest

@testable import LocalAuthCore
import LocalAuthTestSupport

final class UserTableTests: XCTestCase {
    private func user(_ n: Int) -> UserState {
        var user = UserState()
        user.biometricFailures = n
        user.domainState = "token-\(n)"
        user.templates = ["finger-\(n)"]
        return user
    }

    func testBehavesAsADictionaryUnderRandomOperations() {
        var table = UserTable()
        var model: [UserID: UserState] = [:]
        var random = SeededGenerator(seed: 42)
        for step in 0..<20_000 {
            let uid = UserID(random.next() % 64)
            switch random.next() % 5 {
            case 0, 1:
                table[uid] = user(step)
                model[uid] = user(step)
            case 2:
                table[uid] = nil
                model[uid] = nil
            case 3:
                table[uid, default: UserState()].openContexts += 1
                model[uid, default: UserState()].openContexts += 1
            default:
                table[uid]?.passcodeSet.toggle()
                model[uid]?.passcodeSet.toggle()
            }
            XCTAssertEqual(table[uid], model[uid], "step \(step)")
            XCTAssertEqual(table.count, model.count, "step \(step)")
            if step % 997 == 0 { XCTAssertEqual(table.dictionary, model, "step \(step)") }
        }
        XCTAssertEqual(table.dictionary, model)
        XCTAssertEqual(Set(table.keys), Set(model.keys))
        var seen: [UserID: UserState] = [:]
        for (uid, value) in table { XCTAssertNil(seen.updateValue(value, forKey: uid), "each user once") }
        XCTAssertEqual(seen, model)
    }

    func testRemovalKeepsEveryOtherUserFindable() {
        var table = UserTable()
        for uid: UserID in 0..<10 { table[uid] = user(Int(uid)) }
        for uid: UserID in [0, 9, 4, 5] { table[uid] = nil }  // first, last, middle
        XCTAssertEqual(table.count, 6)
        for uid: UserID in [1, 2, 3, 6, 7, 8] { XCTAssertEqual(table[uid], user(Int(uid)), "uid \(uid)") }
        for uid: UserID in [0, 9, 4, 5] { XCTAssertNil(table[uid]) }
        table[7] = nil
        table[7] = nil  // removing an absent user changes nothing
        XCTAssertEqual(table.count, 5)
    }

    func testDefaultSubscriptAddsAndChangesInPlace() {
        var table = UserTable()
        table[5, default: UserState()].biometricFailures += 2
        table[5, default: UserState()].biometricFailures += 1
        XCTAssertEqual(table[5]?.biometricFailures, 3)
        XCTAssertEqual(table.count, 1)
        XCTAssertEqual(table[6, default: user(1)], user(1), "reading with a default adds nothing")
        XCTAssertNil(table[6])
    }

    func testWithUserLendsTheUserOrAFreshOne() {
        var table = UserTable()
        table[3] = user(3)
        XCTAssertEqual(table.withUser(3) { user in user.domainState }, "token-3")
        XCTAssertEqual(table.withUser(4) { user in !user.passcodeSet && !user.hasTemplates && user.domainState == UserState().domainState }, true, "an absent user reads as a fresh one")
    }

    func testEqualityIgnoresOrder() {
        var a = UserTable(), b = UserTable()
        for uid: UserID in [1, 2, 3] { a[uid] = user(Int(uid)) }
        for uid: UserID in [3, 1, 2] { b[uid] = user(Int(uid)) }
        XCTAssertEqual(a, b)
        b[2]?.adminLocked = true
        XCTAssertNotEqual(a, b)
        b[2] = nil
        XCTAssertNotEqual(a, b, "different counts")
        XCTAssertNotEqual(UserTable(), a)
        XCTAssertEqual(UserTable(), UserTable())
    }

    func testKeysHashWithTheTablesSeed() {
        // Same uid, same seed: same hash; another seed moves it (the seed is
        // the point of a per-table seed), and nearby uids spread out.
        XCTAssertEqual(UserKey(7)._rawHashValue(seed: 1), UserKey(7)._rawHashValue(seed: 1))
        XCTAssertNotEqual(UserKey(7)._rawHashValue(seed: 1), UserKey(7)._rawHashValue(seed: 2))
        let buckets = Set((0..<1000).map { UserKey(UserID($0))._rawHashValue(seed: 99) & 1023 })
        XCTAssertGreaterThan(buckets.count, 550, "1000 consecutive uids in 1024 buckets")
    }
}
