// Apple's `LARight` (iOS 16 / macOS 13): a right granted by authenticating
// against an LAAuthenticationRequirement. Each right has a context of its
// own (as on iOS, where it hides one), so its prompts go to that context's
// prompt handler: `promptHandler` here (a Linux extra), else
// `LAContext.defaultPromptHandler`.
//
// - A plain right authorizes by evaluating its requirement's policy
//   (`evaluate`); `checkCanAuthorize` is that policy's `can-evaluate`.
// - A persisted right (LARightStore.swift) authorizes through the daemon's
//   `right-authorize`, which grants it on the right's context, so that its
//   `secret` can be read there until `deauthorize` (`right-deauthorize`).
// Errors are LAErrors; the daemon's protocol errors (`unknown-right`,
// `not-authorized`, ...) come as `systemCancel` with the name as `reason`.

import Dispatch
import Foundation
import LocalAuthProtocol

@available(macOS 13.0, iOS 16.0, *)
open class LARight: NSObject {
    /// Apple's `LARight.State`.
    public enum State: Int, Sendable, Hashable, CaseIterable {
        case unknown = 0
        case authorizing = 1
        case authorized = 2
        case notAuthorized = 3
    }

    private let lock = NSLock()
    private var _state = State.unknown
    private var _tag = 0
    let requirement: LAAuthenticationRequirement
    /// The right's own context (connection) for its evaluations.
    let context: LAContext

    /// `.unknown` until the first authorize; then authorizing, authorized or notAuthorized.
    open var state: State { lock.withLock { _state } }

    /// An application-supplied number identifying the right (default 0).
    open var tag: Int {
        get { lock.withLock { _tag } }
        set { lock.withLock { _tag = newValue } }
    }

    /// Linux extra: who answers this right's prompts (nil: `LAContext.defaultPromptHandler`).
    open var promptHandler: (any LAPromptHandler)? {
        get { context.promptHandler }
        set { context.promptHandler = newValue }
    }

    /// A right with the default requirement (biometry or the passcode).
    public override convenience init() {
        self.init(requirement: .default)
    }

    public init(requirement: LAAuthenticationRequirement) {
        self.requirement = requirement
        context = LAContext()
        super.init()
    }

    /// The daemon's identifier of a persisted right; nil for a plain one.
    var persistedIdentifier: String? { nil }

    // MARK: Authorizing

    @preconcurrency
    open func authorize(localizedReason: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        lock.withLock { _state = .authorizing }
        let done = RightCompletion(self)
        context.startEvaluation(requirement.policy, localizedReason: localizedReason, identifier: persistedIdentifier) {
            success, error in
            done.finish(success)
            completion(success ? nil : error ?? LAError(.authenticationFailed, "Authentication failed."))
        }
    }

    open func authorize(localizedReason: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            authorize(localizedReason: localizedReason) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    /// nil when the right could be authorized now (its policy's can-evaluate).
    @preconcurrency
    open func checkCanAuthorize(completion: @escaping @Sendable ((any Error)?) -> Void) {
        let context = self.context
        let policy = requirement.policy
        let box = UncheckedContext(context)
        DispatchQueue.global().async {
            var error: NSError?
            let can = box.context.canEvaluatePolicy(policy, error: &error)
            completion(can ? nil : error.map { LAError(_nsError: $0) as any Error })
        }
    }

    open func checkCanAuthorize() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            checkCanAuthorize { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    /// Ends the authorization; a persisted right's secret is no longer released.
    @preconcurrency
    open func deauthorize(completion: @escaping @Sendable () -> Void) {
        lock.withLock { if _state == .authorized { _state = .unknown } }
        guard let identifier = persistedIdentifier else { return DispatchQueue.global().async { completion() } }
        let box = UncheckedContext(context)
        DispatchQueue.global().async {
            _ = box.context.request("right-deauthorize", [("identifier", identifier)])
            completion()
        }
    }

    open func deauthorize() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            deauthorize { continuation.resume() }
        }
    }

    fileprivate func finished(_ success: Bool) {
        lock.withLock { _state = success ? .authorized : .notAuthorized }
    }
}

/// Marks the right's state when its evaluation ends (the right is not Sendable).
private final class RightCompletion: @unchecked Sendable {
    private weak var right: LARight?
    init(_ right: LARight) { self.right = right }
    func finish(_ success: Bool) { right?.finished(success) }
}

/// A context used from a background queue: LAContext is not Sendable (as
/// Apple's), but its methods are thread-safe.
final class UncheckedContext: @unchecked Sendable {
    let context: LAContext
    init(_ context: LAContext) { self.context = context }
}

extension LAContext {
    /// A request that names this context (`ctx=`), connecting on first use.
    func request(_ verb: String, _ arguments: [(String, String)]) -> Result<Response, LAError> {
        exchange(verb, arguments).flatMap { response in
            response.status == .ok ? .success(response) : .failure(Evaluation.error(from: response))
        }
    }

    /// The same, with the final reply as it came, OK or ERR (the rights'
    /// keys map `domain=sec` errors their own way); a failure only when no
    /// reply came.
    func exchange(_ verb: String, _ arguments: [(String, String)]) -> Result<Response, LAError> {
        withConnectedContext { prepared in
            switch prepared {
            case .failure(let failure): return .failure(failure)
            case .success(let (link, ctx)):
                switch link.request(verb, [("ctx", ctx)] + arguments) {
                case .lost(let why):
                    return .failure(LAError(.invalidContext, "The connection to localauthd ended (\(why)).", reason: "disconnect"))
                case .reply(let response):
                    return .success(response)
                }
            }
        }
    }
}
