// S-39: no secret in the state directory, the log, snapshots, stderr or stdout.
// Every passcode a test uses is registered here; at the end of each test the
// daemon's files are searched for it in every encoding we could think of.
import Foundation
import Glibc
import LocalAuthSystem
import LocalAuthTestSupport
import Synchronization
import XCTest

enum Secrets {
    private static let registry = Mutex<Set<String>>([])

    /// Registers and returns a secret, so the scan looks for it.
    static func make(_ secret: String) -> String {
        registry.withLock { _ = $0.insert(secret) }
        return secret
    }

    static var all: Set<String> { registry.withLock { $0 } }

    /// Byte patterns that would betray `secret`.
    static func encodings(of secret: String) -> [(String, [UInt8])] {
        let utf8 = Array(secret.utf8)
        var result: [(String, [UInt8])] = [("plain", utf8)]
        let hexLower = utf8.map { String(format: "%02x", $0) }.joined()
        result.append(("hex", Array(hexLower.utf8)))
        result.append(("HEX", Array(hexLower.uppercased().utf8)))
        // Base64 at each of the three alignments, without the edge characters
        // that depend on the neighbours.
        for shift in 0..<3 {
            let padded = [UInt8](repeating: 0, count: shift) + utf8
            let encoded = Array(Data(padded).base64EncodedString().utf8)
            // Output character i covers input bits 6i..<6i+6: keep those made of the secret's bits only.
            let first = (8 * shift + 5) / 6
            let last = (8 * (shift + utf8.count) - 6) / 6
            if last - first >= 3, last < encoded.count {
                result.append(("base64+\(shift)", Array(encoded[first...last])))
            }
        }
        var le: [UInt8] = [], be: [UInt8] = []
        for unit in secret.utf16 {
            le += [UInt8(unit & 0xff), UInt8(unit >> 8)]
            be += [UInt8(unit >> 8), UInt8(unit & 0xff)]
        }
        result.append(("utf16le", le))
        result.append(("utf16be", be))
        result.append(("reversed", utf8.reversed()))
        // A plain hash of it, raw and hex (S-39: not a hash of either).
        let digest = utf8.withUnsafeBytes { SHA256.hash($0) }
        result.append(("sha256", digest))
        result.append(("sha256hex", Array(digest.map { String(format: "%02x", $0) }.joined().utf8)))
        return result
    }

    /// Files under `root` (recursively), regular files only.
    static func files(under root: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
        var result: [String] = []
        for case let name as String in enumerator {
            let path = root + "/" + name
            var info = stat()
            if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG { result.append(path) }
        }
        return result
    }

    /// Finds every registered secret in the given files: [(file, secret, encoding)].
    static func leaks(in paths: [String], secrets: Set<String> = Secrets.all) -> [String] {
        var found: [String] = []
        let patterns = secrets.sorted().flatMap { secret in encodings(of: secret).map { (secret, $0.0, $0.1) } }
        for path in paths {
            let bytes = readBytes(path)
            guard !bytes.isEmpty else { continue }
            for (secret, encoding, pattern) in patterns where contains(bytes, pattern) {
                found.append("\(path): \(secret) as \(encoding)")
            }
        }
        return found
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        // memchr + memcmp: log segments carry megabytes of preallocated
        // zeros, too many for a byte loop in a debug build.
        return haystack.withUnsafeBytes { hay in
            needle.withUnsafeBytes { pin in
                let base = hay.baseAddress!
                let last = hay.count - pin.count
                var index = 0
                while index <= last {
                    guard let found = memchr(base + index, Int32(pin[0]), last - index + 1) else { return false }
                    index = base.distance(to: UnsafeRawPointer(found))
                    if memcmp(base + index, pin.baseAddress!, pin.count) == 0 { return true }
                    index += 1
                }
                return false
            }
        }
    }
}

/// Permissions (issue 8 item 7): the state directory 0700, the passcode file
/// 0600, nothing under it readable, writable or searchable by others. With
/// AdminGroup= or AuditGroup= the daemon lets those groups traverse the state
/// directory through a POSIX ACL (LogReadAccess), whose mask shows as the
/// group bits: 0710 then, and only with an ACL that grants groups traverse
/// (x) and nothing more.
func permissionProblems(stateDirectory: String) -> [String] {
    var problems: [String] = []
    var info = stat()
    if stat(stateDirectory, &info) == 0 {
        let mode = info.st_mode & 0o7777
        let acl = (try? AccessControlList.read(stateDirectory, .access)) ?? nil
        let traverseThroughACL = mode == 0o710 && acl.map {
            $0.other == 0 && $0.users.isEmpty && !$0.groups.isEmpty && $0.groups.values.allSatisfy { $0 == 1 }
        } == true
        if mode != 0o700 && !traverseThroughACL { problems.append("\(stateDirectory) has mode \(String(mode, radix: 8))") }
    }
    if stat(stateDirectory + "/passcodes", &info) == 0, info.st_mode & 0o7777 != 0o600 {
        problems.append("passcodes has mode \(String(info.st_mode & 0o7777, radix: 8))")
    }
    if let enumerator = FileManager.default.enumerator(atPath: stateDirectory) {
        for case let name as String in enumerator {
            let path = stateDirectory + "/" + name
            if lstat(path, &info) == 0, info.st_mode & 0o007 != 0 {
                problems.append("\(name) is accessible to others: mode \(String(info.st_mode & 0o7777, radix: 8))")
            }
        }
    }
    return problems
}
