// The binary layout of a whole `AuthState`, the payload of a snapshot file.
// Deterministic (users and contexts sorted by key), so the same state always
// gives the same bytes, and versioned like events.

public enum StateCodec {
    /// 2: contexts carry `passcodePrompts` (S-44); 3: prompts carry
    /// `retryAfter` and an evaluation may be at a combined prompt (S-60);
    /// 4: a context's `prompt` and its evaluation's agent route (S-66);
    /// 5: a user's failure tally, notice and last sign-in, a context's
    /// labels (S-64); 6: a context's requester and the requester pairs'
    /// counters (S-54). Older snapshots still load.
    public static let version: UInt8 = 6

    public static func encode(_ state: AuthState) -> [UInt8] {
        var w = ByteWriter(capacity: 256 + state.contexts.count * 64 + state.users.count * 64)
        w.u8(version)
        RulesCodec.encode(state.rules, into: &w)
        w.string(state.bootID)
        w.svarint(state.clockHighWater)
        w.varint(state.eventCount)
        w.varint(UInt64(state.users.count))
        for uid in state.users.keys.sorted() {
            w.varint(UInt64(uid))
            encodeUser(state.users[uid]!, into: &w)
        }
        w.varint(UInt64(state.contexts.count))
        for ctx in state.contexts.keys.sorted() {
            w.context(ctx)
            encodeContext(state.contexts[ctx]!, into: &w)
        }
        w.varint(UInt64(state.prompting.count))
        for ctx in state.prompting.sorted() { w.context(ctx) }
        // Version 6.
        w.varint(UInt64(state.requesterAttempts.count))
        for pair in state.requesterAttempts.keys.sorted() {
            let attempts = state.requesterAttempts[pair]!
            w.varint(UInt64(pair.subject)); w.varint(UInt64(pair.requester))
            w.int(attempts.passcodeFailures); w.optional(attempts.retryAt) { $0.svarint($1) }; w.bool(attempts.locked)
        }
        return w.bytes
    }

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> AuthState {
        var r = ByteReader(bytes)
        let v = try r.u8()
        guard v >= 1, v <= version else { throw DecodeError("unsupported snapshot version \(v)") }
        var state = AuthState(rules: try RulesCodec.decode(&r))
        state.bootID = try r.string()
        state.clockHighWater = try r.svarint()
        state.eventCount = try r.varint()
        let users = try r.varint()
        guard users <= UInt64(bytes.count) else { throw DecodeError("implausible user count \(users)") }
        for _ in 0..<users {
            let uid = try r.u32()
            state.users[uid] = try decodeUser(&r, version: v)
        }
        let contexts = try r.varint()
        guard contexts <= UInt64(bytes.count) else { throw DecodeError("implausible context count \(contexts)") }
        state.contexts.reserveCapacity(Int(contexts))
        for _ in 0..<contexts {
            let ctx = try r.context()
            state.contexts[ctx] = try decodeContext(&r, version: v)
        }
        let prompting = try r.varint()
        guard prompting <= contexts else { throw DecodeError("implausible prompting count \(prompting)") }
        for _ in 0..<prompting { state.prompting.insert(try r.context()) }
        if v >= 6 {
            let pairs = try r.varint()
            guard pairs <= UInt64(bytes.count) else { throw DecodeError("implausible requester count \(pairs)") }
            for _ in 0..<pairs {
                let pair = RequesterPair(subject: try r.u32(), requester: try r.u32())
                var attempts = RequesterAttempts()
                attempts.passcodeFailures = try r.int(in: 0...Int(Int32.max))
                attempts.retryAt = try r.optional { try $0.svarint() }
                attempts.locked = try r.bool()
                guard pair.subject != pair.requester else { throw DecodeError("a requester pair of one user") }
                state.requesterAttempts[pair] = attempts
            }
        }
        try r.expectEnd()
        return state
    }

    public static func decode(_ bytes: [UInt8]) throws -> AuthState {
        try bytes.withUnsafeBytes { try decode($0) }
    }

    private static func encodeUser(_ u: UserState, into w: inout ByteWriter) {
        w.varint(UInt64(u.templates.count))
        for t in u.templates { w.string(t) }
        w.string(u.domainState.description)
        w.bool(u.passcodeSet)
        w.int(u.biometricFailures)
        w.bool(u.biometryLockedOut)
        w.int(u.passcodeFailures)
        w.optional(u.passcodeRetryAt) { $0.svarint($1) }
        w.bool(u.adminLocked)
        w.optional(u.lastPasscodeSuccess) { $0.svarint($1) }
        w.optional(u.lastPasscodeBootID) { $0.string($1) }
        w.optional(u.lastDeviceUnlock) { $0.svarint($1) }
        w.optional(u.promptHolder) { $0.context($1) }
        w.int(u.openContexts)
        encodeTally(u.failuresSinceSignIn, into: &w)
        encodeTally(u.notice, into: &w)
        w.optional(u.lastSignIn) { $0.svarint($1) }
    }

    private static func encodeTally(_ t: FailureTally, into w: inout ByteWriter) {
        w.int(t.biometric); w.int(t.passcode); w.int(t.refused)
        w.optional(t.lastAt) { $0.svarint($1) }
        w.optional(t.lastService) { $0.string($1) }
        w.optional(t.lastTTY) { $0.string($1) }
        w.optional(t.lastRHost) { $0.string($1) }
    }

    private static func decodeTally(_ r: inout ByteReader) throws -> FailureTally {
        var t = FailureTally()
        t.biometric = try r.int(in: 0...Int(Int32.max))
        t.passcode = try r.int(in: 0...Int(Int32.max))
        t.refused = try r.int(in: 0...Int(Int32.max))
        t.lastAt = try r.optional { try $0.svarint() }
        t.lastService = try r.optional { try $0.string() }
        t.lastTTY = try r.optional { try $0.string() }
        t.lastRHost = try r.optional { try $0.string() }
        return t
    }

    private static func decodeUser(_ r: inout ByteReader, version: UInt8) throws -> UserState {
        var u = UserState()
        let count = try r.varint()
        guard count <= 4096 else { throw DecodeError("implausible template count \(count)") }
        for _ in 0..<count { u.templates.append(try r.string()) }
        u.domainState = try r.domainState()
        u.passcodeSet = try r.bool()
        u.biometricFailures = try r.int(in: 0...Int(Int32.max))
        u.biometryLockedOut = try r.bool()
        u.passcodeFailures = try r.int(in: 0...Int(Int32.max))
        u.passcodeRetryAt = try r.optional { try $0.svarint() }
        u.adminLocked = try r.bool()
        u.lastPasscodeSuccess = try r.optional { try $0.svarint() }
        u.lastPasscodeBootID = try r.optional { try $0.string() }
        u.lastDeviceUnlock = try r.optional { try $0.svarint() }
        u.promptHolder = try r.optional { try $0.context() }
        u.openContexts = try r.int(in: 0...Int(Int32.max))
        if version >= 5 {
            u.failuresSinceSignIn = try decodeTally(&r)
            u.notice = try decodeTally(&r)
            u.lastSignIn = try r.optional { try $0.svarint() }
        }
        return u
    }

    private static func encodeContext(_ c: ContextState, into w: inout ByteWriter) {
        w.varint(UInt64(c.uid))
        w.int(Int(c.pid))
        w.optional(c.invalidation) { $0.string($1.rawValue) }
        w.int(c.biometry.rawValue)
        w.string(c.domainState.description)
        w.optional(c.fallbackTitle) { $0.string($1) }
        w.optional(c.cancelTitle) { $0.string($1) }
        w.svarint(c.reuseDuration)
        w.bool(c.interactionNotAllowed)
        w.optional(c.localizedReason) { $0.string($1) }
        w.bool(c.succeededBiometric)
        w.bool(c.succeededPasscode)
        w.varint(UInt64(c.lastEvaluation))
        w.optional(c.evaluation) { w, e in
            w.varint(UInt64(e.id))
            w.int(e.policy.rawValue)
            w.string(e.reason)
            switch e.phase {
            case .starting: w.u8(0)
            case .biometric(let p): w.u8(1); encodePrompt(p, into: &w)
            case .passcode(let p): w.u8(2); encodePrompt(p, into: &w)
            case .verifyingPasscode: w.u8(3)
            case .combined(let p, let checking): w.u8(checking ? 5 : 4); encodePrompt(p, into: &w)
            }
            w.svarint(e.promptedAt)
            w.int(e.biometricFailures)
        }
        w.bool(c.passcodePrompts)
        // Version 4.
        w.string(c.prompt.rawValue)
        w.optional(c.evaluation?.route) { w, route in
            w.string(route.session); w.int(Int(route.agentPID)); w.bool(route.passcodePrompts)
        }
        w.optional(c.labels) { w, labels in
            w.optional(labels.service) { $0.string($1) }
            w.optional(labels.tty) { $0.string($1) }
            w.optional(labels.rhost) { $0.string($1) }
        }
        w.optional(c.requester) { $0.varint(UInt64($1)) }  // version 6
    }

    private static func decodeContext(_ r: inout ByteReader, version: UInt8) throws -> ContextState {
        var c = ContextState(uid: try r.u32(), pid: try r.i32())
        c.invalidation = try r.optional { try named(InvalidationReason.init(rawValue:), try $0.string()) }
        c.biometry = try raw(BiometryType.init(rawValue:), try r.int())
        c.domainState = try r.domainState()
        c.fallbackTitle = try r.optional { try $0.string() }
        c.cancelTitle = try r.optional { try $0.string() }
        c.reuseDuration = try r.svarint()
        c.interactionNotAllowed = try r.bool()
        c.localizedReason = try r.optional { try $0.string() }
        c.succeededBiometric = try r.bool()
        c.succeededPasscode = try r.bool()
        c.lastEvaluation = try r.u32()
        c.evaluation = try r.optional { r in
            var e = Evaluation(id: try r.u32(), policy: try raw(Policy.init(rawValue:), try r.int()), reason: try r.string())
            switch try r.u8() {
            case 0: e.phase = .starting
            case 1: e.phase = .biometric(try decodePrompt(&r, version: version))
            case 2: e.phase = .passcode(try decodePrompt(&r, version: version))
            case 3: e.phase = .verifyingPasscode
            case 4 where version >= 3: e.phase = .combined(try decodePrompt(&r, version: version), checking: false)
            case 5 where version >= 3: e.phase = .combined(try decodePrompt(&r, version: version), checking: true)
            case let other: throw DecodeError("unknown evaluation phase \(other)")
            }
            e.promptedAt = try r.svarint()
            e.biometricFailures = try r.int(in: 0...Int(Int32.max))
            return e
        }
        if version >= 2 { c.passcodePrompts = try r.bool() }
        if version >= 4 {
            c.prompt = try named(PromptDestination.init(rawValue:), try r.string())
            let route = try r.optional { r in
                let session = try r.string()
                guard AgentRoute.isValidSession(session) else { throw DecodeError("bad session id") }
                return AgentRoute(session: session, agentPID: try r.i32(), passcodePrompts: try r.bool())
            }
            if let route {
                guard c.evaluation != nil else { throw DecodeError("an agent route without an evaluation") }
                c.evaluation?.route = route
            }
        }
        if version >= 5 {
            c.labels = try r.optional { r in
                ContextLabels(service: try r.optional { try $0.string() }, tty: try r.optional { try $0.string() },
                              rhost: try r.optional { try $0.string() })
            }
        }
        if version >= 6 {
            c.requester = try r.optional { try $0.u32() }
            guard c.requester != c.uid else { throw DecodeError("a context whose requester is its subject") }
        }
        return c
    }

    private static func encodePrompt(_ p: Prompt, into w: inout ByteWriter) {
        w.string(p.kind.rawValue); w.int(p.attempt); w.bool(p.fallbackOffered); w.int(p.attemptsLeft)
        w.optional(p.message) { $0.string($1) }
        w.svarint(p.retryAfter)
    }

    private static func decodePrompt(_ r: inout ByteReader, version: UInt8) throws -> Prompt {
        var prompt = Prompt(kind: try named(Prompt.Kind.init(rawValue:), try r.string()), attempt: try r.int(),
                            fallbackOffered: try r.bool(), attemptsLeft: try r.int(), message: try r.optional { try $0.string() })
        if version >= 3 { prompt.retryAfter = try r.svarint() }
        return prompt
    }
}
