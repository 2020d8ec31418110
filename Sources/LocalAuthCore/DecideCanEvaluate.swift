// canEvaluate (SEMANTICS §5: S-17..S-20). Never prompts, never changes a
// counter; records its answer so auditors see every check.
//
// The rule is a method on the state, returning its one event: `decide`
// emits it like any other, and the daemon's hot path (every
// `LAContext.canEvaluatePolicy` is one) calls it directly, without the
// event array and the copy of the state that a `Decision` costs.

/// A can-evaluate's answer: the event to record, the LAError the reply
/// carries when the check failed, and the user's domain state the reply
/// shows (S-19), read with the rest of the user's state.
public struct PolicyCheck: Sendable, Equatable {
    public var uid: UserID
    public var ctx: ContextID
    public var policy: Policy
    /// S-17: the sensor type the context now knows.
    public var biometry: BiometryType
    public var domainState: DomainState
    /// The failure, boxed: a check that succeeded (the hot path) carries
    /// one null reference instead of a Failure's strings and optionals,
    /// which made every move of the check an outlined copy (callgrind:
    /// ~190 instructions per can-evaluate). Inlinable, so that the daemon's
    /// "did it fail?" is one null test, not a call.
    @usableFromInline let answer: FailureAnswer?

    public init(uid: UserID, ctx: ContextID, policy: Policy, biometry: BiometryType, failure: Failure?,
                domainState: DomainState) {
        self.uid = uid
        self.ctx = ctx
        self.policy = policy
        self.biometry = biometry
        self.domainState = domainState
        self.answer = failure.map(FailureAnswer.init)
    }

    /// A check as its event records it (the event keeps no message).
    init(uid: UserID, ctx: ContextID, policy: Policy, biometry: BiometryType, result: LAErrorCode?, reason: String?,
         domainState: DomainState) {
        self.init(uid: uid, ctx: ctx, policy: policy, biometry: biometry,
                  failure: result.map { Failure($0, reason: reason) }, domainState: domainState)
    }

    /// The LAError when the check failed (S-18), exactly as the reply gives
    /// it (code, message, wire reason); nil on success.
    @inlinable public var failure: Failure? { answer?.failure }
    /// The event's `result` and `reason`.
    @inlinable public var result: LAErrorCode? { answer?.failure.code }
    @inlinable public var reason: String? { answer?.failure.reason }

    /// The event to record: made from the fields when asked for, so a caller
    /// that reads the fields and records the event copies no enum payload.
    public var event: EventBody {
        .policyChecked(uid: uid, ctx: ctx, policy: policy, biometry: biometry, result: result, reason: reason)
    }

    public static func == (a: PolicyCheck, b: PolicyCheck) -> Bool {
        a.uid == b.uid && a.ctx == b.ctx && a.policy == b.policy && a.biometry == b.biometry
            && a.domainState == b.domainState && a.failure == b.failure
    }
}

/// A failed check's LAError, held by reference (see `PolicyCheck.answer`).
@usableFromInline final class FailureAnswer: Sendable {
    @usableFromInline let failure: Failure
    init(_ failure: Failure) { self.failure = failure }
}

extension AuthState {
    /// The event a can-evaluate records, or why it is refused (S-12, S-18).
    /// `blocked`: why biometry is unavailable where the client is (S-61..S-63).
    public func canEvaluate(_ ctx: ContextID, policy: Policy, now: Int64,
                            blocked: BiometryBlock? = nil) -> Result<PolicyCheck, Rejection> {
        guard let context = contexts[ctx] else {
            return .failure(Rejection(.unknownContext, "No such context."))
        }
        // The two fields, taken at once: the optimiser then drops the copy
        // of the whole ContextState (held across the calls below, it keeps it).
        let uid = context.uid, isOpen = context.isOpen
        // S-18: an invalidated context answers invalidContext before policy 5 is refused.
        guard policy != .wrist || !isOpen else {
            return .failure(Rejection(.badArgument, "Policy 5 (wrist detection) is not supported."))
        }
        // The user read in place (UserTable.withUser), not copied, for every step of the check.
        let (failure, domainState) = users.withUser(uid) { user in
            (policyCheck(user, isOpen: isOpen, policy: policy, now: now, blocked: blocked), user.domainState)
        }
        // S-17: after any can-evaluate the context knows the sensor type.
        return .success(PolicyCheck(uid: uid, ctx: ctx, policy: policy, biometry: rules.biometryType,
                                    failure: failure, domainState: domainState))
    }

    /// S-18, steps 1, 2 (after the policy-5 rejection), 3 and 4.
    @inline(__always)
    func policyCheck(_ user: borrowing UserView, isOpen: Bool, policy: Policy, now: Int64,
                     blocked: BiometryBlock? = nil) -> Failure? {
        if !isOpen { return Failure(.invalidContext) }
        switch policy {
        case .companion:
            return Failure(.companionNotAvailable)
        case .biometrics, .biometricsOrCompanion:
            // Where the client is stands with "no sensor", step 3's first (S-61..S-63).
            if let blocked, rules.biometryType != .none { return blocked.failure }
            return biometryUnusable(user, now: now)
        case .owner:
            return user.passcodeSet ? nil : Failure(.passcodeNotSet)
        case .wrist:
            return Failure(.invalidDimensions)  // unreachable: rejected by callers
        }
    }
}

extension Decision {
    mutating func canEvaluate(_ ctx: ContextID, policy: Policy, blocked: BiometryBlock? = nil) throws {
        emit(try state.canEvaluate(ctx, policy: policy, now: now, blocked: blocked).get().event)
    }
}
