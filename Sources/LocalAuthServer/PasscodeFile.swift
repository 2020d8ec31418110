// The builtin passcode backend's store: one yescrypt hash per uid with a set
// passcode, in `<StateDirectory>/passcodes` (mode 0600; its format and the
// one reading of it are LocalAuthLog's PasscodeStoreFile), replaced atomically
// (temp file, fsync, rename, fsync dir). Only hashes of *set* passcodes are
// ever written (S-39); wrong attempts leave no trace on disk.
import LocalAuthCore
import LocalAuthLog
import LocalAuthSystem

struct PasscodeFile {
    let path: String
    private(set) var hashes: [UserID: String] = [:]

    init(directory: String) throws {
        path = PasscodeStoreFile.path(directory)
        do { hashes = try PasscodeStoreFile.read(directory) } catch let malformed as PasscodeStoreFile.Malformed {
            throw StoreError(malformed.description)
        }
    }

    func hash(for uid: UserID) -> String? { hashes[uid] }

    mutating func set(_ hash: String?, for uid: UserID) throws {
        var next = hashes
        next[uid] = hash
        try AtomicFile.write(path, bytes: Array(PasscodeStoreFile.text(next).utf8), mode: 0o600)
        hashes = next
    }
}

struct StoreError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
