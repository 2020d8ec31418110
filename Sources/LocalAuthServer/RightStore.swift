// The rights of every uid (LARightStore's, PROTOCOL.md v1.1) with their
// sealed secrets, in a file of their own: `STATE/rights`, mode 0600,
// replaced atomically (write, fsync, rename, fsync the directory) before the
// event that records the change, as the passcode store is. Never in the log
// or a snapshot: the log's right events carry uid, identifier and
// requirement only (AUDIT.md v1.1).
//
// This value holds the rights in memory and makes the file's bytes; the
// write itself is the shell's, off the event loop (RightStoreWrites.swift,
// issue 27 item 7): a change is applied here at once, `durable` is what the
// file last held, and a failed write rolls back to it.
//
// File: a first line `localauthd-rights 3`, then one right per line:
//   UID IDENTIFIER REQUIREMENT DOMAIN-STATE|- SEALED|- KEY|- ACCOUNT
// SEALED is the AES-256-GCM box (SecretKey, AESGCM) in hex, its additional
// data "localauthd-right-secret\0UID\0IDENTIFIER" then, for a bound right,
// "\0account\0BORN\0NAME", so that a box moved to another line or another
// account does not open. DOMAIN-STATE is the user's S-10 token at the
// save, which a `biometry-current-set` right needs unchanged to release its
// secret. KEY (S-78) is the right's P-256 key: PUBLIC:SEALED-SCALAR, the
// X9.63 public key (65 bytes) and the box of the private scalar, both hex,
// the box's additional data "localauthd-right-key\0UID\0IDENTIFIER\0",
// for a bound right "account\0BORN\0NAME\0", then the public key, so that
// neither half can be swapped. ACCOUNT (S-59) is the account the right is
// bound to: BORN:NAME, the life's stamp (decimal) and the user name in hex
// (`-`: the uid had no passwd entry), or `?` for a right of an older file
// not yet bound (RightAccounts.swift binds it at its uid's first lookup,
// sealing its boxes again). Versions 1 (five fields, before rights had
// keys; their rights have no key, `bad-state`: save again) and 2 (six,
// before accounts) are read, their rights unbound. A file that does not
// parse stops the daemon (fail closed) with a message naming it.
import LocalAuthCore
import LocalAuthHex
import LocalAuthSystem

struct StoredRight {
    var requirement: RightRequirement
    /// The S-10 token at the save ("" when nothing was enrolled).
    var domainState: String
    var sealed: [UInt8]?
    /// The right's key pair (S-78); nil for a right saved before rights had keys.
    var key: StoredKey?
    /// Changes with every save of this identifier, so an authorization of
    /// the right it replaced does not carry over (in memory only).
    var generation: UInt64
    /// S-59: the account it belongs to; nil for a right of a version 1 or 2
    /// file that has not been bound yet (its boxes have the old additional data).
    var account: RightAccount?
}

/// S-59: one life of an account, as a right is bound to it: the user name
/// the user database gave the uid (nil: none), and the stamp the daemon
/// gave this life when it bound the first right to it.
struct RightAccount: Equatable {
    var name: String?
    /// Microseconds since the epoch, unique per uid (RightStore.newBorn).
    var born: UInt64

    /// What the boxes' additional data adds for a bound right (names hold no NUL: AccountName).
    var additionalData: [UInt8] { Array("account\0\(born)\0\(name ?? "")".utf8) }
}

/// A right's key at rest: the public key in the clear, the private scalar sealed.
struct StoredKey {
    /// ANSI X9.63 uncompressed, 65 bytes.
    var publicKey: [UInt8]
    var sealedScalar: [UInt8]
}

struct RightStore {
    let path: String
    private(set) var rights: [UserID: [String: StoredRight]] = [:]
    /// What the file holds (the last write that succeeded).
    private var durable: [UserID: [String: StoredRight]] = [:]
    private var nextGeneration: UInt64 = 1

    static let header = "localauthd-rights 3"
    /// Rights without accounts, as daemons before S-59 wrote them.
    static let unboundHeader = "localauthd-rights 2"
    /// Rights without keys, as daemons before S-78 wrote them.
    static let keylessHeader = "localauthd-rights 1"
    /// The last life stamp given or read: a new one is later (RightAccount.born).
    private var lastBorn: UInt64 = 0

    /// An empty store on `path` (nothing read): the server's value until the daemon opens the real one.
    init(path: String) { self.path = path }

    static func open(directory: String) throws -> RightStore {
        var store = RightStore(path: directory + "/rights")
        guard File.exists(store.path) else { return store }
        let bytes = try File.read(store.path, maxSize: 256 << 20)
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let first = lines.first.map(String.init)
        let fieldCount: Int
        switch first {
        case header: fieldCount = 7
        case unboundHeader: fieldCount = 6
        case keylessHeader: fieldCount = 5
        default: throw StoreError(store.path, 1, "unknown header")
        }
        for (index, line) in lines.enumerated().dropFirst() where !line.isEmpty {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == fieldCount, let uid = UserID(fields[0]), RightIdentifier.isValid(fields[1]),
                  let requirement = RightRequirement(rawValue: fields[2]) else {
                throw StoreError(store.path, index + 1, "malformed right")
            }
            let domainState = fields[3] == "-" ? "" : fields[3]
            var sealed: [UInt8]?
            if fields[4] != "-" {
                guard let box = hexBytes(fields[4]) else { throw StoreError(store.path, index + 1, "malformed secret") }
                sealed = box
            }
            var key: StoredKey?
            if fieldCount >= 6, fields[5] != "-" {
                let halves = fields[5].split(separator: ":", omittingEmptySubsequences: false).map(String.init)
                guard halves.count == 2, halves[0].utf8.count == 2 * 65, let publicKey = Hex.bytes(halves[0].utf8, .lowercaseOnly),
                      let box = hexBytes(halves[1]) else {
                    throw StoreError(store.path, index + 1, "malformed key")
                }
                key = StoredKey(publicKey: publicKey, sealedScalar: box)
            }
            var account: RightAccount?
            if fieldCount == 7, fields[6] != "?" {
                guard let parsed = parseAccount(fields[6]) else { throw StoreError(store.path, index + 1, "malformed account") }
                account = parsed
                store.lastBorn = max(store.lastBorn, parsed.born)
            }
            store.insert(uid, fields[1], requirement: requirement, domainState: domainState, sealed: sealed, key: key,
                         account: account)
        }
        store.durable = store.rights
        return store
    }

    func right(_ uid: UserID, _ identifier: String) -> StoredRight? { rights[uid]?[identifier] }

    func count(_ uid: UserID) -> Int { rights[uid]?.count ?? 0 }

    /// Saves (replacing a right of the same identifier), in memory; the
    /// file is written by `encoded()`'s bytes reaching the disk.
    mutating func save(_ uid: UserID, _ identifier: String, requirement: RightRequirement, domainState: String,
                       sealed: [UInt8]?, key: StoredKey?, account: RightAccount) {
        insert(uid, identifier, requirement: requirement, domainState: domainState, sealed: sealed, key: key,
               account: account)
    }

    /// The uids that have rights.
    var uids: [UserID] { Array(rights.keys) }

    /// S-59: the life `uid`'s bound rights belong to, if any is bound.
    func account(of uid: UserID) -> RightAccount? {
        rights[uid]?.values.lazy.compactMap(\.account).first
    }

    /// A stamp for a new life: now (µs), and later than every one given or read.
    mutating func newBorn(now: Int64) -> UInt64 {
        lastBorn = max(UInt64(max(now, 0)), lastBorn + 1)
        return lastBorn
    }

    /// S-59: the user database names `uid` `name` (nil: no entry) now.
    /// Rights bound to another name are dropped (returned); rights not
    /// bound yet are bound to the uid's current life, or a new one (stamped
    /// at `now`, µs), their boxes sealed again under `key` with the new
    /// additional data. `changed`: the file must be written.
    mutating func bind(_ uid: UserID, to name: String?, key: [UInt8], now: Int64)
        -> (dropped: [(String, StoredRight)], changed: Bool) {
        guard var owned = rights[uid] else { return ([], false) }
        var dropped: [(String, StoredRight)] = []
        for identifier in owned.keys.sorted() where owned[identifier]!.account.map({ $0.name != name }) ?? false {
            dropped.append((identifier, owned.removeValue(forKey: identifier)!))
        }
        var changed = !dropped.isEmpty
        if owned.values.contains(where: { $0.account == nil }) {
            let account = owned.values.lazy.compactMap(\.account).first ?? RightAccount(name: name, born: newBorn(now: now))
            for identifier in owned.keys where owned[identifier]!.account == nil {
                owned[identifier]!.reseal(uid, identifier, to: account, key: key)
                changed = true
            }
        }
        rights[uid] = owned.isEmpty ? nil : owned
        return (dropped, changed)
    }

    /// Removes, in memory; returns the removed rights.
    mutating func remove(_ uid: UserID, _ identifiers: [String]) -> [(String, StoredRight)] {
        var removed: [(String, StoredRight)] = []
        for identifier in identifiers {
            if let right = rights[uid]?.removeValue(forKey: identifier) { removed.append((identifier, right)) }
        }
        if rights[uid]?.isEmpty == true { rights[uid] = nil }
        return removed
    }

    /// The rights as they are now, to hand to `written` once their bytes are durable.
    var current: [UserID: [String: StoredRight]] { rights }

    /// `snapshot` (an earlier `current`) reached the disk.
    mutating func written(_ snapshot: [UserID: [String: StoredRight]]) { durable = snapshot }

    /// A write failed: every change since the last durable one is dropped.
    mutating func rollBack() { rights = durable }

    /// The secret box's additional data: the right, then its account (S-59;
    /// nil: an unbound right of an older file).
    static func additionalData(_ uid: UserID, _ identifier: String, _ account: RightAccount?) -> [UInt8] {
        Array("localauthd-right-secret\0\(uid)\0\(identifier)".utf8) + (account.map { [0] + $0.additionalData } ?? [])
    }

    /// The key box's additional data: the right, its account, then its public key.
    static func keyAdditionalData(_ uid: UserID, _ identifier: String, _ account: RightAccount?, publicKey: [UInt8]) -> [UInt8] {
        Array("localauthd-right-key\0\(uid)\0\(identifier)\0".utf8) + (account.map { $0.additionalData + [0] } ?? [])
            + publicKey
    }

    private mutating func insert(_ uid: UserID, _ identifier: String, requirement: RightRequirement, domainState: String,
                                 sealed: [UInt8]?, key: StoredKey?, account: RightAccount?) {
        rights[uid, default: [:]][identifier] = StoredRight(
            requirement: requirement, domainState: domainState, sealed: sealed, key: key, generation: nextGeneration,
            account: account)
        nextGeneration += 1
    }

    /// ACCOUNT: `BORN:-` or `BORN:NAME-IN-HEX` (a name AccountName allows).
    private static func parseAccount(_ field: String) -> RightAccount? {
        let parts = field.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let born = UInt64(parts[0]), String(born) == parts[0] else { return nil }
        if parts[1] == "-" { return RightAccount(name: nil, born: born) }
        guard let bytes = Hex.bytes(parts[1].utf8, .lowercaseOnly), let name = String(validating: bytes, as: UTF8.self),
              AccountName.isValid(name) else { return nil }
        return RightAccount(name: name, born: born)
    }

    /// The file's bytes for the rights as they are now.
    func encoded() -> [UInt8] {
        var text = RightStore.header + "\n"
        for uid in rights.keys.sorted() {
            for (identifier, right) in rights[uid]!.sorted(by: { $0.key < $1.key }) {
                let sealed = right.sealed.map(lowercaseHex)
                let key = right.key.map { lowercaseHex($0.publicKey) + ":" + lowercaseHex($0.sealedScalar) }
                let account = right.account.map { "\($0.born):" + ($0.name.map { lowercaseHex(Array($0.utf8)) } ?? "-") }
                text += "\(uid) \(identifier) \(right.requirement.wireName) \(right.domainState.isEmpty ? "-" : right.domainState) "
                    + "\(sealed ?? "-") \(key ?? "-") \(account ?? "?")\n"
            }
        }
        return Array(text.utf8)
    }

    /// A sealed secret as this file writes it: lowercase digit pairs, at
    /// least a nonce and a tag long.
    private static func hexBytes(_ text: String) -> [UInt8]? {
        guard text.utf8.count >= 2 * (AESGCM.nonceSize + AESGCM.tagSize) else { return nil }
        return Hex.bytes(text.utf8, .lowercaseOnly)
    }

    struct StoreError: Error, CustomStringConvertible {
        let description: String
        init(_ path: String, _ line: Int, _ what: String) {
            description = "The right store \(path) is damaged (line \(line): \(what)); localauthd refuses to start. "
                + "Move it away to start without the saved rights."
        }
    }
}

extension StoredRight {
    /// S-59: an unbound right's boxes opened with the old additional data
    /// and sealed with its account's, the plaintexts wiped (S-50). A box
    /// that does not open is left as it is (it never opened: `internal`).
    mutating func reseal(_ uid: UserID, _ identifier: String, to account: RightAccount, key: [UInt8]) {
        if let box = sealed, var plain = AESGCM.open(box, key: key, additionalData: RightStore.additionalData(uid, identifier, nil)) {
            sealed = AESGCM.seal(plain, key: key, additionalData: RightStore.additionalData(uid, identifier, account))
            SecretMemory.wipe(&plain)
        }
        if let stored = self.key, var scalar = AESGCM.open(stored.sealedScalar, key: key,
            additionalData: RightStore.keyAdditionalData(uid, identifier, nil, publicKey: stored.publicKey)) {
            self.key!.sealedScalar = AESGCM.seal(scalar, key: key,
                additionalData: RightStore.keyAdditionalData(uid, identifier, account, publicKey: stored.publicKey))
            SecretMemory.wipe(&scalar)
        }
        self.account = account
    }
}

private let hexDigits = (0..<16).map { String($0, radix: 16) }

/// Lower-case hex digit pairs, as the store (and the key's log record) writes bytes.
func lowercaseHex(_ bytes: [UInt8]) -> String {
    bytes.map { byte in hexDigits[Int(byte >> 4)] + hexDigits[Int(byte & 15)] }.joined()
}
