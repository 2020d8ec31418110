// The shadow file (shadow(5)) read as hostile input for the login-password
// passcode backend (S-44): bounded size, lines that do not parse are
// skipped rather than trusted, and the bytes read are wiped once parsed,
// because the hashes in it are secrets of their own (S-39). Only the name
// and the hash field are used; ageing fields are pam_unix's business.
// Names are turned into uids through NSS (getpwnam_r), which may block:
// everything here runs on a worker or at start-up, never on the event loop.
import CLocalAuthShim
import Glibc

public enum ShadowFile {
    /// Larger files are refused: a shadow file of a million users is ~100 MB,
    /// far beyond any machine this daemon serves.
    public static let maximumSize = 16 << 20
    static let maximumNameBytes = 256
    static let maximumHashBytes = 1024

    /// A hash that can verify a password: not empty, not locked (`!`) and
    /// not disabled (`*`), per S-44.
    public static func isUsable(_ hash: String) -> Bool {
        guard let first = hash.utf8.first else { return false }
        return first != UInt8(ascii: "!") && first != UInt8(ascii: "*")
    }

    /// name -> whether its hash is usable (the first line of a name wins),
    /// for every line that parses, without copying any hash out of
    /// the buffer (the scanner needs no more, and copies are not wiped).
    public static func usability(_ bytes: [UInt8]) -> [String: Bool] {
        var entries: [String: Bool] = [:]
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            guard let (name, hash) = fields(line), entries[name] == nil else { continue }
            let first = hash.first
            entries[name] = first != nil && first != UInt8(ascii: "!") && first != UInt8(ascii: "*")
        }
        return entries
    }

    /// The hash field of `name`, nil when the file has no such line; the
    /// first line of a name wins, as getspnam(3) does.
    public static func hash(for name: String, in bytes: [UInt8]) -> String? {
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            if let (found, hash) = entry(line), found == name { return hash }
        }
        return nil
    }

    /// Reads the file (bounded), hands its bytes to `body`, then wipes them.
    public static func withContents<T>(_ path: String, maxSize: Int = maximumSize,
                                       _ body: ([UInt8]) -> T) throws(SystemError) -> T {
        var bytes = try File.read(path, maxSize: maxSize)
        defer { wipe(&bytes) }
        return body(bytes)
    }

    /// One line: `name:hash:...`. Names are printable ASCII without `:`,
    /// the NIS compat markers `+`/`-` are not entries, hashes are printable ASCII.
    static func entry(_ line: ArraySlice<UInt8>) -> (String, String)? {
        guard let (name, hash) = fields(line) else { return nil }
        return (name, String(decoding: hash, as: UTF8.self))
    }

    /// The name and the hash field's bytes of one line, or nil.
    static func fields(_ line: ArraySlice<UInt8>) -> (String, ArraySlice<UInt8>)? {
        guard let first = line.firstIndex(of: UInt8(ascii: ":")), first > line.startIndex else { return nil }
        let nameBytes = line[line.startIndex..<first]
        guard nameBytes.count <= maximumNameBytes, nameBytes.allSatisfy(isPrintable),
              nameBytes.first != UInt8(ascii: "+"), nameBytes.first != UInt8(ascii: "-") else { return nil }
        let rest = line[(first + 1)...]
        let hashBytes = rest.prefix { $0 != UInt8(ascii: ":") }
        // A line without the second colon is cut short: not an entry.
        guard hashBytes.count < rest.count, hashBytes.count <= maximumHashBytes,
              hashBytes.allSatisfy(isPrintable) else { return nil }
        return (String(decoding: nameBytes, as: UTF8.self), hashBytes)
    }

    private static func isPrintable(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7f }
}

extension Accounts {
    /// The uid of user `name`, or nil when there is no such user (NSS).
    public static func uid(named name: String) throws(SystemError) -> UInt32? {
        var entry = passwd()
        var size = 1024
        while true {
            let buffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: size)
            defer { buffer.deallocate() }
            var found: UnsafeMutablePointer<passwd>?
            let rc = getpwnam_r(name, &entry, buffer.baseAddress!, buffer.count, &found)
            switch rc {
            case 0: return found.map { $0.pointee.pw_uid }
            case EINTR: continue
            case ERANGE where size < 1 << 20: size *= 2
            default: throw SystemError(call: "getpwnam_r", errno: rc, path: name)
            }
        }
    }
}

/// Wipes a byte array in place in a way the optimiser keeps.
private func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { buffer in
        if let base = buffer.baseAddress { la_scrub(base, buffer.count) }
    }
}
