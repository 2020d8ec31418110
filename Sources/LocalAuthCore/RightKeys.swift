// The algorithms a right's key offers (PROTOCOL.md v1.3, S-80), named as on
// the wire: Apple's SecKeyAlgorithm raw values. One table serves the
// daemon (which operation and hash a request asks for), the log (a
// `right-key-used` event names one of these or is corrupt) and the client
// (LAPrivateKey.canSign(using:) and the rest). The key is P-256: these are
// exactly the EC algorithms of Apple's Security framework that a P-256 key
// supports for the operation, less the RFC 4754 signature forms.

/// What the private key does for a request (its public counterpart in parentheses).
public enum KeyOperation: String, Sendable, CaseIterable, Hashable {
    /// ECDSA (verify).
    case sign
    /// Apple's ECIES (encrypt).
    case decrypt
    /// ECDH, raw or through the X9.63 KDF.
    case exchange

    public var wireName: String { rawValue }
}

/// The hashes of the algorithm names.
public enum KeyHash: String, Sendable, CaseIterable, Hashable {
    case sha1 = "SHA1", sha224 = "SHA224", sha256 = "SHA256", sha384 = "SHA384", sha512 = "SHA512"
}

public struct KeyAlgorithm: Sendable, Hashable {
    public enum Form: Sendable, Hashable {
        /// ECDSA over a digest the caller made: of exactly `hash`'s size, or of any size (nil).
        case digest(KeyHash?)
        /// ECDSA over a message the daemon hashes.
        case message(KeyHash)
        /// Apple's ECIES; the IV from the KDF (`-KDFIV`) or zero.
        case ecies(KeyHash, variableIV: Bool)
        /// ECDH: Z itself (nil) or X9.63 KDF(Z) with that hash.
        case keyExchange(KeyHash?)
    }

    /// Apple's raw value, e.g. `algid:sign:ECDSA:message-X962:SHA256`.
    public let name: String
    public let form: Form

    public var operation: KeyOperation {
        switch form {
        case .digest, .message: return .sign
        case .ecies: return .decrypt
        case .keyExchange: return .exchange
        }
    }

    /// The offered algorithm of that raw value, whatever the operation.
    public static func named(_ name: String) -> KeyAlgorithm? { byName[name] }

    /// The offered algorithm of that raw value for `operation`, else nil (errSecParam).
    public static func named(_ name: String, for operation: KeyOperation) -> KeyAlgorithm? {
        guard let algorithm = byName[name], algorithm.operation == operation else { return nil }
        return algorithm
    }

    public static let all: [KeyAlgorithm] = {
        var all: [KeyAlgorithm] = [KeyAlgorithm(name: "algid:sign:ECDSA:digest-X962", form: .digest(nil))]
        for hash in KeyHash.allCases {
            all.append(KeyAlgorithm(name: "algid:sign:ECDSA:digest-X962:\(hash.rawValue)", form: .digest(hash)))
            all.append(KeyAlgorithm(name: "algid:sign:ECDSA:message-X962:\(hash.rawValue)", form: .message(hash)))
        }
        for exchange in ["ECDH", "ECDHC"] {
            all.append(KeyAlgorithm(name: "algid:keyexchange:\(exchange)", form: .keyExchange(nil)))
            for hash in KeyHash.allCases {
                all.append(KeyAlgorithm(name: "algid:keyexchange:\(exchange):KDFX963:\(hash.rawValue)", form: .keyExchange(hash)))
                all.append(KeyAlgorithm(name: "algid:encrypt:ECIES:\(exchange):KDFX963:\(hash.rawValue):AESGCM",
                                        form: .ecies(hash, variableIV: false)))
                // Apple has no SHA-1 variable-IV ECIES.
                if hash != .sha1 {
                    all.append(KeyAlgorithm(name: "algid:encrypt:ECIES:\(exchange):KDFX963:\(hash.rawValue):AESGCM-KDFIV",
                                            form: .ecies(hash, variableIV: true)))
                }
            }
        }
        return all
    }()

    private static let byName: [String: KeyAlgorithm] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
}
