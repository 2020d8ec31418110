// Repeated identical checks recorded as one event with a count (S-48's named
// means against log floods; event kind 33). A client that asks
// `canEvaluatePolicy` in a loop, or pipelines it, would otherwise append one
// ~100-byte record per ask. The daemon's recorder keeps a run of checks whose
// policy-checked payloads are identical byte for byte (same uid, context,
// policy, biometry, result and reason) and that followed each other with
// nothing recorded between them, and appends it as one record before any of
// their replies leaves (LogRecorder.swift). S-19's promise is kept: every
// check is in the log, with its count and time range (`localauthctl log`).

/// `count` identical policy checks in one record: the last at the record's
/// time, the first `span` microseconds before it.
public struct RepeatedChecks: Sendable, Equatable {
    public var uid: UserID
    public var ctx: ContextID
    public var policy: Policy
    public var biometry: BiometryType
    public var result: LAErrorCode?
    public var reason: String?
    /// How many checks the record stands for: at least 2 (one check is a
    /// plain policy-checked record).
    public var count: UInt32
    /// Microseconds from the first check to the last (the record's time),
    /// never negative: a run never goes back in time.
    public var span: Int64

    public static let minimumCount: UInt32 = 2

    public init(uid: UserID, ctx: ContextID, policy: Policy, biometry: BiometryType, result: LAErrorCode?,
                reason: String?, count: UInt32, span: Int64) {
        self.uid = uid
        self.ctx = ctx
        self.policy = policy
        self.biometry = biometry
        self.result = result
        self.reason = reason
        self.count = count
        self.span = span
    }

    /// The policy-checked event each of the checks is.
    public var check: EventBody {
        .policyChecked(uid: uid, ctx: ctx, policy: policy, biometry: biometry, result: result, reason: reason)
    }

    /// The `count` policy-checked events this record stands for, as they
    /// would have been recorded one by one: the first at `time - span`, the
    /// others at `time` (the record keeps no time between the two; the fold
    /// uses only the last, S-8's high-water mark).
    public func events(at time: Int64) -> [Event] {
        (0..<Int(count)).map { Event(time: $0 == 0 ? time - span : time, check) }
    }
}
