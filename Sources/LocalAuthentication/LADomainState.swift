// Apple's `LADomainState` (iOS 18 / macOS 15), the replacement for
// `evaluatedPolicyDomainState`: what a context learned about the enrolled
// authentication mechanisms at its last check.
//
// - `biometry.stateHash` is the user's S-10 token as `Data`: the bytes of the
//   hex `domain-state=` of the context's last successful biometric
//   `can-evaluate` or evaluation (nil before one; nil again after a failed
//   check, as `evaluatedPolicyDomainState` is), identical while the enrolled
//   set is unchanged, different after any enroll or unenroll.
// - No companions exist on this machine (S-18): `companion` lists none and
//   has no hash.
// - `stateHash`, Apple's "combined" hash, is the biometry hash: biometry is
//   the only mechanism with a state here (docs/decisions/0002-apple-api-ios18.md).

import Foundation
import LocalAuthHex

/// Apple's `LACompanionType` (LACompanionType.h, raw values of LAPublicDefines.h).
@available(macOS 15.0, iOS 18.0, *)
public enum LACompanionType: Int, Sendable, Hashable, CaseIterable {
    /// A paired Apple Watch (macOS only on Apple platforms).
    case watch = 1
    /// A paired Mac (iOS only on Apple platforms).
    case mac = 2
}

/// The state of biometry as the context last saw it.
@available(macOS 15.0, iOS 18.0, *)
public final class LADomainStateBiometry: NSObject, @unchecked Sendable {
    /// The sensor's type, `.none` before the context's first check (S-17).
    public let biometryType: LABiometryType
    /// The enrolled set's token (S-10), nil when the context has none.
    public let stateHash: Data?

    init(biometryType: LABiometryType, stateHash: Data?) {
        self.biometryType = biometryType
        self.stateHash = stateHash
    }
}

/// Companions as the context last saw them: none exist here.
@available(macOS 15.0, iOS 18.0, *)
public final class LADomainStateCompanion: NSObject, @unchecked Sendable {
    /// The companion types paired with this user: always empty.
    public let availableCompanionTypes: Set<LACompanionType>
    /// The combined hash of the paired companions: nil (none are paired).
    public let stateHash: Data?

    override init() {
        availableCompanionTypes = []
        stateHash = nil
        super.init()
    }

    /// The hash of one companion type's pairings: nil (none are paired).
    public func stateHash(for companionType: LACompanionType) -> Data? { nil }
}

@available(macOS 15.0, iOS 18.0, *)
public final class LADomainState: NSObject, @unchecked Sendable {
    public let biometry: LADomainStateBiometry
    public let companion: LADomainStateCompanion

    init(biometryType: LABiometryType, biometryHash: Data?) {
        biometry = LADomainStateBiometry(biometryType: biometryType, stateHash: biometryHash)
        companion = LADomainStateCompanion()
    }

    /// Apple: the combined hash of every mechanism; here the biometry hash,
    /// the only mechanism with a state (nil when it has none).
    public var stateHash: Data? { biometry.stateHash }
}

extension Data {
    /// A `domain-state=` token (hex, any case) to its bytes; nil for odd
    /// lengths or other characters.
    init?(hex: String) {
        guard let bytes = Hex.bytes(hex.utf8) else { return nil }
        self.init(bytes)
    }
}
