// The login secret's store (S-74, S-76): which users turned the release on,
// and each one's sealed login password, in `STATE/login-secrets`, mode
// 0600, beside `rights`. This value holds them in memory and makes the
// file's bytes; the write is the shell's, off the event loop
// (LoginSecretWrites.swift), and a failed write rolls back to what the file
// last held, as the right store does.
//
// File:
//   localauthd-login-secrets 1 CHECK
//   UID BINDING|- BOX|-          one line per user who turned it on, by uid
//   mac MAC
// CHECK names the key (LoginSecretKeys.check), so a store sealed under
// another daemon's key is told apart from a damaged one; MAC is the HMAC of
// every byte before the `mac` line, so no line can be added, changed or
// dropped by anyone without the key. BINDING and BOX are lower-case hex: the
// HMAC of the uid and the user's shadow line, and the AES-256-GCM box of the
// password, whose additional data holds both (LoginSecretKeys).
//
// The file is trusted only as S-76 says: opened without following a
// symlink, a regular file of this process's uid, mode 0600, one link, no
// ACL, its check and MAC right. Anything else: nothing of it is used.
import Glibc
import LocalAuthCore
import LocalAuthHex
import LocalAuthSystem

/// A user's sealed password and what it is bound to.
package struct LoginSecretCopy: Sendable, Equatable {
    /// HMAC of the uid and the shadow line the password was checked against.
    package var binding: [UInt8]
    /// AES-256-GCM box of the password.
    package var box: [UInt8]
}

struct LoginSecretStore {
    let path: String
    /// Users who turned the release on, with their copy when one is kept.
    private(set) var users: [UserID: LoginSecretCopy?] = [:]
    /// What the file holds (the last write that succeeded).
    private var durable: [UserID: LoginSecretCopy?] = [:]

    static let header = "localauthd-login-secrets 1"
    static let maximumSize = 16 << 20

    init(path: String) { self.path = path }

    func isEnabled(_ uid: UserID) -> Bool { users[uid] != nil }

    func copy(of uid: UserID) -> LoginSecretCopy? { users[uid] ?? nil }

    /// Users with a copy, and the copy.
    var copies: [(UserID, LoginSecretCopy)] { users.compactMap { uid, copy in copy.map { (uid, $0) } } }

    mutating func enable(_ uid: UserID) {
        if users[uid] == nil { users[uid] = .some(nil) }
    }

    /// Turns it off for `uid`; the copy it held, if any.
    mutating func disable(_ uid: UserID) -> LoginSecretCopy? {
        guard let entry = users.removeValue(forKey: uid) else { return nil }
        return entry
    }

    /// Keeps `copy` for an enabled user (replacing theirs).
    mutating func keep(_ copy: LoginSecretCopy, for uid: UserID) {
        guard users[uid] != nil else { return }
        users[uid] = .some(copy)
    }

    /// Removes the user's copy if it is still the one bound to `binding` (or
    /// any copy, with nil); true when one was removed.
    mutating func void(_ uid: UserID, binding: [UInt8]?) -> Bool {
        guard case .some(.some(let copy)) = users[uid], binding.map({ $0 == copy.binding }) ?? true else { return false }
        users[uid] = .some(nil)
        return true
    }

    var current: [UserID: LoginSecretCopy?] { users }
    mutating func written(_ snapshot: [UserID: LoginSecretCopy?]) { durable = snapshot }
    mutating func rollBack() { users = durable }

    // MARK: - The file

    func encoded(_ keys: LoginSecretKeys) -> [UInt8] {
        var text = LoginSecretStore.header + " " + lowercaseHex(keys.check) + "\n"
        for uid in users.keys.sorted() {
            let copy = users[uid] ?? nil
            text += "\(uid) \(copy.map { lowercaseHex($0.binding) } ?? "-") \(copy.map { lowercaseHex($0.box) } ?? "-")\n"
        }
        var bytes = Array(text.utf8)
        bytes += Array("mac \(lowercaseHex(HMACSHA256.mac(key: keys.file, bytes)))\n".utf8)
        return bytes
    }

    /// What `open` found wrong with a file that exists.
    struct Distrust: Error, Equatable {
        var reason: LoginSecretRefusal.Reason
        var why: String
    }

    /// The store at `directory/login-secrets`: empty when there is none,
    /// the users it holds when it is trusted, else the reason it is not.
    static func open(directory: String, keys: LoginSecretKeys) -> (LoginSecretStore, Distrust?) {
        var store = LoginSecretStore(path: directory + "/login-secrets")
        let bytes: [UInt8]
        do {
            guard let read = try readTrusted(store.path) else { return (store, nil) }
            bytes = read
        } catch let distrust as Distrust {
            return (store, distrust)
        } catch {
            return (store, Distrust(reason: .storeUntrusted, why: "\(error)"))
        }
        switch parse(bytes, keys) {
        case .success(let users):
            store.users = users
            store.durable = users
            return (store, nil)
        case .failure(let distrust):
            return (store, distrust)
        }
    }

    /// The file's bytes, nil when it does not exist; throws `Distrust` for
    /// a file that is not this process's own, 0600, single, without ACL.
    private static func readTrusted(_ path: String) throws -> [UInt8]? {
        let opened = Result { () throws(SystemError) -> FileDescriptor in
            try FileDescriptor.open(path, .readOnly, options: .noFollow)
        }
        let fd: FileDescriptor
        switch opened {
        case .success(let descriptor): fd = descriptor
        case .failure(let error) where error.errno == ENOENT: return nil
        case .failure(let error) where error.errno == ELOOP:
            throw Distrust(reason: .storeUntrusted, why: "it is a symlink, which is not followed")
        case .failure(let error): throw error
        }
        defer { try? fd.close() }
        var info = stat()
        guard fstat(fd.rawValue, &info) == 0 else { throw SystemError.current("fstat", path: path) }
        if info.st_uid != geteuid() {
            throw Distrust(reason: .storeUntrusted, why: "it belongs to uid \(info.st_uid), not to the daemon's uid \(geteuid())")
        }
        if info.st_mode & 0o7777 != 0o600 {
            throw Distrust(reason: .storeUntrusted, why: "its mode is \(String(info.st_mode & 0o7777, radix: 8)), not 600")
        }
        if info.st_nlink != 1 { throw Distrust(reason: .storeUntrusted, why: "it has \(info.st_nlink) links") }
        if try fd.acl(.access) != nil { throw Distrust(reason: .storeUntrusted, why: "it has an access ACL") }
        guard info.st_size <= maximumSize else { throw Distrust(reason: .storeUntrusted, why: "it is larger than 16 MiB") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) -> Int in try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...])) }
            }
            let read = try got.get()
            if read == 0 { break }
            count += read
        }
        guard count <= Int(info.st_size) else { throw Distrust(reason: .storeUntrusted, why: "it grew while it was read") }
        return Array(bytes[..<count])
    }

    /// The users of a file's bytes, or why they are not to be trusted.
    static func parse(_ bytes: [UInt8], _ keys: LoginSecretKeys) -> Result<[UserID: LoginSecretCopy?], Distrust> {
        func untrusted(_ why: String) -> Result<[UserID: LoginSecretCopy?], Distrust> {
            .failure(Distrust(reason: .storeUntrusted, why: why))
        }
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard let first = lines.first, bytes.last == UInt8(ascii: "\n") else { return untrusted("it is cut short") }
        let head = String(decoding: first, as: UTF8.self)
        guard head.hasPrefix(header + " "), let check = Hex.bytes(head.utf8.dropFirst(header.utf8.count + 1), .lowercaseOnly),
              check.count == keys.check.count else { return untrusted("its first line is not \"\(header) CHECK\"") }
        guard HMACSHA256.equal(check, keys.check) else {
            return .failure(Distrust(reason: .foreignKey, why: "it was sealed under another key than this daemon's"))
        }
        // The last line (before the final LF) is the MAC of everything before it.
        guard lines.count >= 3, lines[lines.count - 1].isEmpty else { return untrusted("it has no mac line") }
        let macLine = lines[lines.count - 2]
        let macText = String(decoding: macLine, as: UTF8.self)
        guard macText.hasPrefix("mac "), let mac = Hex.bytes(macText.utf8.dropFirst(4), .lowercaseOnly) else {
            return untrusted("it has no mac line")
        }
        let covered = bytes[..<macLine.startIndex]
        guard HMACSHA256.equal(covered.withUnsafeBytes { HMACSHA256.mac(key: keys.file, $0) }, mac) else {
            return untrusted("its MAC does not verify (it was changed by someone without the key)")
        }
        var users: [UserID: LoginSecretCopy?] = [:]
        for line in lines[1..<(lines.count - 2)] {
            let fields = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            guard fields.count == 3, let uid = UserID(String(decoding: fields[0], as: UTF8.self)), users[uid] == nil else {
                return untrusted("a line is malformed")
            }
            let dash = [UInt8(ascii: "-")]
            if Array(fields[1]) == dash, Array(fields[2]) == dash {
                users[uid] = .some(nil)
                continue
            }
            guard let binding = Hex.bytes(fields[1], .lowercaseOnly), binding.count == HMACSHA256.size,
                  let box = Hex.bytes(fields[2], .lowercaseOnly), box.count > AESGCM.nonceSize + AESGCM.tagSize else {
                return untrusted("a line is malformed")
            }
            users[uid] = .some(LoginSecretCopy(binding: binding, box: box))
        }
        return .success(users)
    }
}

/// The keys of the login secret, derived from the daemon's key (the
/// systemd credential, [Secrets]) so that each has one use: sealing,
/// binding, the file's MAC, and a check value that names the key.
package struct LoginSecretKeys: Sendable {
    let seal: [UInt8]
    let binding: [UInt8]
    let file: [UInt8]
    /// 16 bytes that tell this key from another without revealing it.
    let check: [UInt8]

    init(daemonKey: [UInt8]) {
        func derive(_ label: String) -> [UInt8] { HMACSHA256.mac(key: daemonKey, Array("localauthd login-secret \(label)".utf8)) }
        seal = derive("seal")
        binding = derive("binding")
        file = derive("file")
        check = Array(derive("key-check").prefix(16))
    }

    /// The binding of `uid`'s copy to their shadow line.
    func binding(uid: UserID, line: ArraySlice<UInt8>) -> [UInt8] {
        HMACSHA256.mac(key: binding, Array("\(uid)\0".utf8) + line)
    }

    func seal(_ password: [UInt8], uid: UserID, binding: [UInt8]) -> LoginSecretCopy {
        LoginSecretCopy(binding: binding, box: AESGCM.seal(password, key: seal, additionalData: additionalData(uid, binding)))
    }

    /// The password (the caller wipes it), or nil when the box does not open.
    func open(_ copy: LoginSecretCopy, uid: UserID) -> [UInt8]? {
        AESGCM.open(copy.box, key: seal, additionalData: additionalData(uid, copy.binding))
    }

    private func additionalData(_ uid: UserID, _ binding: [UInt8]) -> [UInt8] {
        Array("localauthd-login-secret\0\(uid)\0".utf8) + binding
    }
}
