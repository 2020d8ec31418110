// Event and prompt shorthands so that expectations read like the rules.

@testable import LocalAuthCore

let vaultReason = "Unlock the vault"

let firstBiometricPrompt = Prompt(kind: .biometric, attempt: 1, fallbackOffered: false)

func retryPrompt(attempt: Int, fallback: Bool = true) -> Prompt {
    Prompt(kind: .biometric, attempt: attempt, fallbackOffered: fallback, message: "Try again.")
}

func passcodePrompt(left: Int, wrong: Bool = false) -> Prompt {
    Prompt(kind: .passcode, attemptsLeft: left, message: wrong ? "Wrong passcode." : nil)
}

func started(_ uid: UserID, _ c: ContextID, _ eval: EvaluationID, _ policy: Policy,
             reason: String = vaultReason) -> EventBody {
    .evaluationStarted(uid: uid, ctx: c, eval: eval, policy: policy, reason: reason)
}

func prompted(_ uid: UserID, _ c: ContextID, _ eval: EvaluationID, _ prompt: Prompt) -> EventBody {
    .promptShown(uid: uid, ctx: c, eval: eval, prompt: prompt)
}

func failed(_ uid: UserID, _ c: ContextID, _ eval: EvaluationID, _ failure: Failure) -> EventBody {
    .evaluationFailed(uid: uid, ctx: c, eval: eval, failure: failure)
}

func failed(_ uid: UserID, _ c: ContextID, _ eval: EvaluationID, _ code: LAErrorCode) -> EventBody {
    .evaluationFailed(uid: uid, ctx: c, eval: eval, failure: Failure(code))
}

func succeeded(_ uid: UserID, _ c: ContextID, _ eval: EvaluationID, _ method: SuccessMethod) -> EventBody {
    .evaluationSucceeded(uid: uid, ctx: c, eval: eval, method: method)
}

let retryLimitExceeded = Failure(.authenticationFailed, message: "Application retry limit exceeded.")
let preempted = Failure(.systemCancel, message: "Another authentication started.", reason: "preempted")
let timedOut = Failure(.systemCancel, message: "Prompt timed out.", reason: "timeout")
let adminLockedFailure = Failure(.authenticationFailed, message: "Passcode entry is disabled.",
                                 reason: "admin-locked", adminLocked: true)
let passcodeRequired = Failure(.biometryLockout, message: "Passcode is required to enable biometry.",
                               reason: "passcode-required")

func retryAfter(_ seconds: Int64) -> Failure {
    Failure(.authenticationFailed, message: "Passcode entry is disabled.", retryAfter: seconds)
}

extension Scenario {
    /// Runs biometric evaluations (policy 1) on `c` and feeds no-matches until
    /// `uid` has `count` consecutive failures or is locked out.
    func failBiometry(_ uid: UserID, on c: ContextID, times count: Int) {
        var fed = 0
        while fed < count {
            if evaluation(c) == nil { given(.evaluate(ctx: c, policy: .biometrics, reason: vaultReason)) }
            guard case .success = feed(uid, .noMatch) else { return }
            fed += 1
        }
    }

    /// A user with a passcode but nothing enrolled: policy 2 goes straight to
    /// the passcode prompt. Enters `count` distinct wrong passcodes on `c`.
    func failPasscode(on c: ContextID, times count: Int) {
        for _ in 0..<count {
            if evaluation(c) == nil { given(.evaluate(ctx: c, policy: .owner, reason: vaultReason)) }
            enterPasscode(c, correct: false)
        }
    }
}
