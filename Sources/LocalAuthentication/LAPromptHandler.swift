// How a program answers the daemon's prompts (PROTOCOL.md, "Prompts").
//
// On iOS the system draws the authentication UI; here the daemon sends
// prompts to the client and the client shows them. A handler is chosen per
// evaluation: the context's `promptHandler`, else the process-wide
// `LAContext.defaultPromptHandler` (initially the controlling terminal,
// `LATerminalPromptHandler`).
//
// - Biometric prompts need no answer: the sensor answers. The handler is told
//   (to show "touch the sensor") and may choose the fallback or cancel
//   through the `LAPromptSession`.
// - A passcode prompt needs the passcode. When no handler can collect one
//   (no handler set, or the terminal handler without a terminal), the
//   evaluation ends at once: the context sends `cancel` and the reply gets
//   `LAError.notInteractive` (-1004), Apple's code for "the authentication UI
//   could not be shown". It never waits for an answer nobody can give.
//
// Callbacks run on a private queue of the context, never the caller's and
// never the connection's reader, so a handler may block or call the context.

import Foundation

/// A biometric prompt: the daemon waits for the sensor.
public struct LABiometricPrompt: Sendable, Hashable {
    /// 1 for the first prompt of the evaluation; retries and misses count up.
    public var attempt: Int
    public var biometryType: LABiometryType
    public var localizedReason: String
    public var cancelTitle: String
    /// The fallback button's title when the fallback is offered (from the
    /// first failure on, unless `localizedFallbackTitle` is ""), else nil.
    public var fallbackTitle: String?
    /// Why the prompt is shown again ("Try again.", "Finger moved too quickly."...).
    public var message: String?

    public init(attempt: Int, biometryType: LABiometryType, localizedReason: String, cancelTitle: String,
                fallbackTitle: String?, message: String?) {
        self.attempt = attempt
        self.biometryType = biometryType
        self.localizedReason = localizedReason
        self.cancelTitle = cancelTitle
        self.fallbackTitle = fallbackTitle
        self.message = message
    }
}

/// A passcode prompt: the daemon waits for the passcode.
public struct LAPasscodePrompt: Sendable, Hashable {
    public var localizedReason: String
    public var cancelTitle: String
    /// Failures left before passcode entry is delayed.
    public var attemptsLeft: Int
    /// Why the prompt is shown again (a wrong passcode), or nil.
    public var message: String?

    public init(localizedReason: String, cancelTitle: String, attemptsLeft: Int, message: String?) {
        self.localizedReason = localizedReason
        self.cancelTitle = cancelTitle
        self.attemptsLeft = attemptsLeft
        self.message = message
    }
}

/// Touch or type (S-60): the sensor scans while the passcode may be typed;
/// the first to succeed wins. Shown by a handler that can show both at once
/// (`canShowCombinedPrompt`), like macOS's dialog.
public struct LACombinedPrompt: Sendable, Hashable {
    /// The biometric half's attempt (1 for the first).
    public var attempt: Int
    public var biometryType: LABiometryType
    public var localizedReason: String
    public var cancelTitle: String
    /// Passcode failures left before passcode entry is delayed.
    public var attemptsLeft: Int
    /// Why the prompt is shown again ("Try again.", "Wrong passcode."), or nil.
    public var message: String?

    public init(attempt: Int, biometryType: LABiometryType, localizedReason: String, cancelTitle: String,
                attemptsLeft: Int, message: String?) {
        self.attempt = attempt
        self.biometryType = biometryType
        self.localizedReason = localizedReason
        self.cancelTitle = cancelTitle
        self.attemptsLeft = attemptsLeft
        self.message = message
    }
}

/// What a handler does to the running evaluation, besides answering.
public protocol LAPromptSession: AnyObject, Sendable {
    var policy: LAPolicy { get }
    var localizedReason: String { get }
    /// False once the evaluation ended (its reply is delivered or on its way).
    var isActive: Bool { get }
    /// Chooses the fallback button of the current biometric prompt
    /// (policy 1: the reply is `userFallback`; policy 2: the passcode prompt follows).
    func chooseFallback()
    /// Ends the evaluation with `userCancel`, like the prompt's cancel button.
    func cancel()
}

public protocol LAPromptHandler: AnyObject, Sendable {
    /// False when this handler cannot collect a passcode at all (the terminal
    /// handler without a terminal); the evaluation then ends with
    /// `notInteractive` instead of waiting. Default: true.
    var canCollectPasscode: Bool { get }

    /// A biometric prompt is up; no answer is needed. Default: nothing.
    func showBiometricPrompt(_ prompt: LABiometricPrompt, session: any LAPromptSession)

    /// The passcode, or nil to cancel (the reply is then `userCancel`). The
    /// task is cancelled when the evaluation ends meanwhile (timeout,
    /// invalidate, another prompt of the same user); an answer after that is
    /// ignored.
    func passcode(for prompt: LAPasscodePrompt, session: any LAPromptSession) async -> String?

    /// The evaluation ended (whatever the outcome): take the prompt down. Default: nothing.
    func dismissPrompt(session: any LAPromptSession)

    /// Whether this handler shows the sensor and the passcode at once
    /// (S-60); the evaluation then asks the daemon for the combined
    /// prompt. Default: false (biometry first, then the passcode).
    var canShowCombinedPrompt: Bool { get }

    /// The combined prompt is up: the passcode typed, or nil to cancel. The
    /// task is cancelled when the sensor answers first or the evaluation
    /// ends otherwise; it is asked again when the prompt changes (a miss, a
    /// wrong passcode). Default: the passcode prompt's `passcode(for:)`.
    func passcode(forCombined prompt: LACombinedPrompt, session: any LAPromptSession) async -> String?
}

extension LAPromptHandler {
    public var canCollectPasscode: Bool { true }
    public func showBiometricPrompt(_ prompt: LABiometricPrompt, session: any LAPromptSession) {}
    public func dismissPrompt(session: any LAPromptSession) {}
    public var canShowCombinedPrompt: Bool { false }
    public func passcode(forCombined prompt: LACombinedPrompt, session: any LAPromptSession) async -> String? {
        await passcode(for: LAPasscodePrompt(localizedReason: prompt.localizedReason, cancelTitle: prompt.cancelTitle,
                                             attemptsLeft: prompt.attemptsLeft, message: prompt.message), session: session)
    }
}
