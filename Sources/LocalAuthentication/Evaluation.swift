// One running `evaluatePolicy`: routes the evaluate request's replies
// (PROMPTs, then exactly one final OK/ERR, or a lost connection) to the prompt
// handler and the reply block. The first final outcome wins; the reply block
// runs exactly once, on the context's private reply queue.

import Dispatch
import Foundation
import LocalAuthProtocol

final class Evaluation: LAPromptSession, @unchecked Sendable {
    let policy: LAPolicy
    let localizedReason: String
    private let link: DaemonLink
    private let ctx: String
    private let handler: (any LAPromptHandler)?
    private let promptQueue: DispatchQueue
    private let replyQueue: DispatchQueue
    private let reply: @Sendable (Bool, (any Error)?) -> Void
    /// Told the method and domain state of a success (the context keeps them).
    private let onSuccess: @Sendable (_ method: String?, _ domainState: String?) -> Void

    private let lock = NSLock()
    private var finished = false
    /// Counts prompts, so that a late passcode answer to an older prompt is dropped.
    private var generation = 0
    private var passcodeTask: Task<Void, Never>?
    /// Set when we cancelled because nobody could answer a passcode prompt.
    private var unanswerable: LAError?
    /// Keeps the context (and so its connection) alive while the evaluation runs,
    /// as iOS does for `let context = LAContext(); context.evaluatePolicy(...)`.
    private var owner: AnyObject?

    /// Set for a right-authorize (LARight.swift): that verb instead of `evaluate`.
    private let rightIdentifier: String?

    init(policy: LAPolicy, reason: String, link: DaemonLink, ctx: String, handler: (any LAPromptHandler)?,
         promptQueue: DispatchQueue, replyQueue: DispatchQueue, owner: AnyObject, rightIdentifier: String? = nil,
         onSuccess: @escaping @Sendable (_ method: String?, _ domainState: String?) -> Void, reply: @escaping @Sendable (Bool, (any Error)?) -> Void) {
        self.policy = policy
        self.localizedReason = reason
        self.link = link
        self.ctx = ctx
        self.handler = handler
        self.promptQueue = promptQueue
        self.replyQueue = replyQueue
        self.owner = owner
        self.rightIdentifier = rightIdentifier
        self.onSuccess = onSuccess
        self.reply = reply
    }

    func start() {
        var (verb, arguments): (String, [(String, String)]) = rightIdentifier.map {
            ("right-authorize", [("ctx", ctx), ("identifier", $0), ("reason", localizedReason)])
        } ?? ("evaluate", [("ctx", ctx), ("policy", policy.wireValue), ("reason", localizedReason)])
        // S-60: touch or type, where the handler can show both at once.
        if let handler, handler.canShowCombinedPrompt, handler.canCollectPasscode { arguments.append(("prompt", "combined")) }
        link.send(verb, arguments) { [self] event in handle(event) }
    }

    var isActive: Bool { lock.withLock { !finished } }

    func chooseFallback() {
        guard isActive else { return }
        link.send("fallback", [("ctx", ctx)], handler: nil)
    }

    func cancel() {
        guard isActive else { return }
        link.send("cancel", [("ctx", ctx)], handler: nil)
    }

    // MARK: Replies (reader queue)

    private func handle(_ event: LinkEvent) {
        switch event {
        case .lost(let why):
            finish(false, LAError(.systemCancel, "The connection to localauthd ended during the evaluation: \(why).",
                                  reason: "disconnect"))
        case .reply(let response):
            switch response.status {
            case .prompt: prompt(response.arguments)
            case .ok:
                onSuccess(response.arguments.value(for: "method"), response.arguments.value(for: "domain-state"))
                finish(true, nil)
            default:
                finish(false, Evaluation.error(from: response, replacingUserCancelWith: lock.withLock { unanswerable }))
            }
        }
    }

    private func prompt(_ arguments: Arguments) {
        // S-66: the session's agent shows the prompts; only the answer comes here.
        if arguments.value(for: "kind") == "agent" { return }
        let reason = arguments.value(for: "reason") ?? localizedReason
        let cancelTitle = arguments.value(for: "cancel") ?? "Cancel"
        let message = arguments.value(for: "message")
        let current: Int = lock.withLock {
            generation += 1
            passcodeTask?.cancel()
            passcodeTask = nil
            return generation
        }
        let kind = arguments.value(for: "kind")
        if kind == "passcode" || kind == "biometric-or-passcode" {
            let attemptsLeft = arguments.value(for: "attempts-left").flatMap { Int($0) } ?? 0
            let prompt = LAPasscodePrompt(localizedReason: reason, cancelTitle: cancelTitle, attemptsLeft: attemptsLeft,
                                          message: message)
            let combined = kind == "passcode" ? nil : LACombinedPrompt(
                attempt: arguments.value(for: "attempt").flatMap { Int($0) } ?? 1,
                biometryType: LABiometryType(wireName: arguments.value(for: "biometry")),
                localizedReason: reason, cancelTitle: cancelTitle, attemptsLeft: attemptsLeft, message: message)
            guard let handler, handler.canCollectPasscode else {
                // Nobody can answer: end now (documented: notInteractive), never wait.
                lock.withLock {
                    unanswerable = LAError(
                        .notInteractive,
                        "A passcode is needed but no one can enter it: no prompt handler is set and there is no controlling terminal.",
                        reason: "no-prompt-handler")
                }
                link.send("cancel", [("ctx", ctx)], handler: nil)
                return
            }
            promptQueue.async { [self] in
                lock.withLock {
                    guard !finished, generation == current else { return }
                    passcodeTask = Task { [self] in
                        let secret: String?
                        if let combined {
                            secret = await handler.passcode(forCombined: combined, session: self)
                        } else {
                            secret = await handler.passcode(for: prompt, session: self)
                        }
                        answer(secret, generation: current)
                    }
                }
            }
            return
        }
        let fallback = arguments.value(for: "fallback")
        let prompt = LABiometricPrompt(
            attempt: arguments.value(for: "attempt").flatMap { Int($0) } ?? 1,
            biometryType: LABiometryType(wireName: arguments.value(for: "biometry")),
            localizedReason: reason, cancelTitle: cancelTitle, fallbackTitle: fallback, message: message)
        guard let handler else { return }
        promptQueue.async { [self] in
            guard isActive else { return }
            handler.showBiometricPrompt(prompt, session: self)
        }
    }

    private func answer(_ secret: String?, generation answered: Int) {
        let current = lock.withLock { !finished && generation == answered && !Task.isCancelled }
        guard current else { return }
        if let secret {
            link.send("passcode", [("ctx", ctx), ("secret", secret)], handler: nil)
        } else {
            link.send("cancel", [("ctx", ctx)], handler: nil)
        }
    }

    private func finish(_ success: Bool, _ error: LAError?) {
        let proceed: Bool = lock.withLock {
            guard !finished else { return false }
            finished = true
            passcodeTask?.cancel()
            passcodeTask = nil
            return true
        }
        guard proceed else { return }
        let reply = self.reply
        let error: (any Error)? = error
        replyQueue.async { reply(success, error) }
        if let handler {
            promptQueue.async { [self] in handler.dismissPrompt(session: self) }
        }
        lock.withLock { owner = nil }
    }

    /// The LAError of an `ERR` reply (either domain).
    static func error(from response: Response, replacingUserCancelWith replacement: LAError? = nil) -> LAError {
        let message = response.message ?? "localauthd refused the request."
        guard response.errorDomain == "la" else {
            // Protocol errors: an unknown context is an invalid one; anything
            // else (busy, bad-argument, ...) is the system refusing.
            if response.errorName == "unknown-context" {
                return LAError(.invalidContext, message, reason: response.errorName)
            }
            return LAError(.systemCancel, message, reason: response.errorName)
        }
        let code = response.errorCode.flatMap(LAError.Code.init(rawValue:)) ?? .authenticationFailed
        if code == .userCancel, let replacement { return replacement }
        return LAError(code, message,
                       retryAfter: response.arguments.value(for: "retry-after").flatMap { Int($0) },
                       reason: response.arguments.value(for: "reason"))
    }
}
