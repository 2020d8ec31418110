// What these tests add to LocalAuthTestSupport's DaemonProcess and Admin (a
// daemon in a temp directory that `LAContext()` reaches through
// LOCALAUTHD_SOCKET; the root test process as its administrator): a prompt
// handler the tests script, and a box for replies. Timeouts here are safety
// nets only, never assertions.
import Foundation
import Glibc
import LocalAuthentication
import LocalAuthTestSupport
import XCTest

/// A prompt handler a test drives: it reports each prompt (so the admin
/// feeds the sensor only once a prompt waits) and answers passcode prompts
/// from a list (nil entries cancel).
final class ScriptedHandler: LAPromptHandler, @unchecked Sendable {
    private let lock = NSLock()
    private let promptArrived = DispatchSemaphore(value: 0)
    private var prompts: [String] = []
    private var answers: [String?]
    private(set) var biometricPrompts: [LABiometricPrompt] = []
    private(set) var passcodePrompts: [LAPasscodePrompt] = []
    private(set) var dismissals = 0
    /// Choose the fallback when it is offered.
    var chooseFallback = false

    init(passcodes: [String?] = []) { answers = passcodes }

    func showBiometricPrompt(_ prompt: LABiometricPrompt, session: any LAPromptSession) {
        lock.withLock {
            biometricPrompts.append(prompt)
            prompts.append("biometric")
        }
        promptArrived.signal()
        if chooseFallback, prompt.fallbackTitle != nil { session.chooseFallback() }
    }

    func passcode(for prompt: LAPasscodePrompt, session: any LAPromptSession) async -> String? {
        let answer: String?? = lock.withLock {
            passcodePrompts.append(prompt)
            prompts.append("passcode")
            return answers.isEmpty ? nil : answers.removeFirst()
        }
        promptArrived.signal()
        return answer ?? nil
    }

    func dismissPrompt(session: any LAPromptSession) {
        lock.withLock { dismissals += 1 }
    }

    /// Blocks until the next prompt; returns its kind.
    func nextPrompt(file: StaticString = #filePath, line: UInt = #line) -> String? {
        guard promptArrived.wait(timeout: .now() + 15) == .success else {
            XCTFail("no prompt arrived (safety net)", file: file, line: line)
            return nil
        }
        return lock.withLock { prompts.removeFirst() }
    }
}

/// Waits for an evaluatePolicy reply (safety net 20 s).
final class ReplyBox: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var replies: [(Bool, (any Error)?, Bool)] = []

    var reply: @Sendable (Bool, (any Error)?) -> Void {
        { [self] success, error in
            let onMain = Thread.isMainThread
            lock.withLock { replies.append((success, error, onMain)) }
            done.signal()
        }
    }

    /// The one reply; fails the test on none.
    func wait(file: StaticString = #filePath, line: UInt = #line) -> (success: Bool, error: LAError?, nsError: NSError?, onMain: Bool) {
        guard done.wait(timeout: .now() + 20) == .success else {
            XCTFail("no reply (safety net)", file: file, line: line)
            return (false, nil, nil, false)
        }
        let (success, error, onMain) = lock.withLock { replies[0] }
        return (success, error as? LAError, error.map { $0 as NSError }, onMain)
    }

    var count: Int { lock.withLock { replies.count } }
}
