// The login secret's slow work, off the event loop (S-74..S-77): writing
// its store (write, fsync, rename, fsync the directory), and reading users'
// shadow lines (NSS for the name, the shadow file) to open a copy for a
// release or to tell whether copies are still current. One thread runs them
// in order (the EventLoop's `keyringThread`), so a write never races a read
// of the same store; the loop gets each answer back as `keyringAnswered`.
// Sealing a password happens where it is checked, on a passcode worker
// (`sealingChecker`), so that the copy is bound to the very line the
// password was checked against.
import LocalAuthCore
import LocalAuthProtocol
import LocalAuthSystem

package struct KeyringJob: Sendable {
    package enum Work: Sendable {
        /// The store's bytes to `path`, durably.
        case write(path: String, bytes: [UInt8])
        /// `uid`'s copy, opened if their shadow line still has its binding.
        case open(uid: UserID, copy: LoginSecretCopy)
        /// Whether each user's shadow line still has the binding given.
        case check([UserID: [UInt8]])
    }

    package var token: UInt64
    var work: Work
    var shadowPath: String
    var keys: LoginSecretKeys

    /// Runs the job where it is called (the thread, or a shell without one).
    package func run() -> KeyringAnswer {
        switch work {
        case .write(let path, let bytes):
            do throws(SystemError) {
                try AtomicFile.write(path, bytes: bytes, mode: 0o600)
                return .written(nil)
            } catch {
                return .written(error)
            }
        case .open(let uid, let copy):
            switch Self.bindings([uid], shadowPath: shadowPath, keys: keys)[uid] ?? .gone {
            case .gone: return .opened(.gone)
            case .unreadable(let why): return .opened(.unreadable(why))
            case .bound(let binding):
                guard HMACSHA256.equal(binding, copy.binding) else { return .opened(.stale) }
                guard var password = keys.open(copy, uid: uid) else { return .opened(.unopenable) }
                defer { SecretMemory.wipe(&password) }
                return .opened(.password(password.withUnsafeBufferPointer { SecretBytes($0) }))
            }
        case .check(let expected):
            let found = Self.bindings(Array(expected.keys), shadowPath: shadowPath, keys: keys)
            var verdicts: [UserID: Currency] = [:]
            for (uid, binding) in expected {
                switch found[uid] ?? .gone {
                case .gone: verdicts[uid] = .gone
                case .unreadable: verdicts[uid] = .unknown
                case .bound(let now): verdicts[uid] = HMACSHA256.equal(now, binding) ? .current : .changed
                }
            }
            return .checked(verdicts)
        }
    }

    /// What a user's shadow line binds a copy to now.
    enum ShadowBinding {
        case bound([UInt8])
        /// No name for the uid, or no line for the name.
        case gone
        /// The file (or NSS) could not be read: nothing is decided.
        case unreadable(String)
    }

    /// The bindings of `uids`' shadow lines, the file read once. A uid is
    /// found under its getpwuid_r name, as the passcode check finds it.
    static func bindings(_ uids: [UserID], shadowPath: String, keys: LoginSecretKeys) -> [UserID: ShadowBinding] {
        var named: [UserID: String] = [:]
        var result: [UserID: ShadowBinding] = [:]
        for uid in uids {
            do throws(SystemError) {
                if let user = try Accounts.user(uid: uid) { named[uid] = user.name } else { result[uid] = .gone }
            } catch {
                result[uid] = .unreadable("\(error)")
            }
        }
        let names = named
        let lines: [UserID: ShadowBinding]
        do throws(SystemError) {
            lines = try ShadowFile.withContents(shadowPath) { bytes in
                var found: [UserID: ShadowBinding] = [:]
                for (uid, name) in names {
                    found[uid] = ShadowFile.withLine(for: name, in: bytes) { line, _ in
                        ShadowBinding.bound(keys.binding(uid: uid, line: line))
                    } ?? .gone
                }
                return found
            }
        } catch {
            lines = names.mapValues { _ in .unreadable("\(error)") }
        }
        return result.merging(lines) { _, line in line }
    }

    /// S-74: the shadow backend's check (ShadowPasscodes.checker: the same
    /// name, the same line, the same verdict) that also seals an accepted
    /// password against the line it was checked with. Runs on a passcode
    /// worker; `secret` is the worker's own copy, which it wipes.
    static func sealingChecker(uid: UserID, shadowPath: String, keys: LoginSecretKeys)
        -> @Sendable ([UInt8]) -> (correct: Bool, sealed: LoginSecretCopy?) {
        { secret in checkAndSeal(secret, uid: uid, shadowPath: shadowPath, keys: keys) }
    }

    private static func checkAndSeal(_ secret: [UInt8], uid: UserID, shadowPath: String, keys: LoginSecretKeys)
        -> (correct: Bool, sealed: LoginSecretCopy?) {
        guard let name = (try? Accounts.user(uid: uid))??.name else { return (false, nil) }
        do throws(SystemError) {
            return try ShadowFile.withContents(shadowPath) { bytes in
                ShadowFile.withLine(for: name, in: bytes) { line, hash in
                    seal(secret, uid: uid, line: line, hash: hash, keys: keys)
                } ?? (false, nil)
            }
        } catch {
            return (false, nil)
        }
    }

    private static func seal(_ secret: [UInt8], uid: UserID, line: ArraySlice<UInt8>, hash: ArraySlice<UInt8>,
                             keys: LoginSecretKeys) -> (correct: Bool, sealed: LoginSecretCopy?) {
        let text = String(decoding: hash, as: UTF8.self)
        guard ShadowFile.isUsable(text), Yescrypt.verify(secret: secret, hash: text) else { return (false, nil) }
        return (true, keys.seal(secret, uid: uid, binding: keys.binding(uid: uid, line: line)))
    }
}

/// What a `KeyringJob` found.
package enum KeyringAnswer: Sendable {
    case written(SystemError?)
    case opened(OpenedCopy)
    case checked([UserID: Currency])
}

/// A copy opened for a release.
package enum OpenedCopy: Sendable {
    /// The password, in memory that is wiped when its last reference goes.
    case password(SecretBytes)
    /// The user's shadow line changed since it was sealed (S-76).
    case stale
    /// The user has no name or no shadow line any more.
    case gone
    /// The box does not open with this daemon's key.
    case unopenable
    /// The shadow file could not be read: nothing is released, nothing voided.
    case unreadable(String)
}

/// Whether a copy is still bound to its user's shadow line.
package enum Currency: Sendable, Equatable {
    case current, changed, gone
    /// The shadow file could not be read.
    case unknown
}
