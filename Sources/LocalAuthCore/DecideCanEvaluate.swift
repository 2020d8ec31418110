// canEvaluate (SEMANTICS §5: S-17..S-20). Never prompts, never changes a
// counter; records its answer so auditors see every check.

extension Decision {
    mutating func canEvaluate(_ ctx: ContextID, policy: Policy) throws {
        let context = try self.context(ctx)
        // S-18: an invalidated context answers invalidContext before policy 5 is refused.
        guard policy != .wrist || !context.isOpen else {
            throw Rejection(.badArgument, "Policy 5 (wrist detection) is not supported.")
        }
        let failure = policyCheck(context, policy: policy)
        // S-17: after any can-evaluate the context knows the sensor type.
        emit(.policyChecked(uid: context.uid, ctx: ctx, policy: policy, biometry: rules.biometryType,
                            result: failure?.code, reason: failure?.reason))
    }

    /// S-18, steps 1, 2 (after the policy-5 rejection), 3 and 4.
    func policyCheck(_ context: ContextState, policy: Policy) -> Failure? {
        if !context.isOpen { return Failure(.invalidContext) }
        switch policy {
        case .companion:
            return Failure(.companionNotAvailable)
        case .biometrics, .biometricsOrCompanion:
            return state.biometryUnusable(context.uid, now: now)
        case .owner:
            return state.user(context.uid).passcodeSet ? nil : Failure(.passcodeNotSet)
        case .wrist:
            return Failure(.invalidDimensions)  // unreachable: rejected by callers
        }
    }
}
