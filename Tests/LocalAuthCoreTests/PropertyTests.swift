// Property tests: seeded random command sequences over several users and
// contexts; after every step the invariants of SEMANTICS hold.
//
// Reproduce a failure with its seed: every message names the seed and step,
// and the last commands are printed.

import XCTest
@testable import LocalAuthCore
import LocalAuthTestSupport

/// Secrets live only in the generator's bookkeeping: the core never sees one.
let secretPool = ["hunter2", "swordfish", "letmein!", "correct horse", "p@ss-1234"]

/// Drives random commands through decide + apply, like the daemon would.
struct RandomWorld {
    var rng: SeededGenerator
    var state = AuthState()
    var log: [Event] = []
    var now: Int64 = t0
    var nextContext: UInt64 = 1
    var known: [ContextID] = []
    let uids: [UserID] = [1000, 1001, 1002, 1003]
    /// Bookkeeping of the test only: each user's passcode and last wrong attempt.
    var secret: [UserID: String] = [:]
    var lastWrong: [UserID: String] = [:]
    /// Passcodes submitted and being "checked by a worker".
    var pending: [(uid: UserID, ctx: ContextID, eval: EvaluationID, attempt: String)] = []
    var boot = 1

    static let ruleVariants: [Rules] = [
        .default,
        Rules.default.with { $0.biometryType = .faceID },
        Rules.default.with { $0.biometryType = .opticID; $0.lockoutThreshold = 3 },
        Rules.default.with { $0.maxPasscodeFailures = 9 },
        Rules.default.with { $0.passcodeRequiredAfter = sec(600) },
        Rules.default.with { $0.passcodeRequiredAfterBoot = true },
        Rules.default.with { $0.promptTimeout = sec(30); $0.backoff = [sec(5), sec(20)] },
        Rules.default.with { $0.biometryType = .none },
    ]

    init(seed: UInt64) {
        rng = SeededGenerator(seed: seed)
    }

    /// The next command, with the time it runs at. May update bookkeeping
    /// that depends only on the choice (not on the outcome).
    mutating func nextCommand() -> Command {
        // Time: mostly forward, sometimes a jump, sometimes back.
        switch rng.below(100) {
        case 0..<55: now += Int64(rng.below(3)) * Timestamp.second + Int64(rng.below(1000))
        case 55..<85: now += sec(Int64(rng.below(40)))
        case 85..<93: now += sec(Int64(rng.below(700)))
        case 93..<96: now += sec(Int64(1000 + rng.below(4000)))
        default: now -= sec(Int64(rng.below(7200)))  // the clock is set back
        }

        if !pending.isEmpty, rng.chance(60) { return deliverVerdict() }

        let uid = rng.pick(uids)
        switch rng.below(1000) {
        case 0..<70:
            let c = ContextID(high: UInt64(0xC0_FFEE), low: nextContext)
            nextContext += 1
            known.append(c)
            // S-44: some are an app's under a login-password backend.
            let origin = rng.chance(30) ? ContextOrigin(passcodePrompts: false) : .own
            return .createContext(ctx: c, uid: uid, pid: ProcessID(rng.below(5000)), origin: origin)
        case 70..<110:
            let property: ContextProperty = rng.pick([
                .fallbackTitle(""), .fallbackTitle("PIN"), .cancelTitle(""), .cancelTitle("Stop"),
                .reuseDuration(0), .reuseDuration(Int64(rng.below(400))), .interactionNotAllowed(rng.chance(20)),
                .localizedReason("why"), .prompt(.agent), .prompt(.client),
            ])
            return .setProperty(ctx: someContext(), property: property)
        case 110..<140:
            return .invalidate(ctx: someContext(), reason: rng.chance(50) ? .app : .disconnect)
        case 140..<200:
            return .canEvaluate(ctx: someContext(), policy: somePolicy())
        case 200..<360:
            // S-60: touch or type half of the time; S-61..S-63 sometimes.
            var options = EvaluationOptions(combined: rng.chance(50))
            if rng.chance(8) { options.biometryBlocked = BiometryBlock(rng.pick(BiometrySkip.allCases), detail: "far.example") }
            // S-66: a quarter go to a session's agent (which may carry passcode prompts, S-68).
            if rng.chance(25) { options.route = someRoute() }
            return .evaluate(ctx: someContext(), policy: somePolicy(), reason: rng.chance(3) ? "" : "reason", options: options)
        case 360..<560:
            let reading: SensorReading = rng.pick([.match, .noMatch, .noMatch, .noMatch, .retry(message: "Too fast."),
                                                   .disconnect])
            return .sensor(uid: promptedUid() ?? uid, reading: reading)
        case 560..<620:
            return .fallback(ctx: promptedContext() ?? someContext())
        case 620..<720:
            return .submitPasscode(ctx: promptedContext() ?? someContext())
        case 720..<750:
            // set-passcode's old secret, checked only when entry is allowed
            // (else the daemon asks first, S-46, and is refused).
            guard state.passcodeEntryRefusal(uid, now: now) == nil, secret[uid] != nil else {
                return .admitPasscodeAttempt(uid: uid, ctx: nil, eval: nil)
            }
            let attempt = attemptFor(uid)
            let (correct, repeated) = judge(uid, attempt)
            return .passcodeChecked(uid: uid, ctx: nil, eval: nil, correct: correct, repeated: repeated)
        case 750..<790:
            return .cancel(ctx: someContext())
        case 790..<842:
            return .expirePrompts
        case 842..<846:
            // Session agents (S-65, S-68): registrations, refusals, and an
            // agent leaving, which ends what it prompts for.
            let route = someRoute()
            switch rng.below(3) {
            case 0: return .registerAgent(uid: uid, session: route.session, pid: route.agentPID)
            case 1:
                let refusal = AgentRefusal(uid: uid, pid: route.agentPID, request: rng.pick(AgentRefusal.Request.allCases),
                                           reason: rng.pick(AgentRefusal.Reason.allCases),
                                           session: rng.chance(50) ? route.session : nil)
                return .refuseAgent(refusal)
            default:
                return .unregisterAgent(uid: uid, session: route.session, pid: route.agentPID,
                                        reason: rng.pick(AgentUnregistration.allCases),
                                        routed: rng.chance(80) ? state.contexts.keys.sorted() : [someContext()])
            }
        case 846..<850:
            // LARight's facts: recorded on the user's open context or refused; no state changes.
            let identifier = rng.pick(["a", "com.example.b"])
            let requirement = rng.pick(RightRequirement.allCases)
            let service = rng.pick(["login", "gdm-password"])
            switch rng.below(11) {
            // The login secret's facts (S-74..S-77): the record, no state changes.
            case 6: return .recordLoginSecret(.stored(uid: uid, ctx: someContext(), eval: 1, service: service))
            case 7: return .recordLoginSecret(.released(uid: uid, ctx: someContext(), eval: 1, service: service))
            case 8: return .recordLoginSecret(.voided(uid: uid, reason: rng.pick(LoginSecretVoiding.allCases)))
            case 9: return .recordLoginSecret(.refused(LoginSecretRefusal(uid: uid, caller: rng.chance(50) ? 0 : uid,
                ctx: rng.chance(50) ? someContext() : nil, eval: nil, service: rng.chance(50) ? service : nil,
                reason: rng.pick(LoginSecretRefusal.Reason.allCases))))
            case 10: return .recordLoginSecret(.choice(uid: uid, enabled: rng.chance(50), by: rng.chance(50) ? 0 : uid))
            case 0: return .recordRight(.saved(uid: uid, identifier: identifier, requirement: requirement))
            // S-59: half the removals are drops of an account's rights (no
            // draw of its own, so the rest of the sequence stays the same).
            case 1 where uid % 2 == 1:
                let reason = RightDropReason.allCases[Int(uid / 2) % RightDropReason.allCases.count]
                return .recordRight(.dropped(uid: uid, identifier: identifier, requirement: requirement,
                                             name: reason == .accountRemoved ? nil : "olduser", reason: reason))
            case 1: return .recordRight(.removed(uid: uid, identifier: identifier, requirement: requirement))
            case 2: return .recordRight(.authorized(uid: uid, ctx: someContext(), identifier: identifier, method: .biometric))
            case 3: return .recordRight(.keyCreated(uid: uid, identifier: identifier, publicKeySHA256: String(repeating: "5a", count: 32)))
            case 4: return .recordRight(.keyUsed(uid: uid, ctx: someContext(), identifier: identifier,
                                                 algorithm: rng.pick(KeyAlgorithm.all)))
            default: return .recordRight(.secretRead(uid: uid, ctx: someContext(), identifier: identifier))
            }
        case 850..<880:
            return .enroll(uid: uid, template: rng.pick(["t1", "t2", "t3"]), by: 0,
                           domainState: "ds\(rng.next() % 1_000_000)")
        case 880..<895:
            return .unenroll(uid: uid, template: rng.chance(50) ? nil : rng.pick(["t1", "t2", "t3"]), by: 0,
                             domainState: "ds\(rng.next() % 1_000_000)")
        case 895..<925:
            let set = rng.chance(85)
            if set { secret[uid] = rng.pick(secretPool) } else { secret[uid] = nil }
            lastWrong[uid] = nil
            return .changePasscode(uid: uid, set: set, by: rng.chance(50) ? 0 : uid)
        case 925..<945:
            return .reportUnlock(uid: uid, by: 0)
        case 945..<965:
            return .reset(uid: uid, by: 0)
        case 965..<968:
            return .repairLog(firstLostSeq: UInt64(log.count), by: 0)
        case 968..<969:
            return .acceptLogRollback(journalSeq: UInt64(log.count) + 5, logSeq: UInt64(log.count), by: 0)
        case 969..<970:
            return .recordSnapshot(seq: UInt64(log.count), sha256: String(repeating: "5a", count: 32))
        case 970..<973:
            // S-63: logind's PrepareForSleep, both ways.
            return .systemSleep(suspending: rng.chance(60), endScans: rng.chance(90))
        case 973..<980:
            return .applyRules(rng.pick(RandomWorld.ruleVariants))
        case 980..<990:
            pending.removeAll()  // the workers die with the daemon
            return .stop
        default:
            if rng.chance(50) { boot += 1 }
            return .start(version: "t", bootID: "boot-\(boot)", pid: 1, rules: rng.pick(RandomWorld.ruleVariants))
        }
    }

    /// A context: mostly one that exists, sometimes one that never did.
    mutating func someContext() -> ContextID {
        if rng.chance(4) || known.isEmpty { return ContextID(high: 0xDEAD, low: rng.next()) }
        if rng.chance(70) {
            let live = state.contexts.keys.sorted()
            if !live.isEmpty { return rng.pick(live) }
        }
        return rng.pick(known)
    }

    /// One of two sessions' agents, with or without passcode prompts (S-68).
    mutating func someRoute() -> AgentRoute {
        let session = rng.pick(["2", "c7"])
        return AgentRoute(session: session, agentPID: session == "2" ? 700 : 800, passcodePrompts: rng.chance(70))
    }

    mutating func somePolicy() -> Policy {
        rng.pick([.biometrics, .biometrics, .owner, .owner, .owner, .companion, .biometricsOrCompanion, .wrist])
    }

    mutating func promptedContext() -> ContextID? {
        let prompted = state.prompting.sorted()
        return prompted.isEmpty || rng.chance(10) ? nil : rng.pick(prompted)
    }

    mutating func promptedUid() -> UserID? {
        let holders = state.users.compactMap { $0.value.promptHolder == nil ? nil : $0.key }.sorted()
        return holders.isEmpty || rng.chance(10) ? nil : rng.pick(holders)
    }

    /// An attempt: the right passcode half of the time, else a wrong one
    /// (often the same wrong one again).
    mutating func attemptFor(_ uid: UserID) -> String {
        if let right = secret[uid], rng.chance(35) { return right }
        if let wrong = lastWrong[uid], rng.chance(40) { return wrong }
        return rng.pick(secretPool.filter { $0 != secret[uid] })
    }

    /// The worker's verdict and the daemon's in-memory S-7 memory.
    mutating func judge(_ uid: UserID, _ attempt: String) -> (correct: Bool, repeated: Bool) {
        if attempt == secret[uid] {
            lastWrong[uid] = nil
            return (true, false)
        }
        let repeated = lastWrong[uid] == attempt
        lastWrong[uid] = attempt
        return (false, repeated)
    }

    mutating func deliverVerdict() -> Command {
        let index = rng.below(pending.count)
        let item = pending.remove(at: index)
        let (correct, repeated) = judge(item.uid, item.attempt)
        return .passcodeChecked(uid: item.uid, ctx: item.ctx, eval: item.eval, correct: correct, repeated: repeated)
    }

    /// Runs one command; returns it, its outcome and the state before.
    @discardableResult
    mutating func step() -> (command: Command, before: AuthState, result: Result<[Event], Rejection>) {
        let command = nextCommand()
        let before = state
        let result = decide(command, state, now: now)
        if case .success(let events) = result {
            for event in events {
                state.apply(event)
                log.append(event)
                if case .passcodeSubmitted(let uid, let c, let eval) = event.body {
                    pending.append((uid, c, eval, attemptFor(uid)))
                }
            }
        }
        return (command, before, result)
    }
}

final class PropertyTests: XCTestCase {
    static let seeds: [UInt64] = [1, 2, 3, 42, 0xC0FFEE, 0xDEAD_BEEF, 20_261_129, 7]
    static let steps = 4000
    static let fullRefoldEvery = 500

    /// Invariants (a) .. (g) and S-8, S-33, S-34, after every step.
    func test_Property_invariantsHoldOverRandomCommandSequences() {
        var totalEvents = 0
        var kindsSeen = Set<EventKind>()
        var failureCodesSeen = Set<LAErrorCode>()
        for seed in Self.seeds {
            var world = RandomWorld(seed: seed)
            let checker = InvariantChecker(seed: seed)
            world.step()  // commands before the first start are fine too
            for _ in 0..<Self.steps {
                let (command, before, result) = world.step()
                checker.check(command: command, before: before, result: result, world: world)
                if checker.failures.count > 5 { break }
            }
            // (d) at the end, `stop` ends everything.
            let before = world.state
            let result = decide(.stop, world.state, now: world.now)
            if case .success(let events) = result {
                for event in events { world.state.apply(event); world.log.append(event) }
            }
            checker.check(command: .stop, before: before, result: result, world: world)
            checker.expect(checker.open.isEmpty, "stop leaves evaluations open: \(checker.open)")
            checker.expect(world.state.contexts.isEmpty, "stop leaves contexts")
            checker.expect(world.log.reduce(AuthState(), AuthState.evolve) == world.state, "final re-fold differs (S-38)")

            for failure in checker.failures { XCTFail(failure) }
            totalEvents += world.log.count
            kindsSeen.formUnion(world.log.map(\.body.kind))
            for event in world.log {
                if case .evaluationFailed(_, _, _, let failure) = event.body { failureCodesSeen.insert(failure.code) }
            }
        }
        // The generator reaches every event kind and most outcomes.
        // Kind 33 is the daemon's recorder's (repeats counted into one record), never a decision's.
        let decided = Set(EventKind.allCases).subtracting([.policyCheckedRepeatedly])
        XCTAssertEqual(kindsSeen, decided, "kinds never generated: \(decided.subtracting(kindsSeen))")
        let expectedCodes: Set<LAErrorCode> = [.authenticationFailed, .userCancel, .userFallback, .systemCancel,
                                               .passcodeNotSet, .biometryNotAvailable, .biometryNotEnrolled,
                                               .biometryLockout, .appCancel, .invalidContext, .companionNotAvailable,
                                               .biometryDisconnected, .notInteractive]
        XCTAssertTrue(expectedCodes.isSubset(of: failureCodesSeen),
                      "codes never reached: \(expectedCodes.subtracting(failureCodesSeen))")
        XCTAssertGreaterThan(totalEvents, Self.seeds.count * Self.steps / 2)
    }

    /// The checker itself catches what it is meant to catch (so that a
    /// green property test means something).
    func test_Property_checkerCatchesViolations() {
        var world = RandomWorld(seed: 99)
        world.state = AuthState()
        let s = Scenario()
        s.readyUser(alice)
        s.newContext(ctx(1), uid: alice)
        s.evaluate(ctx(1), .biometrics)
        world.state = s.state
        world.log = s.log
        world.now = s.now
        func violations(_ bodies: [EventBody], _ command: Command = .expirePrompts) -> [String] {
            let checker = InvariantChecker(seed: 0)
            checker.open = [InvariantChecker.EvalKey(ctx: ctx(1), eval: 1)]
            checker.maxTime = world.now
            var after = world
            let events = bodies.map { Event(time: world.now, $0) }
            for event in events { after.state.apply(event); after.log.append(event) }
            checker.check(command: command, before: world.state, result: .success(events), world: after)
            return checker.failures
        }
        XCTAssertEqual(violations([failed(alice, ctx(1), 1, .userCancel)]), [])
        XCTAssertFalse(violations([failed(alice, ctx(1), 2, .userCancel)]).isEmpty, "end of an evaluation never started")
        XCTAssertFalse(violations([.biometricMatched(uid: alice, ctx: ctx(1), eval: 1)]).isEmpty, "S-34: not from the sensor")
        XCTAssertFalse(violations([.contextPropertySet(uid: alice, ctx: ctx(1), property: .localizedReason("hunter2"))]).isEmpty,
                       "S-39: a secret in an event")
        XCTAssertFalse(violations([.contextCreated(uid: alice, ctx: ctx(2), pid: 1),
                                   started(alice, ctx(2), 1, .owner),
                                   prompted(alice, ctx(2), 1, passcodePrompt(left: 6))]).isEmpty,
                       "S-30: two prompts for one user")
    }

    /// S-11 / S-18 step 3 / S-3: a biometric success only while biometry is
    /// usable for that user at that moment (stronger than invariant (c),
    /// which only looks at the lockout flags).
    func test_Property_S11_S18_biometricSuccessOnlyWhileBiometryIsUsable() {
        var violations: [String] = []
        for seed in Self.seeds {
            var world = RandomWorld(seed: seed)
            for index in 0..<Self.steps {
                let (command, before, result) = world.step()
                guard case .sensor(let uid, .match) = command, case .success(let events) = result,
                      events.contains(where: { if case .biometricMatched = $0.body { return true } else { return false } })
                else { continue }
                if let problem = before.biometryUnusable(uid, now: world.now) {
                    violations.append("seed \(seed) step \(index): uid \(uid) matched while \(problem.code.wireName)"
                                      + (problem.reason.map { " (\($0))" } ?? ""))
                }
            }
        }
        XCTAssertEqual(violations.count, 0, violations.prefix(5).joined(separator: "\n"))
    }
}

/// The invariants, checked step by step.
final class InvariantChecker {
    /// S-60: evaluations that asked for the combined prompt.
    var combined: Set<EvalKey> = []
    let seed: UInt64
    var step = 0
    var failures: [String] = []
    /// (d) evaluations started and not yet ended.
    var open: Set<EvalKey> = []
    var ended: Set<EvalKey> = []
    var maxTime: Int64 = 0
    var history: [String] = []

    struct EvalKey: Hashable, CustomStringConvertible {
        var ctx: ContextID
        var eval: EvaluationID
        var description: String { "\(ctx.hex.suffix(4))#\(eval)" }
    }

    init(seed: UInt64) { self.seed = seed }

    func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
        guard !condition else { return }
        failures.append("seed \(seed) step \(step): \(message())\n  last commands:\n    "
                        + history.suffix(8).joined(separator: "\n    "))
    }

    func check(command: Command, before: AuthState, result: Result<[Event], Rejection>, world: RandomWorld) {
        step += 1
        let after = world.state
        let now = world.now
        history.append("\(command) @\(now - t0)")
        guard case .success(let events) = result else {
            expect(before == after, "a rejection changed the state")
            return
        }
        history[history.count - 1] += " -> \(events.map(\.body.name))"
        let bodies = events.map(\.body)

        // S-8: every event carries the decision's time; the high-water mark.
        expect(events.allSatisfy { $0.time == now }, "event time differs from now")
        for event in events { maxTime = max(maxTime, event.time) }
        expect(after.clockHighWater == max(maxTime, 0), "clockHighWater \(after.clockHighWater) != newest event \(maxTime)")
        expect(after.eventCount == UInt64(world.log.count), "eventCount != log length")

        // (a) S-38: the functional fold of this step's events equals the live state.
        expect(events.reduce(before, AuthState.evolve) == after, "evolve(before, events) != live state")
        if step % PropertyTests.fullRefoldEvery == 0 {
            expect(world.log.reduce(AuthState(), AuthState.evolve) == after, "re-fold of the log != live state (S-38)")
        }

        let uids = Set(before.users.keys).union(after.users.keys).union(world.uids)
        for uid in uids {
            let old = before.user(uid), new = after.user(uid)
            let matched = bodies.contains {
                if case .biometricMatched(uid, _, _) = $0 { return true } else { return false }
            }
            let accepted = bodies.contains { if case .passcodeAccepted(uid, _, _) = $0 { return true } else { return false } }
            let reset = bodies.contains {
                if case .userReset(uid, _) = $0 { return true } else { return false }
            }
            // (b) counts only drop on a match, a passcode success or a reset.
            if new.biometricFailures < old.biometricFailures {
                expect(matched || accepted || reset, "uid \(uid) biometric failures dropped \(old.biometricFailures) -> \(new.biometricFailures)")
            }
            if new.passcodeFailures < old.passcodeFailures {
                expect(accepted || reset, "uid \(uid) passcode failures dropped \(old.passcodeFailures) -> \(new.passcodeFailures)")
            }
            // (c) a locked-out user never gets a biometric success.
            if old.biometryLockedOut || old.adminLocked {
                let biometricSuccess = bodies.contains {
                    switch $0 {
                    case .biometricMatched(uid, _, _): return true
                    case .evaluationSucceeded(uid, _, _, .biometric): return true
                    default: return false
                    }
                }
                expect(!biometricSuccess, "locked-out uid \(uid) got a biometric success")
            }
            // (f) S-30: at most one evaluation of a user at a prompt.
            let atPrompt = after.contexts.filter { $0.value.uid == uid && $0.value.evaluation?.isAtPrompt == true }
            expect(atPrompt.count <= 1, "uid \(uid) has \(atPrompt.count) evaluations at a prompt")
            if let only = atPrompt.first { expect(new.promptHolder == only.key, "uid \(uid) prompt holder is stale") }
            // (g) S-8: a delay is never shortened, also when the clock moves back.
            if let oldRetry = old.passcodeRetryAt, !(accepted || reset) {
                expect((new.passcodeRetryAt ?? .min) >= oldRetry, "uid \(uid) passcodeRetryAt moved earlier")
            }
            if let retryAt = new.passcodeRetryAt {
                let expected = max(0, (retryAt - max(now, maxTime) + Timestamp.second - 1) / Timestamp.second)
                expect(after.passcodeRetryAfter(uid, now: now) == expected,
                       "uid \(uid) retry-after \(after.passcodeRetryAfter(uid, now: now)) != \(expected)")
                // Only when the clock is behind the newest event (set back): a
                // step with no event may read a clock ahead of it.
                if now <= maxTime {
                    expect(after.passcodeRetryAfter(uid, now: now) == after.passcodeRetryAfter(uid, now: maxTime),
                           "uid \(uid) retry-after depends on a clock set back")
                }
            }
        }

        // S-34: biometric results only from the sensor.
        let biometricResult = bodies.contains {
            switch $0 {
            case .biometricMatched, .biometricFailed, .biometricRetry, .biometricDisconnected: return true
            default: return false
            }
        }
        if biometricResult {
            if case .sensor = command {} else { expect(false, "a biometric result from \(command)") }
        }

        // (d) S-33: one end per evaluation, nothing of it after its end.
        for body in bodies {
            switch body {
            case .evaluationStarted(_, let c, let eval, _, _):
                let key = EvalKey(ctx: c, eval: eval)
                expect(!open.contains(key) && !ended.contains(key), "\(key) started twice")
                open.insert(key)
            case .evaluationSucceeded(_, let c, let eval, _), .evaluationFailed(_, let c, let eval, _):
                let key = EvalKey(ctx: c, eval: eval)
                expect(open.contains(key), "\(key) ended but was not running (ended before: \(ended.contains(key)))")
                open.remove(key)
                ended.insert(key)
            case .promptShown(_, let c, let eval, _), .biometricMatched(_, let c, let eval),
                 .biometricFailed(_, let c, let eval), .biometricRetry(_, let c, let eval, _),
                 .fallbackChosen(_, let c, let eval), .biometricDisconnected(_, let c, let eval),
                 .passcodeSubmitted(_, let c, let eval):
                let key = EvalKey(ctx: c, eval: eval)
                expect(open.contains(key), "\(body.name) for \(key), which is not running")
            case .promptsRouted(_, let c, let eval, _):
                // S-66: once per evaluation, before its first prompt.
                let key = EvalKey(ctx: c, eval: eval)
                expect(open.contains(key), "prompts-routed for \(key), which is not running")
                expect(before.contexts[c]?.evaluation?.route == nil, "\(key) routed twice")
                expect(before.contexts[c]?.evaluation?.isAtPrompt != true, "\(key) routed after a prompt")
            default:
                break
            }
        }
        // S-44, S-68: a passcode prompt reaches an app's context only through its agent.
        for body in bodies {
            if case .promptShown(_, let c, _, let prompt) = body, prompt.kind == .passcode,
               let context = after.contexts[c], !context.passcodePrompts {
                expect(context.evaluation?.route?.passcodePrompts == true, "a passcode prompt for \(c) without a trusted path")
            }
        }
        let running = Set(after.contexts.compactMap { c, context in
            context.evaluation.map { EvalKey(ctx: c, eval: $0.id) }
        })
        expect(running == open, "running evaluations \(running) != started-not-ended \(open)")
        // A failure with retry-after tells the truth about the state.
        for body in bodies {
            if case .evaluationFailed(let uid, _, _, let failure) = body, let seconds = failure.retryAfter {
                expect(after.passcodeRetryAfter(uid, now: now) == seconds,
                       "retry-after \(seconds) but state says \(after.passcodeRetryAfter(uid, now: now))")
            }
        }

        // S-60: only an evaluation that asked sees a combined prompt or a
        // passcode half's end (a v1 client never does; a routed evaluation
        // asks by being routed, S-66), and the sensor
        // scans exactly while a biometric or combined prompt waits.
        if case .evaluate(let c, _, _, let options) = command,
           case .evaluationStarted(_, c, let eval, _, _)? = bodies.first, options.combined || options.route != nil {
            combined.insert(EvalKey(ctx: c, eval: eval))
        }
        for body in bodies {
            switch body {
            case .promptShown(_, let c, let eval, let prompt) where prompt.kind == .biometricOrPasscode || prompt.retryAfter > 0:
                expect(combined.contains(EvalKey(ctx: c, eval: eval)), "\(prompt.kind.rawValue) prompt for \(c)#\(eval), which did not ask")
            case .promptHalfEnded(_, let c, let eval, _, _, _):
                expect(combined.contains(EvalKey(ctx: c, eval: eval)), "a half ended for \(c)#\(eval), which did not ask")
            default:
                break
            }
        }
        for (c, context) in after.contexts {
            guard let evaluation = context.evaluation else { continue }
            if case .combined(_, let checking) = evaluation.phase {
                expect(after.prompting.contains(c), "\(c) at a combined prompt but not prompting (S-31)")
                if checking {
                    expect(before.contexts[c]?.evaluation?.phase != nil, "\(c) checks a passcode it never took")
                }
            }
        }

        // (e) S-39: no event carries a secret.
        for event in events {
            let text = String(describing: event)
            for secret in secretPool { expect(!text.contains(secret), "an event carries a secret: \(text)") }
        }
    }
}
