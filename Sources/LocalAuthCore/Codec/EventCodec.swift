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
        case .passcodeRejected(let uid, let ctx, let eval, let counted):
            w.varint(UInt64(uid)); w.optional(ctx) { $0.context($1) }; w.optional(eval) { $0.varint(UInt64($1)) }
            w.bool(counted)
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

    public static func decode(kind code: UInt16, payload: UnsafeRawBufferPointer) throws -> EventBody {
        guard let kind = EventKind(rawValue: code) else { throw DecodeError("unknown event type code \(code)") }
        var r = ByteReader(payload)
        let version = try r.u8()
        guard version >= Event.version, version <= kind.layoutVersion else {
            throw DecodeError("unsupported event version \(version) of \(kind.name)")
        }
        let body = try decode(kind, &r, version: version)
        try r.expectEnd()
        return body
    }

    public static func decode(kind code: UInt16, payload: [UInt8]) throws -> EventBody {
        try payload.withUnsafeBytes { try decode(kind: code, payload: $0) }
    }

    /// `version`: the payload's layout version (1...kind.layoutVersion);
    /// a kind whose layout grew reads its newer fields only when it is high enough.
    private static func decode(_ kind: EventKind, _ r: inout ByteReader, version: UInt8) throws -> EventBody {
        switch kind {
        case .daemonStarted:
            return .daemonStarted(version: try r.string(), bootID: try r.string(), pid: try r.i32())
        case .daemonStopped:
            return .daemonStopped
        case .contextCreated:
            let uid = try r.u32(), ctx = try r.context(), pid = try r.i32()
            guard version >= 2 else { return .contextCreated(uid: uid, ctx: ctx, pid: pid) }
            var origin = ContextOrigin()
            origin.caller = try r.optional { try $0.u32() }
            origin.service = try r.optional { try $0.string() }
            origin.tty = try r.optional { try $0.string() }
            origin.rhost = try r.optional { try $0.string() }
            origin.passcodePrompts = try r.bool()
            guard version >= 3 else { return .contextCreated(uid: uid, ctx: ctx, pid: pid, origin: origin) }
            guard let transport = ContextOrigin.Transport(rawValue: try r.u8()) else {
                throw DecodeError("bad context transport")
            }
            origin.transport = transport
            origin.busName = try r.optional { try $0.string() }
            origin.app = try r.optional { try $0.string() }
            let bound = ContextOrigin.maximumBusNameBytes
            guard transport == .dbus || (origin.busName == nil && origin.app == nil),
                  (origin.busName?.utf8.count ?? 0) <= bound, (origin.app?.utf8.count ?? 0) <= bound else {
                throw DecodeError("bad context bus name or app")
            }
            return .contextCreated(uid: uid, ctx: ctx, pid: pid, origin: origin)
        case .contextPropertySet:
            let uid = try r.u32(), ctx = try r.context(), name = try r.string(), value = try r.string()
            guard let property = ContextProperty(name: name, value: value) else {
                throw DecodeError("bad context property \(name)")
            }
            return .contextPropertySet(uid: uid, ctx: ctx, property: property)
        case .contextInvalidated:
            let uid = try r.u32(), ctx = try r.context()
            return .contextInvalidated(uid: uid, ctx: ctx, reason: try named(InvalidationReason.init(rawValue:), try r.string()))
        case .policyChecked:
            let uid = try r.u32(), ctx = try r.context()
            let policy = try raw(Policy.init(rawValue:), try r.int())
            let biometry = try raw(BiometryType.init(rawValue:), try r.int())
            let result = try r.optional { try raw(LAErrorCode.init(rawValue:), try $0.int()) }
            let reason = try r.optional { try $0.string() }
            return .policyChecked(uid: uid, ctx: ctx, policy: policy, biometry: biometry, result: result, reason: reason)
        case .policyCheckedRepeatedly:
            guard case .policyChecked(let uid, let ctx, let policy, let biometry, let result, let reason)
                = try decode(.policyChecked, &r, version: version) else { throw DecodeError("unreachable") }
            let count = try r.u32()
            guard count >= RepeatedChecks.minimumCount else { throw DecodeError("repeated checks counted \(count)") }
            let span = try r.varint()
            guard span <= UInt64(Int64.max) else { throw DecodeError("implausible span \(span)") }
            return .policyCheckedRepeatedly(RepeatedChecks(uid: uid, ctx: ctx, policy: policy, biometry: biometry,
                                                           result: result, reason: reason, count: count, span: Int64(span)))
        case .evaluationStarted:
            let uid = try r.u32(), ctx = try r.context(), eval = try r.u32()
            let policy = try raw(Policy.init(rawValue:), try r.int())
            return .evaluationStarted(uid: uid, ctx: ctx, eval: eval, policy: policy, reason: try r.string())
        case .promptShown:
            let uid = try r.u32(), ctx = try r.context(), eval = try r.u32()
            let promptKind = try named(Prompt.Kind.init(rawValue:), try r.string())
            let attempt = try r.int(), fallback = try r.bool(), left = try r.int()
            let message = try r.optional { try $0.string() }
            // Layout 1 had no combined prompt, so no passcode half to end.
            let retryAfter = version >= 2 ? try r.svarint() : 0
            guard retryAfter >= 0 else { throw DecodeError("negative retry-after \(retryAfter)") }
            let prompt = Prompt(kind: promptKind, attempt: attempt, fallbackOffered: fallback, attemptsLeft: left, message: message,
                                retryAfter: retryAfter)
            return .promptShown(uid: uid, ctx: ctx, eval: eval, prompt: prompt)
        case .biometricMatched:
            return .biometricMatched(uid: try r.u32(), ctx: try r.context(), eval: try r.u32())
        case .biometricFailed:
            return .biometricFailed(uid: try r.u32(), ctx: try r.context(), eval: try r.u32())
        case .fallbackChosen:
            return .fallbackChosen(uid: try r.u32(), ctx: try r.context(), eval: try r.u32())
        case .biometricDisconnected:
            return .biometricDisconnected(uid: try r.u32(), ctx: try r.context(), eval: try r.u32())
        case .passcodeSubmitted:
            return .passcodeSubmitted(uid: try r.u32(), ctx: try r.context(), eval: try r.u32())
        case .biometricRetry:
            return .biometricRetry(uid: try r.u32(), ctx: try r.context(), eval: try r.u32(), message: try r.string())
        case .passcodeAccepted:
            let uid = try r.u32()
            let ctx = try r.optional { try $0.context() }
            return .passcodeAccepted(uid: uid, ctx: ctx, eval: try r.optional { try $0.u32() })
        case .passcodeRejected:
            let uid = try r.u32()
            let ctx = try r.optional { try $0.context() }
            let eval = try r.optional { try $0.u32() }
            return .passcodeRejected(uid: uid, ctx: ctx, eval: eval, counted: try r.bool())
        case .passcodeRefused:
            let uid = try r.u32()
            let ctx = try r.optional { try $0.context() }
            let eval = try r.optional { try $0.u32() }
            let retryAfter = try r.svarint()
            guard retryAfter >= 0 else { throw DecodeError("negative retry-after \(retryAfter)") }
            return .passcodeRefused(uid: uid, ctx: ctx, eval: eval, retryAfter: retryAfter)
        case .evaluationSucceeded:
            let uid = try r.u32(), ctx = try r.context(), eval = try r.u32()
            return .evaluationSucceeded(uid: uid, ctx: ctx, eval: eval, method: try named(SuccessMethod.init(rawValue:), try r.string()))
        case .evaluationFailed:
            let uid = try r.u32(), ctx = try r.context(), eval = try r.u32()
            let code = try raw(LAErrorCode.init(rawValue:), try r.int())
            let message = try r.string()
            let reason = try r.optional { try $0.string() }
            let retryAfter = try r.optional { try $0.svarint() }
            let failure = Failure(code, message: message, reason: reason, retryAfter: retryAfter, adminLocked: try r.bool())
            return .evaluationFailed(uid: uid, ctx: ctx, eval: eval, failure: failure)
        case .enrollmentChanged:
            let uid = try r.u32()
            let count = try r.varint()
            guard count <= 4096 else { throw DecodeError("implausible template count \(count)") }
            var templates: [String] = []
            for _ in 0..<count { templates.append(try r.string()) }
            let by = try r.u32()
            let domainState = try r.domainState().description
            // Layout 1 had no source: every change was an administrator's.
            let source = version >= 2 ? try raw({ EnrollmentSource(rawValue: UInt8(truncatingIfNeeded: $0)) }, Int(try r.u8())) : .admin
            return .enrollmentChanged(uid: uid, templates: templates, by: by, domainState: domainState, source: source)
        case .passcodeChanged:
            return .passcodeChanged(uid: try r.u32(), set: try r.bool(), by: try r.u32())
        case .deviceUnlocked:
            return .deviceUnlocked(uid: try r.u32(), by: try r.u32())
        case .userReset:
            return .userReset(uid: try r.u32(), by: try r.u32())
        case .logRepaired:
            return .logRepaired(firstLostSeq: try r.varint(), by: try r.u32())
        case .rulesApplied:
            return .rulesApplied(try RulesCodec.decode(&r))
        case .contextReleased:
            return .contextReleased(uid: try r.u32(), ctx: try r.context())
        case .snapshotRecorded:
            let seq = try r.varint(), digest = try r.string()
            guard digest.utf8.count == 64, digest.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }) else {
                throw DecodeError("snapshot digest is not 64 lower-case hex digits")
            }
            return .snapshotRecorded(snapshotSeq: seq, sha256: digest)
        case .logRollbackAccepted:
            return .logRollbackAccepted(journalSeq: try r.varint(), logSeq: try r.varint(), by: try r.u32())
        case .rightSaved, .rightRemoved:
            let uid = try r.u32(), identifier = try rightIdentifier(&r)
            let requirement = try named(RightRequirement.init(rawValue:), try r.string())
            return kind == .rightSaved ? .rightSaved(uid: uid, identifier: identifier, requirement: requirement)
                : .rightRemoved(uid: uid, identifier: identifier, requirement: requirement)
        case .rightDropped:
            let uid = try r.u32(), identifier = try rightIdentifier(&r)
            let requirement = try named(RightRequirement.init(rawValue:), try r.string())
            let name = try r.optional { try $0.string() }
            if let name, !AccountName.isValid(name) { throw DecodeError("invalid account name") }
            return .rightDropped(uid: uid, identifier: identifier, requirement: requirement, name: name,
                                 reason: try named(RightDropReason.init(rawValue:), try r.string()))
        case .rightAuthorized:
            let uid = try r.u32(), ctx = try r.context(), identifier = try rightIdentifier(&r)
            return .rightAuthorized(uid: uid, ctx: ctx, identifier: identifier,
                                    method: try named(SuccessMethod.init(rawValue:), try r.string()))
        case .rightSecretRead:
            let uid = try r.u32(), ctx = try r.context()
            return .rightSecretRead(uid: uid, ctx: ctx, identifier: try rightIdentifier(&r))
        case .promptHalfEnded:
            let uid = try r.u32(), ctx = try r.context(), eval = try r.u32()
            let half = try named(PromptHalf.init(rawValue:), try r.string())
            let reason = try named(HalfEnd.init(rawValue:), try r.string())
            let retryAfter = try r.svarint()
            guard retryAfter >= 0 else { throw DecodeError("negative retry-after \(retryAfter)") }
            return .promptHalfEnded(uid: uid, ctx: ctx, eval: eval, half: half, reason: reason, retryAfter: retryAfter)
        case .biometrySkipped:
            let uid = try r.u32(), ctx = try r.context(), eval = try r.u32()
            let reason = try named(BiometrySkip.init(rawValue:), try r.string())
            return .biometrySkipped(uid: uid, ctx: ctx, eval: eval, reason: reason, detail: try r.optional { try $0.string() })
        case .systemSleep:
            switch try r.string() {
            case "suspending": return .systemSleep(suspending: true)
            case "resumed": return .systemSleep(suspending: false)
            case let other: throw DecodeError("unknown sleep state \"\(other)\"")
            }
        case .agentRegistered:
            return .agentRegistered(uid: try r.u32(), session: try session(&r), pid: try r.i32())
        case .agentUnregistered:
            let uid = try r.u32(), session = try session(&r), pid = try r.i32()
            return .agentUnregistered(uid: uid, session: session, pid: pid,
                                      reason: try named(AgentUnregistration.init(rawValue:), try r.string()))
        case .promptsRouted:
            let uid = try r.u32(), ctx = try r.context(), eval = try r.u32()
            let route = AgentRoute(session: try session(&r), agentPID: try r.i32(), passcodePrompts: try r.bool())
            return .promptsRouted(uid: uid, ctx: ctx, eval: eval, route: route)
        case .agentRefused:
            let uid = try r.u32(), pid = try r.i32()
            let request = try named(AgentRefusal.Request.init(rawValue:), try r.string())
            let reason = try named(AgentRefusal.Reason.init(rawValue:), try r.string())
            let session = try r.optional { try EventCodec.session(&$0) }
            let ctx = try r.optional { try $0.context() }
            let eval = try r.optional { try $0.u32() }
            return .agentRefused(AgentRefusal(uid: uid, pid: pid, request: request, reason: reason, session: session,
                                              ctx: ctx, eval: eval))
        case .rightKeyCreated:
            let uid = try r.u32(), identifier = try rightIdentifier(&r), digest = try r.string()
            guard digest.utf8.count == 64, digest.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }) else {
                throw DecodeError("public key digest is not 64 lower-case hex digits")
            }
            return .rightKeyCreated(uid: uid, identifier: identifier, publicKeySHA256: digest)
        case .rightKeyUsed:
            let uid = try r.u32(), ctx = try r.context(), identifier = try rightIdentifier(&r)
            let operation = try named(KeyOperation.init(rawValue:), try r.string())
            guard let algorithm = KeyAlgorithm.named(try r.string(), for: operation) else {
                throw DecodeError("unknown key algorithm for \(operation.wireName)")
            }
            return .rightKeyUsed(uid: uid, ctx: ctx, identifier: identifier, algorithm: algorithm)
        case .loginSecretStored, .loginSecretReleased:
            let uid = try r.u32(), ctx = try r.context(), eval = try r.u32(), service = try pamService(&r)
            return kind == .loginSecretStored ? .loginSecretStored(uid: uid, ctx: ctx, eval: eval, service: service)
                : .loginSecretReleased(uid: uid, ctx: ctx, eval: eval, service: service)
        case .loginSecretVoided:
            let uid = try r.u32()
            return .loginSecretVoided(uid: uid, reason: try named(LoginSecretVoiding.init(rawValue:), try r.string()))
        case .loginSecretRefused:
            let uid = try r.u32(), caller = try r.u32()
            let ctx = try r.optional { try $0.context() }, eval = try r.optional { try $0.u32() }
            let service = try r.optional { try EventCodec.pamService(&$0) }
            let reason = try named(LoginSecretRefusal.Reason.init(rawValue:), try r.string())
            return .loginSecretRefused(LoginSecretRefusal(uid: uid, caller: caller, ctx: ctx, eval: eval, service: service,
                                                          reason: reason))
        case .loginSecretChoice:
            return .loginSecretChoice(uid: try r.u32(), enabled: try r.bool(), by: try r.u32())
        }
    }

    /// A PAM service as S-42 records it: 1..256 bytes without a control character.
    private static func pamService(_ r: inout ByteReader) throws -> String {
        let service = try r.string()
        let bytes = service.utf8
        guard !bytes.isEmpty, bytes.count <= ContextOrigin.maximumFieldBytes,
              !bytes.contains(where: { $0 < 0x20 || $0 == 0x7f }) else { throw DecodeError("bad PAM service") }
        return service
    }

    /// A logind session id, refused as corrupt unless its grammar holds.
    private static func session(_ r: inout ByteReader) throws -> String {
        let id = try r.string()
        guard AgentRoute.isValidSession(id) else { throw DecodeError("bad session id") }
        return id
    }

    /// A right's identifier, refused as corrupt unless PROTOCOL.md's grammar holds.
    private static func rightIdentifier(_ r: inout ByteReader) throws -> String {
        let identifier = try r.string()
        guard RightIdentifier.isValid(identifier) else { throw DecodeError("bad right identifier") }
        return identifier
    }
}

func raw<T>(_ make: (Int) -> T?, _ value: Int) throws -> T {
    guard let result = make(value) else { throw DecodeError("unknown \(T.self) raw value \(value)") }
    return result
}

func named<T>(_ make: (String) -> T?, _ value: String) throws -> T {
    guard let result = make(value) else { throw DecodeError("unknown \(T.self) name \"\(value)\"") }
    return result
}
