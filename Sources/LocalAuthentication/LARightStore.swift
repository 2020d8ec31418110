// Apple's `LARightStore`, `LAPersistedRight` and `LASecret` (iOS 16 / macOS
// 13) over the daemon's right verbs (PROTOCOL.md v1.1). Rights belong to the
// calling user (the daemon reads the uid from the socket) and outlive the
// process and the daemon's restarts; secrets are sealed by the daemon
// (AES-256-GCM, a key the client never sees) and released only to a right's
// own context after it was authorized there.
//
// `LAPersistedRight.key` (an `LAPrivateKey`, LAPrivateKey.swift) is the
// right's P-256 key, made and kept by the daemon (S-78).
//
// Completion handlers run on a private queue; the async forms are Apple's.

import Dispatch
import Foundation
import LocalAuthProtocol

@available(macOS 13.0, iOS 16.0, *)
public final class LARightStore: NSObject, @unchecked Sendable {
    /// The store of the user this process runs as.
    public static let shared = LARightStore()

    private let lock = NSLock()
    private var link: DaemonLink?
    private let queue = DispatchQueue(label: "LocalAuthentication.LARightStore")

    private override init() {}

    // MARK: Fetching

    @preconcurrency
    public func right(forIdentifier identifier: String,
                      completion: @escaping @Sendable (LAPersistedRight?, (any Error)?) -> Void) {
        queue.async { [self] in
            switch request("right-state", [("identifier", identifier)]) {
            case .failure(let error): completion(nil, error)
            case .success(let response):
                let requirement = LAAuthenticationRequirement(wireName: response.arguments.value(for: "requirement") ?? "default")
                completion(LAPersistedRight(identifier: identifier, requirement: requirement), nil)
            }
        }
    }

    public func right(forIdentifier identifier: String) async throws -> LAPersistedRight {
        try await withCheckedThrowingContinuation { continuation in
            right(forIdentifier: identifier) { right, error in Self.resume(continuation, right, error) }
        }
    }

    // MARK: Saving

    @preconcurrency
    public func saveRight(_ right: LARight, identifier: String,
                          completion: @escaping @Sendable (LAPersistedRight?, (any Error)?) -> Void) {
        save(right.requirement, identifier: identifier, secret: nil, completion: completion)
    }

    public func saveRight(_ right: LARight, identifier: String) async throws -> LAPersistedRight {
        try await withCheckedThrowingContinuation { continuation in
            saveRight(right, identifier: identifier) { saved, error in Self.resume(continuation, saved, error) }
        }
    }

    @preconcurrency
    public func saveRight(_ right: LARight, identifier: String, secret: Data,
                          completion: @escaping @Sendable (LAPersistedRight?, (any Error)?) -> Void) {
        save(right.requirement, identifier: identifier, secret: secret, completion: completion)
    }

    public func saveRight(_ right: LARight, identifier: String, secret: Data) async throws -> LAPersistedRight {
        try await withCheckedThrowingContinuation { continuation in
            saveRight(right, identifier: identifier, secret: secret) { saved, error in Self.resume(continuation, saved, error) }
        }
    }

    private func save(_ requirement: LAAuthenticationRequirement, identifier: String, secret: Data?,
                      completion: @escaping @Sendable (LAPersistedRight?, (any Error)?) -> Void) {
        queue.async { [self] in
            var arguments = [("identifier", identifier), ("requirement", requirement.wireName)]
            if let secret { arguments.append(("secret", Base64.encode(secret))) }
            switch request("right-save", arguments) {
            case .failure(let error): completion(nil, error)
            case .success: completion(LAPersistedRight(identifier: identifier, requirement: requirement), nil)
            }
        }
    }

    // MARK: Removing

    @preconcurrency
    public func removeRight(_ right: LAPersistedRight, completion: @escaping @Sendable ((any Error)?) -> Void) {
        removeRight(forIdentifier: right.identifier, completion: completion)
    }

    public func removeRight(_ right: LAPersistedRight) async throws {
        try await removeRight(forIdentifier: right.identifier)
    }

    @preconcurrency
    public func removeRight(forIdentifier identifier: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        queue.async { [self] in
            completion(request("right-remove", [("identifier", identifier)]).failureValue)
        }
    }

    public func removeRight(forIdentifier identifier: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            removeRight(forIdentifier: identifier) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    @preconcurrency
    public func removeAllRights(completion: @escaping @Sendable ((any Error)?) -> Void) {
        queue.async { [self] in
            completion(request("right-remove", [("all", "true")]).failureValue)
        }
    }

    public func removeAllRights() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            removeAllRights { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    // MARK: The connection

    /// One request on the store's connection (made, or made again, as needed).
    func request(_ verb: String, _ arguments: [(String, String)]) -> Result<Response, LAError> {
        let current: Result<DaemonLink, LinkFailure> = lock.withLock {
            if let link, !link.isLost { return .success(link) }
            let connected = DaemonLink.connect(path: DaemonLink.defaultSocketPath)
            if case .success(let made) = connected { link = made }
            return connected
        }
        switch current {
        case .failure(let failure):
            return .failure(LAError(.biometryNotAvailable, "localauthd is not reachable (\(failure.message)).",
                                    reason: "daemon-unreachable",
                                    underlying: NSError(domain: NSPOSIXErrorDomain, code: Int(failure.errno))))
        case .success(let link):
            switch link.request(verb, arguments) {
            case .lost(let why):
                return .failure(LAError(.systemCancel, "The connection to localauthd ended (\(why)).", reason: "disconnect"))
            case .reply(let response):
                return response.status == .ok ? .success(response) : .failure(Evaluation.error(from: response))
            }
        }
    }

    private static func resume(_ continuation: CheckedContinuation<LAPersistedRight, any Error>,
                               _ right: LAPersistedRight?, _ error: (any Error)?) {
        if let right { continuation.resume(returning: right) } else {
            continuation.resume(throwing: error ?? LAError(.systemCancel, "localauthd refused the request."))
        }
    }
}

/// A right kept by the daemon under an identifier, with an optional secret.
@available(macOS 13.0, iOS 16.0, *)
public final class LAPersistedRight: LARight, @unchecked Sendable {
    let identifier: String

    /// The right's secret, released once the right is authorized.
    public private(set) lazy var secret = LASecret(right: self)

    private let keyLock = NSLock()
    private var madeKey: LAPrivateKey?

    /// The right's private key, which the daemon holds; usable once the right is authorized.
    public var key: LAPrivateKey {
        keyLock.withLock {
            if let madeKey { return madeKey }
            let made = LAPrivateKey(right: self)
            madeKey = made
            return made
        }
    }

    init(identifier: String, requirement: LAAuthenticationRequirement) {
        self.identifier = identifier
        super.init(requirement: requirement)
    }

    override var persistedIdentifier: String? { identifier }
}

/// Apple's `LASecret`: data a persisted right protects.
@available(macOS 13.0, iOS 16.0, *)
public final class LASecret: NSObject, @unchecked Sendable {
    private weak var right: LAPersistedRight?
    private let identifier: String
    private let context: UncheckedContext

    init(right: LAPersistedRight) {
        self.right = right
        identifier = right.identifier
        context = UncheckedContext(right.context)
    }

    /// The secret, once the right is authorized on its context; else an
    /// LAError whose `reason` says why (`not-authorized`, `unknown-right`).
    @preconcurrency
    public func loadData(completion: @escaping @Sendable (Data?, (any Error)?) -> Void) {
        let (context, identifier) = (self.context, self.identifier)
        DispatchQueue.global().async {
            switch context.context.request("right-secret", [("identifier", identifier)]) {
            case .failure(let error): completion(nil, error)
            case .success(let response):
                guard let text = response.arguments.value(for: "secret"),
                      case .success(var bytes) = Base64.decode(text, maximumBytes: 1 << 20) else {
                    return completion(nil, LAError(.systemCancel, "localauthd sent a malformed secret."))
                }
                let data = Data(bytes)
                CredentialSlots.wipe(&bytes)
                completion(data, nil)
            }
        }
    }

    public func loadData() async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            loadData { data, error in
                if let data { continuation.resume(returning: data) } else {
                    continuation.resume(throwing: error ?? LAError(.systemCancel, "No secret."))
                }
            }
        }
    }

    /// The secret (Apple's async property form of `loadData`).
    public var rawData: Data {
        get async throws { try await loadData() }
    }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
