// Reading an event body back from its bytes (EventCodec.swift writes them):
// every layout version a kind ever had is still read, its newer fields only
// when the payload's version is high enough. Hostile input throws, never traps.

extension EventCodec {
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
    fileprivate static func decode(_ kind: EventKind, _ r: inout ByteReader, version: UInt8) throws -> EventBody {
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
            guard version >= 4 else { return .contextCreated(uid: uid, ctx: ctx, pid: pid, origin: origin) }
            origin.requester = try r.optional { try $0.u32() }
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
            // A check that succeeded has no reason: the encoder (PolicyCheck)
            // never writes one, so a payload with one would not round-trip.
            if result == nil, reason != nil { throw DecodeError("a check that succeeded carries a reason") }
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
            let counted = try r.bool()
            guard version >= 2 else { return .passcodeRejected(uid: uid, ctx: ctx, eval: eval, counted: counted) }
            return .passcodeRejected(uid: uid, ctx: ctx, eval: eval, counted: counted, requester: try r.optional { try $0.u32() })
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
    fileprivate static func pamService(_ r: inout ByteReader) throws -> String {
        let service = try r.string()
        let bytes = service.utf8
        guard !bytes.isEmpty, bytes.count <= ContextOrigin.maximumFieldBytes,
              !bytes.contains(where: { $0 < 0x20 || $0 == 0x7f }) else { throw DecodeError("bad PAM service") }
        return service
    }

    /// A logind session id, refused as corrupt unless its grammar holds.
    fileprivate static func session(_ r: inout ByteReader) throws -> String {
        let id = try r.string()
        guard AgentRoute.isValidSession(id) else { throw DecodeError("bad session id") }
        return id
    }

    /// A right's identifier, refused as corrupt unless PROTOCOL.md's grammar holds.
    fileprivate static func rightIdentifier(_ r: inout ByteReader) throws -> String {
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
