// evolve: applies one event to the state. It decides nothing and never fails
// on a valid history: every "may this happen?" question was answered by
// `decide` before the event existed. What it does compute is arithmetic that
// an event implies under the rules in force (a failure that reaches the
// threshold locks biometry out; a failure past DelayAfterFailures sets the
// time until which passcode entry is refused), because AUDIT.md keeps
// lockouts derived rather than recorded.

extension AuthState {
    /// The functional form: `state = events.reduce(initial, AuthState.evolve)`.
    public static func evolve(_ state: AuthState, _ event: Event) -> AuthState {
        var next = state
        next.apply(event)
        return next
    }

    /// `apply(Event(time: time, check.event))` without making the event:
    /// every can-evaluate is folded this way by the daemon (the event's
    /// construction and destruction cost more than the fold).
    public mutating func apply(_ check: borrowing PolicyCheck, time: Int64) {
        eventCount += 1
        clockHighWater = max(clockHighWater, time)
        foldCheck(uid: check.uid, ctx: check.ctx, policy: check.policy, biometry: check.biometry,
                  succeeded: check.result == nil)
    }

    /// A check identical to the one folded last, with nothing folded since,
    /// that the recorder counted into that check's record (kind 33,
    /// RepeatedChecks.swift): the record is counted already and the context
    /// already holds what the check sets (the fold of a check is idempotent:
    /// it sets the sensor type and the user's token, and nothing changed
    /// them since), so only the clock's high-water mark moves. Replaying the
    /// record gives the same state (`test_S19_repeatedChecksFoldAsTheirCount`).
    public mutating func applyRepeated(_ check: borrowing PolicyCheck, time: Int64) {
        clockHighWater = max(clockHighWater, time)
    }

    /// The fold of policy-checked (S-17, S-19), for both forms of `apply`:
    /// one hash lookup, the context's fields set in place through `values`
    /// (`contexts[ctx]?.x = …` looks up and moves the whole ContextState out
    /// and back for each field).
    private mutating func foldCheck(uid: UserID, ctx: ContextID, policy: Policy, biometry: BiometryType, succeeded: Bool) {
        guard let index = contexts.index(forKey: ctx) else { return }
        let token = succeeded && (policy == .biometrics || policy == .biometricsOrCompanion) ? domainState(uid) : nil
        contexts.values[index].checked(biometry: biometry, domainState: token)
    }

    public mutating func apply(_ event: Event) {
        eventCount += 1
        clockHighWater = max(clockHighWater, event.time)
        let time = event.time
        switch event.body {
        case .daemonStarted(_, let bootID, _):
            self.bootID = bootID
        case .daemonStopped:
            break
        case .rulesApplied(let rules):
            self.rules = rules
        // Context events act on the context's owner, and on known contexts
        // only: `decide` never emits anything else, and a forged record (one
        // that passed the checksums) must not drive counters negative.
        case .contextCreated(let uid, let ctx, let pid, let origin):
            guard contexts[ctx] == nil else { break }
            contexts[ctx] = ContextState(uid: uid, pid: pid)
            if !origin.passcodePrompts { contexts[ctx]?.passcodePrompts = false }
            if let labels = ContextLabels.of(origin) { contexts[ctx]?.labels = labels }
            // S-54: only a requester other than the subject is kept.
            if let requester = origin.requester, requester != uid, origin.isOnBehalf { contexts[ctx]?.requester = requester }
            users[uid, default: UserState()].openContexts += 1
        case .contextPropertySet(_, let ctx, let property):
            applyProperty(property, to: ctx)
        case .contextInvalidated(_, let ctx, let reason):
            guard let uid = contexts[ctx]?.uid else { break }
            endEvaluation(ctx)
            if contexts[ctx]?.isOpen == true {
                users[uid, default: UserState()].openContexts -= 1
            }
            if reason == .app {
                contexts[ctx]?.invalidation = .app
            } else {
                contexts[ctx] = nil
            }
            dropUserIfEmpty(uid)
        case .contextReleased(_, let ctx):
            guard let uid = contexts[ctx]?.uid else { break }
            endEvaluation(ctx)
            if contexts[ctx]?.isOpen == true {
                users[uid, default: UserState()].openContexts -= 1
            }
            contexts[ctx] = nil
            dropUserIfEmpty(uid)
        case .policyChecked(let uid, let ctx, let policy, let biometry, let result, _):
            foldCheck(uid: uid, ctx: ctx, policy: policy, biometry: biometry, succeeded: result == nil)
        case .policyCheckedRepeatedly(let checks):
            // As `count` policy-checked events: the same fold each time
            // (idempotent), the clock at the last one's time (the event's);
            // `eventCount` counts records, so it moved by one above.
            foldCheck(uid: checks.uid, ctx: checks.ctx, policy: checks.policy, biometry: checks.biometry,
                      succeeded: checks.result == nil)
        case .evaluationStarted(_, let ctx, let eval, let policy, let reason):
            contexts[ctx]?.lastEvaluation = eval
            contexts[ctx]?.evaluation = Evaluation(id: eval, policy: policy, reason: reason)
        case .promptShown(_, let ctx, _, let prompt):
            // Hot (every prompt after a failed reading): one lookup, mutated in place.
            guard let index = contexts.index(forKey: ctx), contexts.values[index].evaluation != nil else { break }
            let uid = contexts.values[index].uid
            switch prompt.kind {
            case .biometric: contexts.values[index].evaluation!.phase = .biometric(prompt)
            case .passcode: contexts.values[index].evaluation!.phase = .passcode(prompt)
            case .biometricOrPasscode: contexts.values[index].evaluation!.phase = .combined(prompt, checking: false)
            }
            // S-31/S-8: on the same timeline as expirePrompts (the clock's high-water mark).
            contexts.values[index].evaluation!.promptedAt = clockHighWater
            users[uid, default: UserState()].promptHolder = ctx
            prompting.insert(ctx)
        case .biometricMatched(let uid, _, _):
            users[uid, default: UserState()].biometricFailures = 0
            users[uid, default: UserState()].signedIn(at: time)
        case .biometricFailed(let uid, let ctx, _):
            if let index = contexts.index(forKey: ctx), contexts.values[index].evaluation != nil {
                contexts.values[index].evaluation!.biometricFailures += 1
            }
            let threshold = rules.lockoutThreshold
            users[uid, default: UserState()].countBiometricFailure(lockoutThreshold: threshold)
            users[uid, default: UserState()].failuresSinceSignIn.count(.biometric, at: time, labels: contexts[ctx]?.labels)
        case .biometricRetry, .fallbackChosen, .biometricDisconnected:
            break
        case .passcodeRefused(let uid, let ctx, _, _):
            // S-46: refused unchecked; it counts nothing (S-5), but it was
            // an attempt the user is told of (S-64).
            users[uid, default: UserState()].failuresSinceSignIn.count(.refused, at: time, labels: ctx.flatMap { contexts[$0]?.labels })
        case .rightSaved, .rightRemoved, .rightAuthorized, .rightSecretRead, .rightKeyCreated, .rightKeyUsed, .rightDropped:
            // Rights live in the right store; their events are the audit record.
            break
        case .loginSecretStored, .loginSecretReleased, .loginSecretVoided, .loginSecretRefused, .loginSecretChoice:
            // So does the login secret (S-77): its store is a file of its own.
            break
        case .passcodeSubmitted(_, let ctx, _):
            if case .combined(let prompt, _)? = contexts[ctx]?.evaluation?.phase {
                // S-60: the sensor still scans; the prompt (and its timeout) stays.
                contexts[ctx]?.evaluation?.phase = .combined(prompt, checking: true)
            } else {
                contexts[ctx]?.evaluation?.phase = .verifyingPasscode
                prompting.remove(ctx)
            }
        case .promptHalfEnded(_, let ctx, _, let half, _, _):
            // S-60: a biometric half that ends while a passcode is checked
            // leaves the check alone; every other end is followed by the
            // prompt of the remaining half, whose fold sets the phase.
            if half == .biometric, case .combined(_, checking: true)? = contexts[ctx]?.evaluation?.phase {
                contexts[ctx]?.evaluation?.phase = .verifyingPasscode
                prompting.remove(ctx)
            }
        case .biometrySkipped, .systemSleep:
            break
        case .passcodeAccepted(let uid, let ctx, _):
            // S-54: a requester who knew the subject's passcode starts again.
            if let requester = ctx.flatMap({ contexts[$0]?.requester }) {
                requesterSucceeded(subject: uid, requester: requester)
            }
            var user = users[uid] ?? UserState()
            user.biometricFailures = 0
            user.biometryLockedOut = false
            user.passcodeFailures = 0
            user.passcodeRetryAt = nil
            user.lastPasscodeSuccess = time
            user.lastPasscodeBootID = bootID
            user.signedIn(at: time)
            users[uid] = user
        case .passcodeRejected(let uid, let ctx, _, let counted, let requester):
            // S-64: every rejected attempt is told of, the repeats too (S-7).
            users[uid, default: UserState()].failuresSinceSignIn.count(.passcode, at: time, labels: ctx.flatMap { contexts[$0]?.labels })
            guard counted else { break }
            // S-54: another user's wrong passcode counts for their pair only.
            if let requester, requester != uid {
                countRequesterFailure(subject: uid, requester: requester, at: time)
                break
            }
            var user = users[uid] ?? UserState()
            user.passcodeFailures += 1
            if let delay = rules.passcodeDelay(afterFailures: user.passcodeFailures) {
                user.passcodeRetryAt = max(time, clockHighWater) + delay
            }
            if rules.maxPasscodeFailures > 0, user.passcodeFailures >= rules.maxPasscodeFailures {
                user.adminLocked = true
            }
            users[uid] = user
        case .evaluationSucceeded(_, let ctx, _, let method):
            if method == .biometric {
                contexts[ctx]?.succeededBiometric = true
                if let uid = contexts[ctx]?.uid {
                    let token = user(uid).domainState
                    contexts[ctx]?.domainState = token
                }
            }
            if method == .passcode { contexts[ctx]?.succeededPasscode = true }
            endEvaluation(ctx)
        case .evaluationFailed(_, let ctx, _, _):
            endEvaluation(ctx)
        case .enrollmentChanged(let uid, let templates, _, let domainState, _):
            users[uid, default: UserState()].templates = templates
            // Decoded events hold at most DomainState.capacity bytes (the codec
            // refuses more); decide's come from the daemon's 32 hex digits.
            users[uid, default: UserState()].domainState = DomainState(domainState) ?? DomainState()
        case .passcodeChanged(let uid, let set, _):
            users[uid, default: UserState()].passcodeSet = set
            if set {
                // Whoever sets a passcode knows it: S-11's clock starts here.
                users[uid, default: UserState()].lastPasscodeSuccess = time
                users[uid, default: UserState()].lastPasscodeBootID = bootID
            }
            dropUserIfEmpty(uid)
        case .deviceUnlocked(let uid, _):
            users[uid, default: UserState()].lastDeviceUnlock = time
        case .userReset(let uid, _):
            var user = users[uid] ?? UserState()
            user.biometricFailures = 0
            user.biometryLockedOut = false
            user.passcodeFailures = 0
            user.passcodeRetryAt = nil
            user.adminLocked = false
            users[uid] = user
            resetRequesters(of: uid)
            dropUserIfEmpty(uid)
        case .logRepaired, .logRollbackAccepted:
            eventsWereLost(at: time)
        case .snapshotRecorded:
            // A fact about a file; the state it covers is unchanged (S-49).
            break
        case .promptsRouted(_, let ctx, let eval, let route):
            guard let index = contexts.index(forKey: ctx), contexts.values[index].evaluation?.id == eval else { break }
            contexts.values[index].evaluation!.route = route
        case .agentRegistered, .agentUnregistered, .agentRefused:
            // Agents last as long as their connections (S-65): the records are for auditors.
            break
        }
    }

    /// A repair cut events, or a log behind its journal anchor was accepted:
    /// whatever the lost events did is unknown, so each user is left as the
    /// worst of them could have left them (S-41, S-49). Biometry is locked
    /// out for every user; each user with a passcode keeps their counted
    /// failures and delay, raised to the longest step of the backoff from now
    /// (the lost part may have held failures up to it), so that a cut never
    /// shortens a delay. The admin lock is not raised (an administrator ran
    /// the repair, and `reset` lifts all of it).
    private mutating func eventsWereLost(at time: Int64) {
        let longest = rules.backoff.last
        let failuresAtLongest = rules.delayAfterFailures + max(rules.backoff.count - 1, 0)
        for uid in users.keys {
            users[uid]?.biometryLockedOut = true
            guard let user = users[uid], user.passcodeSet, let longest else { continue }
            var failures = max(user.passcodeFailures, failuresAtLongest)
            if rules.maxPasscodeFailures > 0 { failures = min(failures, max(rules.maxPasscodeFailures - 1, user.passcodeFailures)) }
            users[uid]?.passcodeFailures = failures
            users[uid]?.passcodeRetryAt = max(user.passcodeRetryAt ?? .min, max(time, clockHighWater) + longest)
        }
        // S-54: a pair's lost failures are as unknown as a user's.
        for pair in requesterAttempts.keys {
            guard var attempts = requesterAttempts[pair], let longest else { continue }
            var failures = max(attempts.passcodeFailures, failuresAtLongest)
            if rules.maxPasscodeFailures > 0 { failures = min(failures, max(rules.maxPasscodeFailures - 1, attempts.passcodeFailures)) }
            attempts.passcodeFailures = failures
            attempts.retryAt = max(attempts.retryAt ?? .min, max(time, clockHighWater) + longest)
            requesterAttempts[pair] = attempts
        }
    }

    private mutating func applyProperty(_ property: ContextProperty, to ctx: ContextID) {
        switch property {
        case .fallbackTitle(let title): contexts[ctx]?.fallbackTitle = title
        case .cancelTitle(let title): contexts[ctx]?.cancelTitle = title
        case .reuseDuration(let seconds): contexts[ctx]?.reuseDuration = min(seconds, AuthLimits.maximumReuseDuration)
        case .interactionNotAllowed(let flag): contexts[ctx]?.interactionNotAllowed = flag
        case .localizedReason(let reason): contexts[ctx]?.localizedReason = reason
        case .prompt(let destination): contexts[ctx]?.prompt = destination
        }
    }

    /// Clears the running evaluation of `ctx` and its hold on the prompt.
    private mutating func endEvaluation(_ ctx: ContextID) {
        guard let context = contexts[ctx], context.evaluation != nil else { return }
        contexts[ctx]?.evaluation = nil
        prompting.remove(ctx)
        if users[context.uid]?.promptHolder == ctx {
            users[context.uid]?.promptHolder = nil
        }
    }

    /// Users with nothing left to say are dropped, so that state is a
    /// function of the events alone whatever order contexts came and went in.
    private mutating func dropUserIfEmpty(_ uid: UserID) {
        if users[uid]?.isEmpty == true { users[uid] = nil }
    }
}
