// Apple's `LACredentialType` and the credential a context holds
// (`setCredential(_:type:)`, `isCredentialSet(_:)`).
//
// On iOS an application password set on a context is what a keychain item
// protected with `.applicationPassword` is opened with, instead of a prompt
// (Security framework). Linux has no keychain, so here the credential is
// only kept: on the context, in this process, never sent to the daemon (so
// it can reach neither the daemon's log nor its journal), and its bytes are
// overwritten when it is replaced, cleared (`nil`) or the context goes away.
// `isCredentialSet` answers whether one is held. The smart-card PIN type is
// accepted and kept the same way (CryptoTokenKit does not exist here either).

import Foundation

/// Apple's `LACredentialType` (raw values of LAPublicDefines.h).
public enum LACredentialType: Int, Sendable, Hashable, CaseIterable {
    /// An application-provided password (`kLACredentialTypeApplicationPassword`).
    case applicationPassword = 0
    /// A smart card PIN (`kLACredentialSmartCardPIN`, macOS).
    case smartCardPIN = -3
}

/// The credentials of one context, by type; wiped when replaced or dropped.
final class CredentialSlots: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [LACredentialType: [UInt8]] = [:]

    /// Keeps `credential` for `type` (nil clears it); true on success, as Apple's.
    func set(_ credential: Data?, type: LACredentialType) -> Bool {
        lock.withLock {
            if var old = slots.removeValue(forKey: type) { CredentialSlots.wipe(&old) }
            if let credential { slots[type] = [UInt8](credential) }
        }
        return true
    }

    func isSet(_ type: LACredentialType) -> Bool { lock.withLock { slots[type] != nil } }

    deinit {
        for key in Array(slots.keys) {
            if var bytes = slots.removeValue(forKey: key) { CredentialSlots.wipe(&bytes) }
        }
    }

    /// Overwrites the bytes in place (the array is uniquely held here).
    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            memset(base, 0, buffer.count)
        }
    }
}
