// The binary layout of an event body (the payload of a log record; the
// record header carries the time and the kind's type code). Layout:
// one version byte, then the kind's fields in declaration order, using
// `ByteWriter`'s primitives. Adding a field means a new version whose
// decoder still accepts the old one; kinds are only appended.

public enum EventCodec {
    public static func encode(_ body: EventBody) -> [UInt8] {
        var w = ByteWriter(capacity: 48)
        encode(body, into: &w)
        return w.bytes
    }

    public static func encode(_ body: EventBody, into w: inout ByteWriter) {
        w.u8(body.kind.layoutVersion)
        switch body {
        case .daemonStarted(let version, let bootID, let pid):
            w.string(version); w.string(bootID); w.int(Int(pid))
        case .daemonStopped:
            break
        case .contextCreated(let uid, let ctx, let pid, let origin):
            w.varint(UInt64(uid)); w.context(ctx); w.int(Int(pid))
            w.optional(origin.caller) { $0.varint(UInt64($1)) }
            w.optional(origin.service) { $0.string($1) }
            w.optional(origin.tty) { $0.string($1) }
            w.optional(origin.rhost) { $0.string($1) }
            w.bool(origin.passcodePrompts)
            w.u8(origin.transport.rawValue)
            w.optional(origin.busName) { $0.string($1) }
            w.optional(origin.app) { $0.string($1) }
            w.optional(origin.requester) { $0.varint(UInt64($1)) }  // layout 4
        case .contextPropertySet(let uid, let ctx, let property):
            w.varint(UInt64(uid)); w.context(ctx); w.string(property.name); w.string(property.value)
        case .contextInvalidated(let uid, let ctx, let reason):
            w.varint(UInt64(uid)); w.context(ctx); w.string(reason.rawValue)
        case .policyChecked(let uid, let ctx, let policy, let biometry, let result, let reason):
            checkFields(uid: uid, ctx: ctx, policy: policy, biometry: biometry, result: result, reason: reason, into: &w)
        case .policyCheckedRepeatedly(let checks):
            // policy-checked's fields, then the count and the span (the
            // daemon appends those two to a check's payload: LogRecorder).
            checkFields(uid: checks.uid, ctx: checks.ctx, policy: checks.policy, biometry: checks.biometry,
                        result: checks.result, reason: checks.reason, into: &w)
            w.varint(UInt64(checks.count)); w.varint(UInt64(checks.span))
        case .evaluationStarted(let uid, let ctx, let eval, let policy, let reason):
            w.varint(UInt64(uid)); w.context(ctx); w.varint(UInt64(eval)); w.int(policy.rawValue); w.string(reason)
        case .promptShown(let uid, let ctx, let eval, let prompt):
            w.varint(UInt64(uid)); w.context(ctx); w.varint(UInt64(eval))
            w.string(prompt.kind.rawValue); w.int(prompt.attempt); w.bool(prompt.fallbackOffered)
            w.int(prompt.attemptsLeft); w.optional(prompt.message) { $0.string($1) }
            w.svarint(prompt.retryAfter)  // layout 2
        case .biometricMatched(let uid, let ctx, let eval), .biometricFailed(let uid, let ctx, let eval),
             .fallbackChosen(let uid, let ctx, let eval), .biometricDisconnected(let uid, let ctx, let eval),
             .passcodeSubmitted(let uid, let ctx, let eval):
            w.varint(UInt64(uid)); w.context(ctx); w.varint(UInt64(eval))
        case .biometricRetry(let uid, let ctx, let eval, let message):
            w.varint(UInt64(uid)); w.context(ctx); w.varint(UInt64(eval)); w.string(message)
        case .passcodeAccepted(let uid, let ctx, let eval):
            w.varint(UInt64(uid)); w.optional(ctx) { $0.context($1) }; w.optional(eval) { $0.varint(UInt64($1)) }
        case .passcodeRejected(let uid, let ctx, let eval, let counted, let requester):
            w.varint(UInt64(uid)); w.optional(ctx) { $0.context($1) }; w.optional(eval) { $0.varint(UInt64($1)) }
            w.bool(counted)
            w.optional(requester) { $0.varint(UInt64($1)) }  // layout 2
        case .passcodeRefused(let uid, let ctx, let eval, let retryAfter):
            w.varint(UInt64(uid)); w.optional(ctx) { $0.context($1) }; w.optional(eval) { $0.varint(UInt64($1)) }
            w.svarint(retryAfter)
        case .evaluationSucceeded(let uid, let ctx, let eval, let method):
            w.varint(UInt64(uid)); w.context(ctx); w.varint(UInt64(eval)); w.string(method.rawValue)
        case .evaluationFailed(let uid, let ctx, let eval, let failure):
            w.varint(UInt64(uid)); w.context(ctx); w.varint(UInt64(eval))
            w.int(failure.code.rawValue); w.string(failure.message)
            w.optional(failure.reason) { $0.string($1) }
            w.optional(failure.retryAfter) { $0.svarint($1) }
            w.bool(failure.adminLocked)
        case .enrollmentChanged(let uid, let templates, let by, let domainState, let source):
            w.varint(UInt64(uid)); w.varint(UInt64(templates.count))
            for template in templates { w.string(template) }
            w.varint(UInt64(by)); w.string(domainState)
            w.u8(source.rawValue)  // layout 2
        case .passcodeChanged(let uid, let set, let by):
            w.varint(UInt64(uid)); w.bool(set); w.varint(UInt64(by))
        case .deviceUnlocked(let uid, let by), .userReset(let uid, let by):
            w.varint(UInt64(uid)); w.varint(UInt64(by))
        case .logRepaired(let firstLostSeq, let by):
            w.varint(firstLostSeq); w.varint(UInt64(by))
        case .rulesApplied(let rules):
            RulesCodec.encode(rules, into: &w)
        case .contextReleased(let uid, let ctx):
            w.varint(UInt64(uid)); w.context(ctx)
        case .snapshotRecorded(let snapshotSeq, let sha256):
            w.varint(snapshotSeq); w.string(sha256)
        case .logRollbackAccepted(let journalSeq, let logSeq, let by):
            w.varint(journalSeq); w.varint(logSeq); w.varint(UInt64(by))
        case .rightSaved(let uid, let identifier, let requirement), .rightRemoved(let uid, let identifier, let requirement):
            w.varint(UInt64(uid)); w.string(identifier); w.string(requirement.rawValue)
        case .rightAuthorized(let uid, let ctx, let identifier, let method):
            w.varint(UInt64(uid)); w.context(ctx); w.string(identifier); w.string(method.rawValue)
        case .rightSecretRead(let uid, let ctx, let identifier):
            w.varint(UInt64(uid)); w.context(ctx); w.string(identifier)
        case .promptHalfEnded(let uid, let ctx, let eval, let half, let reason, let retryAfter):
            w.varint(UInt64(uid)); w.context(ctx); w.varint(UInt64(eval))
            w.string(half.rawValue); w.string(reason.rawValue); w.svarint(retryAfter)
        case .biometrySkipped(let uid, let ctx, let eval, let reason, let detail):
            w.varint(UInt64(uid)); w.context(ctx); w.varint(UInt64(eval))
            w.string(reason.rawValue); w.optional(detail) { $0.string($1) }
        case .systemSleep(let suspending):
            w.string(suspending ? "suspending" : "resumed")
        case .agentRegistered(let uid, let session, let pid):
            w.varint(UInt64(uid)); w.string(session); w.int(Int(pid))
        case .agentUnregistered(let uid, let session, let pid, let reason):
            w.varint(UInt64(uid)); w.string(session); w.int(Int(pid)); w.string(reason.rawValue)
        case .promptsRouted(let uid, let ctx, let eval, let route):
            w.varint(UInt64(uid)); w.context(ctx); w.varint(UInt64(eval))
            w.string(route.session); w.int(Int(route.agentPID)); w.bool(route.passcodePrompts)
        case .agentRefused(let refusal):
            w.varint(UInt64(refusal.uid)); w.int(Int(refusal.pid))
            w.string(refusal.request.rawValue); w.string(refusal.reason.rawValue)
            w.optional(refusal.session) { $0.string($1) }
            w.optional(refusal.ctx) { $0.context($1) }
            w.optional(refusal.eval) { $0.varint(UInt64($1)) }
        case .rightKeyCreated(let uid, let identifier, let publicKeySHA256):
            w.varint(UInt64(uid)); w.string(identifier); w.string(publicKeySHA256)
        case .rightKeyUsed(let uid, let ctx, let identifier, let algorithm):
            w.varint(UInt64(uid)); w.context(ctx); w.string(identifier)
            w.string(algorithm.operation.wireName); w.string(algorithm.name)
        case .loginSecretStored(let uid, let ctx, let eval, let service),
             .loginSecretReleased(let uid, let ctx, let eval, let service):
            w.varint(UInt64(uid)); w.context(ctx); w.varint(UInt64(eval)); w.string(service)
        case .loginSecretVoided(let uid, let reason):
            w.varint(UInt64(uid)); w.string(reason.rawValue)
        case .loginSecretRefused(let refusal):
            w.varint(UInt64(refusal.uid)); w.varint(UInt64(refusal.caller))
            w.optional(refusal.ctx) { $0.context($1) }; w.optional(refusal.eval) { $0.varint(UInt64($1)) }
            w.optional(refusal.service) { $0.string($1) }; w.string(refusal.reason.rawValue)
        case .loginSecretChoice(let uid, let enabled, let by):
            w.varint(UInt64(uid)); w.bool(enabled); w.varint(UInt64(by))
        case .rightDropped(let uid, let identifier, let requirement, let name, let reason):
            w.varint(UInt64(uid)); w.string(identifier); w.string(requirement.rawValue)
            w.optional(name) { $0.string($1) }; w.string(reason.rawValue)
        }
    }

    /// policy-checked's fields after the layout byte. One layout for the
    /// kind: PolicyCheckedPayload's (the daemon writes it without a ByteWriter).
    private static func checkFields(uid: UserID, ctx: ContextID, policy: Policy, biometry: BiometryType,
                                    result: LAErrorCode?, reason: String?, into w: inout ByteWriter) {
        let check = PolicyCheck(uid: uid, ctx: ctx, policy: policy, biometry: biometry, result: result, reason: reason,
                                domainState: DomainState())
        withUnsafeTemporaryAllocation(byteCount: PolicyCheckedPayload.size(check), alignment: 8) { buffer in
            PolicyCheckedPayload.write(check, into: buffer)
            w.bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[1...]))
        }
    }
}
