// The configuration values that the rules depend on (PROTOCOL.md's
// [Biometry] and [Passcode] sections), with its defaults. They travel in the
// log as a `config-applied` event, so a replay judges every failure with the
// values that were in force when it happened.

/// Durations and times in the core are microseconds; see `Timestamp`.
public struct Rules: Sendable, Equatable, Hashable {
    /// `[Biometry] Type=`; `.none` means no sensor.
    public var biometryType: BiometryType
    /// `[Biometry] AttemptsPerEvaluation=`; nil = by type (3 touchID, 2 others).
    public var attemptsPerEvaluationOverride: Int?
    /// `[Biometry] LockoutThreshold=` (S-2).
    public var lockoutThreshold: Int
    /// `[Biometry] PromptTimeoutSec=` (S-31), microseconds.
    public var promptTimeout: Int64
    /// `[Biometry] PasscodeRequiredAfterSec=` (S-11), microseconds; 0 = off.
    public var passcodeRequiredAfter: Int64
    /// `[Biometry] PasscodeRequiredAfterBoot=` (S-11).
    public var passcodeRequiredAfterBoot: Bool
    /// `[Passcode] DelayAfterFailures=` (S-5).
    public var delayAfterFailures: Int
    /// `[Passcode] BackoffSec=` (S-5), microseconds; the last value repeats.
    public var backoff: [Int64]
    /// `[Passcode] MaxPasscodeFailures=` (S-6); 0 = no limit.
    public var maxPasscodeFailures: Int

    public static let `default` = Rules(
        biometryType: .touchID,
        attemptsPerEvaluationOverride: nil,
        lockoutThreshold: 5,
        promptTimeout: 60 * Timestamp.second,
        passcodeRequiredAfter: 0,
        passcodeRequiredAfterBoot: false,
        delayAfterFailures: 6,
        backoff: [60, 300, 900, 3600].map { $0 * Timestamp.second },
        maxPasscodeFailures: 0
    )

    public init(
        biometryType: BiometryType, attemptsPerEvaluationOverride: Int?, lockoutThreshold: Int,
        promptTimeout: Int64, passcodeRequiredAfter: Int64, passcodeRequiredAfterBoot: Bool,
        delayAfterFailures: Int, backoff: [Int64], maxPasscodeFailures: Int
    ) {
        self.biometryType = biometryType
        self.attemptsPerEvaluationOverride = attemptsPerEvaluationOverride
        self.lockoutThreshold = lockoutThreshold
        self.promptTimeout = promptTimeout
        self.passcodeRequiredAfter = passcodeRequiredAfter
        self.passcodeRequiredAfterBoot = passcodeRequiredAfterBoot
        self.delayAfterFailures = delayAfterFailures
        self.backoff = backoff
        self.maxPasscodeFailures = maxPasscodeFailures
    }

    /// S-27: failures one evaluation may see before it ends.
    public var attemptsPerEvaluation: Int {
        if let n = attemptsPerEvaluationOverride { return n }
        return biometryType == .touchID ? 3 : 2
    }

    /// S-5: the delay that failure number `failures` starts, or nil if none.
    public func passcodeDelay(afterFailures failures: Int) -> Int64? {
        guard failures >= delayAfterFailures, !backoff.isEmpty else { return nil }
        let index = min(failures - delayAfterFailures, backoff.count - 1)
        return backoff[index]
    }
}

/// Wall-clock microseconds since the Unix epoch. The core never reads a
/// clock: every command brings its `now`.
public enum Timestamp {
    public static let second: Int64 = 1_000_000
}
