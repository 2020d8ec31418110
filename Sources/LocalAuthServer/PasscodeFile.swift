// The builtin passcode backend's store: one yescrypt hash per uid with a set
// passcode, in `<StateDirectory>/passcodes` (mode 0600), replaced atomically
// (temp file, fsync, rename, fsync dir). Only hashes of *set* passcodes are
// ever written (S-39); wrong attempts leave no trace on disk.
import LocalAuthCore
import LocalAuthSystem

struct PasscodeFile {
    let path: String
    private(set) var hashes: [UserID: String] = [:]

    init(directory: String) throws {
        path = directory + "/passcodes"
        guard File.exists(path) else { return }
        let bytes = try File.read(path, maxSize: 64 << 20)
        for (number, line) in bytes.split(separator: UInt8(ascii: "\n")).enumerated() {
            let text = String(decoding: line, as: UTF8.self)
            let parts = text.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let uid = UserID(parts[0]), parts[1].hasPrefix("$") else {
                throw StoreError("\(path):\(number + 1): malformed passcode entry")
            }
            hashes[uid] = String(parts[1])
        }
    }

    func hash(for uid: UserID) -> String? { hashes[uid] }

    mutating func set(_ hash: String?, for uid: UserID) throws {
        var next = hashes
        next[uid] = hash
        var text = ""
        for key in next.keys.sorted() { text += "\(key):\(next[key]!)\n" }
        try AtomicFile.write(path, bytes: Array(text.utf8), mode: 0o600)
        hashes = next
    }
}

struct StoreError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
