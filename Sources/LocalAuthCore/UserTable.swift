// The users of an AuthState, by uid. A Dictionary would do, but its getter
// copies the whole UserState (a struct holding a String and an array: a
// memcpy and a retain and release of each) and it hashes UInt32 keys with
// SipHash; every can-evaluate reads its user twice. Here the users live in
// an array, found through an index whose keys mix the uid with the table's
// seed (as ContextID does), and `withUser` lends a user to a rule in place.
// Iteration order is unspecified, as a Dictionary's; equality ignores it.

public struct UserTable: Sendable {
    private var uids: [UserID] = []
    private var values: [UserState] = []
    private var slots: [UserKey: Int] = [:]

    public init() {}

    /// The user, or nil when the table has none (a Dictionary's subscript).
    public subscript(uid: UserID) -> UserState? {
        get { slots[UserKey(uid)].map { values[$0] } }
        set {
            let key = UserKey(uid)
            if let value = newValue {
                if let slot = slots[key] {
                    values[slot] = value
                } else {
                    slots[key] = values.count
                    uids.append(uid)
                    values.append(value)
                }
            } else if let slot = slots.removeValue(forKey: key) {
                // The last user moves into the hole.
                let last = values.count - 1
                if slot != last {
                    values.swapAt(slot, last)
                    uids.swapAt(slot, last)
                    slots[UserKey(uids[slot])] = slot
                }
                values.removeLast()
                uids.removeLast()
            }
        }
    }

    /// The user, added as `value` first when absent; changed in place.
    public subscript(uid: UserID, default value: @autoclosure () -> UserState) -> UserState {
        get { self[uid] ?? value() }
        _modify {
            let key = UserKey(uid)
            let slot: Int
            if let found = slots[key] {
                slot = found
            } else {
                slot = values.count
                slots[key] = slot
                uids.append(uid)
                values.append(value())
            }
            yield &values[slot]
        }
    }

    /// Lends the user (a fresh UserState when the table has none) to `body`
    /// in place, as a UserView: read where it lies, nothing copied, and
    /// not kept (UserView.swift says why not the UserState itself). The
    /// rules of every can-evaluate read four fields through this.
    @inline(__always)
    public func withUser<Result>(_ uid: UserID, _ body: (borrowing UserView) -> Result) -> Result {
        guard let slot = slots[UserKey(uid)] else { return withUnsafePointer(to: UserTable.absent) { body(UserView($0)) } }
        return values.withUnsafeBufferPointer { body(UserView($0.baseAddress.unsafelyUnwrapped + slot)) }
    }

    private static let absent = UserState()

    public var count: Int { values.count }
    public var isEmpty: Bool { values.isEmpty }
    /// Every uid, in no particular order.
    public var keys: [UserID] { uids }
    /// The same users as a Dictionary (tests, diagnostics).
    public var dictionary: [UserID: UserState] { Dictionary(uniqueKeysWithValues: zip(uids, values)) }
}

extension UserTable: Equatable {
    public static func == (a: UserTable, b: UserTable) -> Bool {
        guard a.values.count == b.values.count else { return false }
        for (slot, uid) in a.uids.enumerated() {
            guard let other = b.slots[UserKey(uid)], a.values[slot] == b.values[other] else { return false }
        }
        return true
    }
}

extension UserTable: Sequence {
    public struct Iterator: IteratorProtocol {
        fileprivate let table: UserTable
        fileprivate var position = 0

        public mutating func next() -> (key: UserID, value: UserState)? {
            guard position < table.values.count else { return nil }
            defer { position += 1 }
            return (table.uids[position], table.values[position])
        }
    }

    public func makeIterator() -> Iterator { Iterator(table: self) }
    public var underestimatedCount: Int { values.count }
}

/// A uid as a hash key, hashed without SipHash (SeededHashing.swift).
struct UserKey: Hashable, Sendable {
    let uid: UserID

    init(_ uid: UserID) { self.uid = uid }

    func hash(into hasher: inout Hasher) {
        hasher.combine(uid)
    }
}
