// Apple's `LAContext` over the daemon's line protocol.
//
// One connection per context, opened lazily: the first canEvaluatePolicy or
// evaluatePolicy connects (to `$LOCALAUTHD_SOCKET`, else
// `/run/localauthd/socket`) and sends `new`. Property changes are kept and
// sent with one `set` before the next can-evaluate or evaluate. Dropping the
// context closes the connection, which the daemon records as the context's
// invalidation (S-14); a running evaluation keeps its context alive, as on iOS.
//
// When the daemon cannot be reached, canEvaluatePolicy returns false with
// `LAError.biometryNotAvailable` (reason `daemon-unreachable`, the POSIX error
// as NSUnderlyingErrorKey) and evaluatePolicy replies with the same error:
// iOS code treats that code as "no biometry here, offer the app's own login",
// which is the graceful outcome. The next call tries to connect again. Once a
// context's connection has ended, the daemon has invalidated it (S-14), so
// later calls answer `invalidContext`. Nothing here waits without bound:
// synchronous requests have a 30 s safety net, evaluations end when the
// connection does.

import Dispatch
import Foundation
import LocalAuthHex
import LocalAuthProtocol

open class LAContext: NSObject {
    /// The process-wide prompt handler, used when a context has none of its
    /// own. Initially the controlling terminal; nil means no handler at all
    /// (a passcode prompt then ends the evaluation with `notInteractive`).
    ///
    /// Replacing it with a handler of the program's own says that the
    /// program draws its prompts: its contexts no longer ask for the
    /// session's authentication agent (`asksForAgent`).
    public static var defaultPromptHandler: (any LAPromptHandler)? {
        get { defaultHandlerLock.withLock { _defaultPromptHandler } }
        set { defaultHandlerLock.withLock { _defaultPromptHandler = newValue } }
    }
    nonisolated(unsafe) private static var _defaultPromptHandler: (any LAPromptHandler)? = LATerminalPromptHandler()
    private static let defaultHandlerLock = NSLock()

    /// Whether an evaluation asks for the system's prompt, as on iOS: the
    /// session's authentication agent (SEMANTICS.md S-66) draws it, and this
    /// process hears only the answer. True unless the context has its own
    /// `promptHandler` or the program made another handler the default
    /// (tools and tests that draw their prompts); the controlling terminal's
    /// handler, or none, leaves the prompt to the agent. Without an agent in
    /// the session, the prompts come here as before.
    var asksForAgent: Bool {
        guard lock.withLock({ _promptHandler == nil }) else { return false }
        guard let handler = LAContext.defaultPromptHandler else { return true }
        return (handler as? LATerminalPromptHandler)?.path == "/dev/tty"
    }

    /// The socket this context connects to (fixed when the context is made).
    public let socketPath: String

    /// Serialises connect / new / set / can-evaluate; never held by the reader.
    private let operationLock = NSLock()
    /// Guards the fields below; held only briefly, never across a wait.
    private let lock = NSLock()
    private var link: DaemonLink?
    private var ctx: String?
    private var invalidated = false
    private var _biometryType = LABiometryType.none
    private var _domainState: Data?
    private var _evaluatedMethod: String?
    private var _promptHandler: (any LAPromptHandler)?
    private var _fallbackTitle: String?
    private var _cancelTitle: String?
    private var _reason = ""
    private var _reuseDuration: TimeInterval = 0
    private var _interactionNotAllowed = false
    /// The `prompt` property last sent (S-66), nil before any.
    private var sentPrompt: String?
    /// Wire keys of properties changed since the last `set`.
    private var dirty: [String] = []
    /// `setCredential`'s credentials: kept here, never sent.
    private let credentials = CredentialSlots()

    private let replyQueue = DispatchQueue(label: "LocalAuthentication.LAContext.reply")
    private let promptQueue = DispatchQueue(label: "LocalAuthentication.LAContext.prompt")

    public override init() {
        socketPath = DaemonLink.defaultSocketPath
        super.init()
    }

    /// Linux extra: a context on an explicit socket.
    public init(socketPath: String) {
        self.socketPath = socketPath
        super.init()
    }

    deinit {
        link?.close()
    }

    // MARK: Properties (Apple's)

    /// `.none` until the first canEvaluatePolicy (S-17); then the machine's sensor type.
    open var biometryType: LABiometryType { lock.withLock { _biometryType } }

    /// The enrolled set's token after a successful biometric check or evaluation (S-10).
    /// Deprecated in iOS 18 as on Apple's SDK (Apple-platform attributes only,
    /// so code that still reads it compiles here without warnings).
    @available(iOS, introduced: 9.0, deprecated: 18.0, message: "Use domainState.biometry.stateHash instead.")
    @available(macOS, introduced: 10.11, deprecated: 15.0, message: "Use domainState.biometry.stateHash instead.")
    open var evaluatedPolicyDomainState: Data? { lock.withLock { _domainState } }

    /// Apple's replacement for `evaluatedPolicyDomainState` (LADomainState.swift):
    /// what the last check saw, as a snapshot.
    @available(macOS 15.0, iOS 18.0, *)
    open var domainState: LADomainState {
        lock.withLock { LADomainState(biometryType: _biometryType, biometryHash: _domainState) }
    }

    /// Apple's deprecated property (iOS 8.3 to 9.0): here the daemon's
    /// `LockoutThreshold`, the consecutive biometric failures that lock
    /// biometry out (S-2), read from the daemon's `hello`; nil when the daemon
    /// cannot be reached. Setting it has no effect, as on iOS since 9.0.
    @available(iOS, introduced: 8.3, deprecated: 9.0, message: "No longer supported")
    @available(macOS, introduced: 10.10.3, deprecated: 10.11, message: "No longer supported")
    open var maxBiometryFailures: NSNumber? {
        get {
            guard case .success(let link) = operationLock.withLock({ connected() }),
                  case .reply(let response) = link.request("hello"), response.status == .ok,
                  let text = response.arguments.value(for: "lockout-threshold"), let value = Int(text)
            else { return nil }
            return NSNumber(value: value)
        }
        set { _ = newValue }
    }

    /// Linux only (Apple's reply carries no such detail): how the last
    /// successful evaluation succeeded — "biometric", "passcode", "cached" or
    /// "reuse" — for tools that report it, such as `localauthctl evaluate`.
    open var evaluatedMethod: String? { lock.withLock { _evaluatedMethod } }

    /// nil: the default ("Enter Password"); "": no fallback button.
    open var localizedFallbackTitle: String? {
        get { lock.withLock { _fallbackTitle } }
        set { change("fallback-title") { $0._fallbackTitle = newValue } }
    }

    /// nil or "": "Cancel".
    open var localizedCancelTitle: String? {
        get { lock.withLock { _cancelTitle } }
        set { change("cancel-title") { $0._cancelTitle = newValue } }
    }

    open var localizedReason: String {
        get { lock.withLock { _reason } }
        set { change("localized-reason") { $0._reason = newValue } }
    }

    /// Seconds since the last biometric device unlock within which an
    /// evaluation succeeds without a prompt (S-24); at most
    /// `LATouchIDAuthenticationMaximumAllowableReuseDuration` takes effect.
    open var touchIDAuthenticationAllowableReuseDuration: TimeInterval {
        get { lock.withLock { _reuseDuration } }
        set { change("reuse-duration") { $0._reuseDuration = newValue } }
    }

    /// True: an evaluation that would need a prompt fails with `notInteractive` (S-26).
    open var interactionNotAllowed: Bool {
        get { lock.withLock { _interactionNotAllowed } }
        set { change("interaction-not-allowed") { $0._interactionNotAllowed = newValue } }
    }

    /// Linux extra: who answers this context's prompts (nil: `LAContext.defaultPromptHandler`).
    open var promptHandler: (any LAPromptHandler)? {
        get { lock.withLock { _promptHandler } }
        set { lock.withLock { _promptHandler = newValue } }
    }

    private func change(_ key: String, _ apply: (LAContext) -> Void) {
        lock.withLock {
            apply(self)
            if !dirty.contains(key) { dirty.append(key) }
        }
    }

    /// The pending `set` arguments, clearing the dirty list. Called with `lock` held.
    private func takePendingProperties() -> [(String, String)] {
        defer { dirty.removeAll() }
        return dirty.map { key in
            switch key {
            case "fallback-title": return (key, _fallbackTitle ?? "Enter Password")
            case "cancel-title": return (key, _cancelTitle ?? "")
            case "localized-reason": return (key, _reason)
            case "reuse-duration":
                let seconds = _reuseDuration.isFinite ? _reuseDuration.rounded(.up) : 0
                return (key, String(Int(min(max(seconds, 0), LATouchIDAuthenticationMaximumAllowableReuseDuration))))
            default: return (key, _interactionNotAllowed ? "true" : "false")
            }
        }
    }

    // MARK: Checking and evaluating

    /// Discardable, as Apple's method is when Swift imports it from Objective-C.
    @discardableResult
    open func canEvaluatePolicy(_ policy: LAPolicy, error: NSErrorPointer) -> Bool {
        let outcome: Result<Response, LAError> = operationLock.withLock {
            switch prepare() {
            case .failure(let failure): return .failure(failure)
            case .success(let (link, ctx)):
                switch link.request("can-evaluate", [("ctx", ctx), ("policy", policy.wireValue)]) {
                case .lost(let why): return .failure(lostError(why))
                case .reply(let response): return .success(response)
                }
            }
        }
        switch outcome {
        case .failure(let failure):
            error?.pointee = failure._nsError
            return false
        case .success(let response):
            lock.withLock {
                if let type = response.arguments.value(for: "biometry") { _biometryType = LABiometryType(wireName: type) }
                if response.status == .ok, let token = response.arguments.value(for: "domain-state") {
                    _domainState = Data(hex: token)
                } else if response.status != .ok {
                    // Apple: non-nil after a check that succeeds for a biometric
                    // policy (or a biometric success); otherwise nil.
                    _domainState = nil
                }
            }
            if response.status == .ok {
                error?.pointee = nil
                return true
            }
            error?.pointee = Evaluation.error(from: response)._nsError
            return false
        }
    }

    /// Replies exactly once, on a private queue (never the caller's): `(true, nil)`
    /// or `(false, LAError)`. `@preconcurrency`, as Apple's imported method:
    /// Swift 5 code passing a non-Sendable closure compiles without warnings.
    @preconcurrency
    open func evaluatePolicy(
        _ policy: LAPolicy, localizedReason: String, reply: @escaping @Sendable (Bool, (any Error)?) -> Void
    ) {
        startEvaluation(policy, localizedReason: localizedReason, identifier: nil, reply: reply)
    }

    /// An `evaluate`, or with `identifier` a `right-authorize` of that right
    /// (LARight.swift), whose replies are an evaluation's.
    func startEvaluation(_ policy: LAPolicy, localizedReason: String, identifier: String?,
                         reply: @escaping @Sendable (Bool, (any Error)?) -> Void) {
        let destination = asksForAgent ? "agent" : "client"
        let prepared: Result<(DaemonLink, String), LAError> = operationLock.withLock { prepare(prompt: destination) }
        switch prepared {
        case .failure(let failure):
            replyQueue.async { reply(false, failure) }
        case .success(let (link, ctx)):
            let handler = promptHandler ?? LAContext.defaultPromptHandler
            let target = WeakContext(self)
            let evaluation = Evaluation(
                policy: policy, reason: localizedReason, link: link, ctx: ctx, handler: handler,
                promptQueue: promptQueue, replyQueue: replyQueue, owner: self, rightIdentifier: identifier,
                onSuccess: { method, token in
                    guard let self = target.context else { return }
                    self.lock.withLock {
                        self._evaluatedMethod = method
                        if let token, let data = Data(hex: token) { self._domainState = data }
                    }
                },
                reply: reply)
            evaluation.start()
        }
    }

    /// Returns true, or throws the LAError.
    open func evaluatePolicy(_ policy: LAPolicy, localizedReason: String) async throws -> Bool {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
            evaluatePolicy(policy, localizedReason: localizedReason) { success, error in
                if success { continuation.resume(returning: true) } else {
                    continuation.resume(throwing: error ?? LAError(.authenticationFailed, "Authentication failed."))
                }
            }
        }
    }

    /// Ends a running evaluation with `appCancel`; later calls answer
    /// `invalidContext` (S-13). Idempotent; does not wait.
    open func invalidate() {
        let target: (DaemonLink, String)? = lock.withLock {
            invalidated = true
            guard let link, let ctx else { return nil }
            return (link, ctx)
        }
        if let (link, ctx) = target { link.send("invalidate", [("ctx", ctx)], handler: nil) }
    }

    // MARK: Credentials (LACredential.swift)

    /// Keeps `credential` on this context (nil removes it); never sent to the daemon.
    @discardableResult
    open func setCredential(_ credential: Data?, type: LACredentialType) -> Bool {
        credentials.set(credential, type: type)
    }

    @discardableResult
    open func isCredentialSet(_ type: LACredentialType) -> Bool { credentials.isSet(type) }

    // MARK: The connection

    /// The connection alone (`maxBiometryFailures`). Called with `operationLock` held.
    private func connected() -> Result<DaemonLink, LAError> { prepare().map { $0.0 } }

    /// Runs `body` with the context's connection and id, connecting on first
    /// use, under the operation lock (the LARight verbs name the context).
    func withConnectedContext<T>(_ body: (Result<(DaemonLink, String), LAError>) -> T) -> T {
        operationLock.withLock { body(prepare()) }
    }

    /// Connects and creates the context on first use, then sends pending
    /// properties. Called with `operationLock` held.
    /// `prompt`: an evaluation's `prompt` property (S-66), sent when it differs
    /// from the one last sent (a check sends none: it never prompts).
    private func prepare(prompt: String? = nil) -> Result<(DaemonLink, String), LAError> {
        let state: (DaemonLink?, String?, Bool) = lock.withLock { (self.link, self.ctx, self.invalidated) }
        if let link = state.0, let ctx = state.1 {
            if link.isLost { return .failure(lostError("the connection ended")) }
            return flush(link, ctx, prompt: prompt)
        }
        if state.2 { return .failure(LAError(.invalidContext, "The context was invalidated.")) }
        let link: DaemonLink
        switch DaemonLink.connect(path: socketPath) {
        case .failure(let failure): return .failure(unreachable(failure.message, errno: failure.errno))
        case .success(let connected): link = connected
        }
        switch link.request("new") {
        case .lost(let why):
            link.close()
            return .failure(unreachable(why, errno: ECONNRESET))
        case .reply(let response):
            guard response.status == .ok, let ctx = response.arguments.value(for: "ctx") else {
                link.close()
                // The daemon answered: say what it said (unavailable, limit-exceeded...), not "unreachable".
                if response.status == .err { return .failure(Evaluation.error(from: response)) }
                return .failure(unreachable(response.message ?? "it refused a new context", errno: EAGAIN))
            }
            // invalidate() may have run while the context was being made: it
            // had no context to name then, so this one is invalidated now
            // (on the daemon too), never used (S-13).
            let invalidatedMeanwhile = lock.withLock {
                self.link = link
                self.ctx = ctx
                return self.invalidated
            }
            if invalidatedMeanwhile {
                link.send("invalidate", [("ctx", ctx)], handler: nil)
                return .failure(LAError(.invalidContext, "The context was invalidated."))
            }
            return flush(link, ctx, prompt: prompt)
        }
    }

    private func flush(_ link: DaemonLink, _ ctx: String, prompt: String? = nil) -> Result<(DaemonLink, String), LAError> {
        let pending = lock.withLock { () -> [(String, String)] in
            var pending = takePendingProperties()
            // A context that never asked for the agent sends nothing (a daemon
            // before v1.3 knows no `prompt` key; its ERR would show nowhere).
            if let prompt, prompt != (sentPrompt ?? "client") {
                pending.append(("prompt", prompt))
                sentPrompt = prompt
            }
            return pending
        }
        guard !pending.isEmpty else { return .success((link, ctx)) }
        if case .lost(let why) = link.request("set", [("ctx", ctx)] + pending) { return .failure(lostError(why)) }
        // An ERR (an invalidated context) shows in the request that follows.
        return .success((link, ctx))
    }

    private func unreachable(_ why: String, errno code: Int32) -> LAError {
        LAError(.biometryNotAvailable,
                "localauthd is not reachable at \(socketPath) (\(why)); start it, or set LOCALAUTHD_SOCKET to its socket.",
                reason: "daemon-unreachable",
                underlying: NSError(domain: NSPOSIXErrorDomain, code: Int(code)))
    }

    private func lostError(_ why: String) -> LAError {
        LAError(.invalidContext,
                "The connection to localauthd ended (\(why)), which invalidated this context; create a new LAContext.",
                reason: "disconnect")
    }
}

/// The context as the reader queue's success callback sees it: weakly, and
/// only through its lock. LAContext is not Sendable (Apple's is not, and a
/// Sendable superclass would make every mock subclass restate it).
private final class WeakContext: @unchecked Sendable {
    weak var context: LAContext?
    init(_ context: LAContext) { self.context = context }
}
