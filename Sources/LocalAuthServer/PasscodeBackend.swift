// Where passcodes are checked and kept. The core asks the backend for the
// slow work as closures that run on a worker (they capture what they need
// and touch nothing else), and reads whether a user has one; writing a
// record is the shell's (`PasscodeStore.commit`, performing the core's
// `.commitPasscode`, whose answer comes back as `passcodeCommitted`). The
// builtin backend keeps yescrypt hashes of set passcodes in the state
// directory (PasscodeStore.swift); a PAM or TPM-backed one would plug in here.
import LocalAuthCore
import LocalAuthSystem

package protocol PasscodeBackend: AnyObject {
    var name: String { get }
    func isSet(_ uid: UserID) -> Bool
    /// Users with a passcode, to reconcile with the log at start.
    var users: [UserID] { get }
    /// A check of a candidate secret, to run on a worker.
    func checker(for uid: UserID) -> @Sendable ([UInt8]) -> Bool
    /// Turns a new secret into the record `commit` stores, on a worker.
    var recordMaker: @Sendable ([UInt8]) throws -> String { get }
}

/// A backend with records to write: the shell's side (`.commitPasscode`).
package protocol PasscodeStore: PasscodeBackend {
    /// Stores (or with nil removes) a user's record, durably; `isSet` then says so.
    func commit(_ record: String?, for uid: UserID) throws
}

/// `[Passcode] Backend=builtin`.
final class BuiltinPasscodes: PasscodeStore {
    let name = "builtin"
    private var store: PasscodeFile

    init(directory: String) throws {
        store = try PasscodeFile(directory: directory)
    }

    func isSet(_ uid: UserID) -> Bool { store.hash(for: uid) != nil }
    var users: [UserID] { Array(store.hashes.keys) }

    func checker(for uid: UserID) -> @Sendable ([UInt8]) -> Bool {
        let hash = store.hash(for: uid)
        return { secret in hash.map { Yescrypt.verify(secret: secret, hash: $0) } ?? false }
    }

    let recordMaker: @Sendable ([UInt8]) throws -> String = { secret in try Yescrypt.hash(secret: secret) }

    func commit(_ record: String?, for uid: UserID) throws {
        try store.set(record, for: uid)
    }
}
