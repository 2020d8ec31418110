// The daemon's key for LARight's secrets (PROTOCOL.md v1.1): 32 bytes for
// AES-256-GCM, from the first of
//   1. `[Secrets] KeyFile=`, when set (it must exist);
//   2. `$CREDENTIALS_DIRECTORY/localauthd.key`, the systemd credential
//      (`LoadCredentialEncrypted=localauthd.key:...` in the unit, sealed by
//      `systemd-creds encrypt`, which scripts/install does once);
//   3. `STATE/secrets.key`, created with 32 random bytes, mode 0600, if absent
//      (the embedded default, no systemd).
// A key file holds the 32 bytes raw, or as 64 hex digits (an optional final
// newline allowed). Anything else stops the daemon with a message naming the
// file: a wrong key would make every stored secret unreadable.
import Glibc
import LocalAuthConfig
import LocalAuthHex
import LocalAuthSystem

struct SecretKey {
    let bytes: [UInt8]
    /// Where it came from (for the start-up message; never the key).
    let source: String

    static func load(_ secrets: DaemonConfiguration.Secrets, stateDirectory: String) throws -> SecretKey {
        if let path = secrets.keyFile { return try read(path) }
        if let directory = getenv("CREDENTIALS_DIRECTORY").map({ String(cString: $0) }), !directory.isEmpty,
           File.exists(directory + "/localauthd.key") {
            return try read(directory + "/localauthd.key")
        }
        let path = stateDirectory + "/secrets.key"
        if !File.exists(path) {
            var fresh = SecureRandom.bytes(AESGCM.keySize)
            defer { SecretMemory.wipe(&fresh) }
            try AtomicFile.write(path, bytes: fresh, mode: 0o600)
        }
        return try read(path)
    }

    private static func read(_ path: String) throws -> SecretKey {
        var raw: [UInt8]
        do { raw = try File.read(path, maxSize: 4096) } catch {
            throw KeyError("Failed to read the secrets key \(path): \(error)")
        }
        defer { SecretMemory.wipe(&raw) }
        if raw.count == AESGCM.keySize { return SecretKey(bytes: raw, source: path) }
        var text = raw
        if text.last == UInt8(ascii: "\n") { text.removeLast() }
        if text.count == 2 * AESGCM.keySize, let bytes = Hex.bytes(text) { return SecretKey(bytes: bytes, source: path) }
        throw KeyError("The secrets key \(path) is not 32 bytes (raw, or 64 hex digits); make one with "
            + "`head -c 32 /dev/urandom > \(path)`, or remove it to have localauthd create one (stored secrets are then lost).")
    }

    struct KeyError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
