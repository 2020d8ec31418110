// A right's key as it rests in STATE/rights (the daemon's RightStore.swift
// documents the line: `UID IDENTIFIER REQUIREMENT DOMAIN-STATE SEALED
// PUBLIC:SEALED-SCALAR`), for the tests of what is at rest and in memory:
// the public key, and the box of the private scalar, opened with a daemon's
// key exactly as the daemon opens it (AES-256-GCM, the additional data
// binding it to the uid, the identifier and the public key).
import LocalAuthSystem

public struct SealedRightKey {
    public let uid: UInt32
    public let identifier: String
    /// ANSI X9.63 uncompressed, 65 bytes.
    public let publicKey: [UInt8]
    public let sealedScalar: [UInt8]
    /// S-59: the additional data's account part, "account\0BORN\0NAME\0" (empty for an unbound right).
    let account: [UInt8]

    /// The key of `identifier` of `uid` in the store of `stateDirectory`, or nil if it has none there.
    public init?(stateDirectory: String, uid: UInt32, identifier: String) {
        let prefix = "\(uid) \(identifier) "
        guard let line = readText(stateDirectory + "/rights").split(separator: "\n").first(where: { $0.hasPrefix(prefix) }),
              case let fields = line.split(separator: " "), fields.count >= 6 else { return nil }
        let halves = fields[5].split(separator: ":")
        guard halves.count == 2, let publicKey = Self.bytes(halves[0]), let sealed = Self.bytes(halves[1]) else { return nil }
        // Version 3 (S-59): the seventh field is the account, BORN:NAME-IN-HEX or BORN:-.
        if fields.count == 7, fields[6] != "?" {
            let parts = fields[6].split(separator: ":")
            guard parts.count == 2 else { return nil }
            let name = parts[1] == "-" ? [] : (Self.bytes(parts[1]) ?? [])
            account = Array("account\u{0}\(parts[0])\u{0}".utf8) + name + [0]
        } else {
            account = []
        }
        self.uid = uid
        self.identifier = identifier
        self.publicKey = publicKey
        sealedScalar = sealed
    }

    /// The private scalar (32 bytes) if the box opens with `daemonKey`.
    public func open(with daemonKey: [UInt8]) -> [UInt8]? {
        AESGCM.open(sealedScalar, key: daemonKey,
                    additionalData: Array("localauthd-right-key\u{0}\(uid)\u{0}\(identifier)\u{0}".utf8) + account + publicKey)
    }

    private static func bytes(_ hex: Substring) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
