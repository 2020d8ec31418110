// One event of every kind, and what FORMAT.md's tables must decode from its
// payload: field names as the page spells them, values as its encodings
// yield them. Values differ from field to field (and optionals are present
// in some kinds and absent in others), so a swapped order or a wrong width
// cannot decode to the same list.

import LocalAuthCore

enum FormatDocumentSamples {
    static let uid: UserID = 1001
    static let ctx = ContextID(high: 0x0123_4567_89ab_cdef, low: 0xfedc_ba98_7654_3210)
    static let eval: EvaluationID = 7
    static let admin: UserID = 77

    private static func u<T: BinaryInteger>(_ value: T) -> DocumentedValue { .unsigned(UInt64(value)) }
    private static func s<T: BinaryInteger>(_ value: T) -> DocumentedValue { .signed(Int64(value)) }
    private static func t(_ value: String) -> DocumentedValue { .text(value) }
    private static let c = DocumentedValue.context("0123456789abcdeffedcba9876543210")
    private static let who = [NamedValue("uid", u(uid)), NamedValue("ctx", c)]
    private static let inEvaluation = who + [NamedValue("eval", u(eval))]

    /// Exhaustive over EventKind: a new kind does not compile without its sample.
    static func sample(_ kind: EventKind) -> (body: EventBody, fields: [NamedValue]) {
        switch kind {
        case .daemonStarted:
            return (.daemonStarted(version: "1.2.3", bootID: "b00t", pid: 4242),
                    [NamedValue("version", t("1.2.3")), NamedValue("boot_id", t("b00t")), NamedValue("pid", s(4242))])
        case .daemonStopped:
            return (.daemonStopped, [])
        case .contextCreated:
            let origin = ContextOrigin(caller: 0, service: "sudo", tty: "/dev/pts/2", rhost: nil, passcodePrompts: false,
                                       transport: .dbus, busName: ":1.42", app: "org.example.Notes", requester: 1001)
            return (.contextCreated(uid: uid, ctx: ctx, pid: 4242, origin: origin),
                    who + [NamedValue("pid", s(4242)), NamedValue("caller", u(0)), NamedValue("service", t("sudo")),
                           NamedValue("tty", t("/dev/pts/2")), NamedValue("rhost", .absent), NamedValue("passcode_prompts", .bool(false)),
                           NamedValue("transport", u(1)), NamedValue("bus_name", t(":1.42")), NamedValue("app", t("org.example.Notes")),
                           NamedValue("requester", u(1001))])
        case .contextPropertySet:
            return (.contextPropertySet(uid: uid, ctx: ctx, property: .fallbackTitle("Use PIN")),
                    who + [NamedValue("name", t("fallback-title")), NamedValue("value", t("Use PIN"))])
        case .contextInvalidated:
            return (.contextInvalidated(uid: uid, ctx: ctx, reason: .disconnect), who + [NamedValue("reason", t("disconnect"))])
        case .policyChecked:
            return (.policyChecked(uid: uid, ctx: ctx, policy: .owner, biometry: .touchID, result: .biometryLockout, reason: "locked"),
                    who + [NamedValue("policy", s(2)), NamedValue("biometry", s(1)), NamedValue("result", s(-8)),
                           NamedValue("reason", t("locked"))])
        case .policyCheckedRepeatedly:
            let checks = RepeatedChecks(uid: uid, ctx: ctx, policy: .biometrics, biometry: .faceID, result: nil, reason: nil,
                                        count: 300, span: 1_500)
            return (.policyCheckedRepeatedly(checks),
                    who + [NamedValue("policy", s(1)), NamedValue("biometry", s(2)), NamedValue("result", .absent),
                           NamedValue("reason", .absent), NamedValue("count", u(300)), NamedValue("span", u(1_500))])
        case .evaluationStarted:
            return (.evaluationStarted(uid: uid, ctx: ctx, eval: eval, policy: .biometrics, reason: "unlock your notes"),
                    inEvaluation + [NamedValue("policy", s(1)), NamedValue("reason", t("unlock your notes"))])
        case .promptShown:
            let prompt = Prompt(kind: .biometric, attempt: 2, fallbackOffered: true, attemptsLeft: 3, message: "Try again.",
                                retryAfter: 59)
            return (.promptShown(uid: uid, ctx: ctx, eval: eval, prompt: prompt),
                    inEvaluation + [NamedValue("kind", t("biometric")), NamedValue("attempt", s(2)), NamedValue("fallback", .bool(true)),
                                    NamedValue("attempts_left", s(3)), NamedValue("message", t("Try again.")),
                                    NamedValue("retry_after", s(59))])
        case .biometricMatched:
            return (.biometricMatched(uid: uid, ctx: ctx, eval: eval), inEvaluation)
        case .biometricFailed:
            return (.biometricFailed(uid: uid, ctx: ctx, eval: eval), inEvaluation)
        case .biometricRetry:
            return (.biometricRetry(uid: uid, ctx: ctx, eval: eval, message: "Swipe too short."),
                    inEvaluation + [NamedValue("message", t("Swipe too short."))])
        case .fallbackChosen:
            return (.fallbackChosen(uid: uid, ctx: ctx, eval: eval), inEvaluation)
        case .passcodeAccepted:
            return (.passcodeAccepted(uid: uid, ctx: ctx, eval: nil), who + [NamedValue("eval", .absent)])
        case .passcodeRejected:
            return (.passcodeRejected(uid: uid, ctx: ctx, eval: eval, counted: false, requester: 1001),
                    inEvaluation + [NamedValue("counted", .bool(false)), NamedValue("requester", u(1001))])
        case .evaluationSucceeded:
            return (.evaluationSucceeded(uid: uid, ctx: ctx, eval: eval, method: .passcode), inEvaluation + [NamedValue("method", t("passcode"))])
        case .evaluationFailed:
            let failure = Failure(.authenticationFailed, message: "Passcode entry is disabled.", reason: "admin-locked", retryAfter: 60,
                                  adminLocked: true)
            return (.evaluationFailed(uid: uid, ctx: ctx, eval: eval, failure: failure),
                    inEvaluation + [NamedValue("code", s(-1)), NamedValue("message", t("Passcode entry is disabled.")),
                                    NamedValue("reason", t("admin-locked")), NamedValue("retry_after", s(60)),
                                    NamedValue("admin_locked", .bool(true))])
        case .enrollmentChanged:
            let state = "00112233445566778899aabbccddeeff"
            return (.enrollmentChanged(uid: uid, templates: ["right-index-finger", "left-thumb"], by: admin, domainState: state,
                                       source: .fprintd),
                    [NamedValue("uid", u(uid)), NamedValue("templates", .list([t("right-index-finger"), t("left-thumb")])),
                     NamedValue("by", u(admin)), NamedValue("domain_state", t(state)), NamedValue("source", u(1))])
        case .passcodeChanged:
            return (.passcodeChanged(uid: uid, set: true, by: admin),
                    [NamedValue("uid", u(uid)), NamedValue("set", .bool(true)), NamedValue("by", u(admin))])
        case .deviceUnlocked:
            return (.deviceUnlocked(uid: uid, by: admin), [NamedValue("uid", u(uid)), NamedValue("by", u(admin))])
        case .userReset:
            return (.userReset(uid: uid, by: 0), [NamedValue("uid", u(uid)), NamedValue("by", u(0))])
        case .logRepaired:
            return (.logRepaired(firstLostSeq: 123_456_789_012, by: admin),
                    [NamedValue("first_lost_seq", u(123_456_789_012)), NamedValue("by", u(admin))])
        case .rulesApplied:
            let rules = Rules(biometryType: .faceID, attemptsPerEvaluationOverride: 3, lockoutThreshold: 5, promptTimeout: 60_000_000,
                              passcodeRequiredAfter: 172_800_000_000, passcodeRequiredAfterBoot: true, delayAfterFailures: 4,
                              backoff: [60_000_000, 300_000_000], maxPasscodeFailures: 10)
            return (.rulesApplied(rules), [NamedValue("rules", .group([
                NamedValue("biometry", s(2)), NamedValue("attempts_per_evaluation", s(3)), NamedValue("lockout_threshold", s(5)),
                NamedValue("prompt_timeout", s(60_000_000)), NamedValue("passcode_required_after", s(172_800_000_000)),
                NamedValue("passcode_required_after_boot", .bool(true)), NamedValue("delay_after_failures", s(4)),
                NamedValue("backoff", .list([s(60_000_000), s(300_000_000)])), NamedValue("max_passcode_failures", s(10)),
            ]))])
        case .biometricDisconnected:
            return (.biometricDisconnected(uid: uid, ctx: ctx, eval: eval), inEvaluation)
        case .passcodeSubmitted:
            return (.passcodeSubmitted(uid: uid, ctx: ctx, eval: eval), inEvaluation)
        case .contextReleased:
            return (.contextReleased(uid: uid, ctx: ctx), who)
        case .passcodeRefused:
            return (.passcodeRefused(uid: uid, ctx: nil, eval: nil, retryAfter: 299),
                    [NamedValue("uid", u(uid)), NamedValue("ctx", .absent), NamedValue("eval", .absent), NamedValue("retry_after", s(299))])
        case .snapshotRecorded:
            let digest = String(repeating: "0123456789abcdef", count: 4)
            return (.snapshotRecorded(snapshotSeq: 40_000, sha256: digest),
                    [NamedValue("snapshot_seq", u(40_000)), NamedValue("sha256", t(digest))])
        case .logRollbackAccepted:
            return (.logRollbackAccepted(journalSeq: 900, logSeq: 850, by: 0),
                    [NamedValue("journal_seq", u(900)), NamedValue("log_seq", u(850)), NamedValue("by", u(0))])
        case .rightSaved:
            return (.rightSaved(uid: uid, identifier: "com.example.login", requirement: .biometryCurrentSet),
                    [NamedValue("uid", u(uid)), NamedValue("identifier", t("com.example.login")),
                     NamedValue("requirement", t("biometry-current-set"))])
        case .rightRemoved:
            return (.rightRemoved(uid: uid, identifier: "com.example.login", requirement: .default),
                    [NamedValue("uid", u(uid)), NamedValue("identifier", t("com.example.login")), NamedValue("requirement", t("default"))])
        case .rightAuthorized:
            return (.rightAuthorized(uid: uid, ctx: ctx, identifier: "com.example.login", method: .biometric),
                    who + [NamedValue("identifier", t("com.example.login")), NamedValue("method", t("biometric"))])
        case .rightSecretRead:
            return (.rightSecretRead(uid: uid, ctx: ctx, identifier: "com.example.login"),
                    who + [NamedValue("identifier", t("com.example.login"))])
        case .promptHalfEnded:
            return (.promptHalfEnded(uid: uid, ctx: ctx, eval: eval, half: .passcode, reason: .delay, retryAfter: 300),
                    inEvaluation + [NamedValue("half", t("passcode")), NamedValue("reason", t("delay")), NamedValue("retry_after", s(300))])
        case .biometrySkipped:
            return (.biometrySkipped(uid: uid, ctx: ctx, eval: eval, reason: .remote, detail: "laptop.example.org"),
                    inEvaluation + [NamedValue("reason", t("remote")), NamedValue("detail", t("laptop.example.org"))])
        case .systemSleep:
            return (.systemSleep(suspending: true), [NamedValue("state", t("suspending"))])
        case .agentRegistered:
            return (.agentRegistered(uid: uid, session: "c2", pid: 5150),
                    [NamedValue("uid", u(uid)), NamedValue("session", t("c2")), NamedValue("pid", s(5150))])
        case .agentUnregistered:
            return (.agentUnregistered(uid: uid, session: "c2", pid: 5150, reason: .disconnect),
                    [NamedValue("uid", u(uid)), NamedValue("session", t("c2")), NamedValue("pid", s(5150)),
                     NamedValue("reason", t("disconnect"))])
        case .promptsRouted:
            return (.promptsRouted(uid: uid, ctx: ctx, eval: eval, route: AgentRoute(session: "7", agentPID: 5151, passcodePrompts: true)),
                    inEvaluation + [NamedValue("session", t("7")), NamedValue("agent_pid", s(5151)),
                                    NamedValue("passcode_prompts", .bool(true))])
        case .agentRefused:
            let refusal = AgentRefusal(uid: uid, pid: 6160, request: .passcode, reason: .promptsBelongToAgent, session: nil,
                                       ctx: ctx, eval: eval)
            return (.agentRefused(refusal),
                    [NamedValue("uid", u(uid)), NamedValue("pid", s(6160)), NamedValue("request", t("passcode")),
                     NamedValue("reason", t("prompts-belong-to-agent")), NamedValue("session", .absent), NamedValue("ctx", c),
                     NamedValue("eval", u(eval))])
        case .rightKeyCreated:
            let digest = String(repeating: "0f", count: 32)
            return (.rightKeyCreated(uid: uid, identifier: "com.example.login", publicKeySHA256: digest),
                    [NamedValue("uid", u(uid)), NamedValue("identifier", t("com.example.login")),
                     NamedValue("public_key_sha256", t(digest))])
        case .rightKeyUsed:
            let algorithm = KeyAlgorithm.named("algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV")!
            return (.rightKeyUsed(uid: uid, ctx: ctx, identifier: "com.example.login", algorithm: algorithm),
                    who + [NamedValue("identifier", t("com.example.login")), NamedValue("operation", t("decrypt")),
                           NamedValue("algorithm", t(algorithm.name))])
        case .loginSecretStored:
            return (.loginSecretStored(uid: uid, ctx: ctx, eval: eval, service: "gdm-password"),
                    inEvaluation + [NamedValue("service", t("gdm-password"))])
        case .loginSecretReleased:
            return (.loginSecretReleased(uid: uid, ctx: ctx, eval: eval, service: "login"),
                    inEvaluation + [NamedValue("service", t("login"))])
        case .loginSecretVoided:
            return (.loginSecretVoided(uid: uid, reason: .passwordChanged),
                    [NamedValue("uid", u(uid)), NamedValue("reason", t("password-changed"))])
        case .loginSecretRefused:
            let refusal = LoginSecretRefusal(uid: uid, caller: 0, ctx: ctx, eval: nil, service: "sudo", reason: .serviceNotListed)
            return (.loginSecretRefused(refusal),
                    [NamedValue("uid", u(uid)), NamedValue("caller", u(0)), NamedValue("ctx", c), NamedValue("eval", .absent),
                     NamedValue("service", t("sudo")), NamedValue("reason", t("service-not-listed"))])
        case .loginSecretChoice:
            return (.loginSecretChoice(uid: uid, enabled: true, by: admin),
                    [NamedValue("uid", u(uid)), NamedValue("enabled", .bool(true)), NamedValue("by", u(admin))])
        case .rightDropped:
            return (.rightDropped(uid: uid, identifier: "com.example.login", requirement: .biometry, name: "alice",
                                  reason: .accountReplaced),
                    [NamedValue("uid", u(uid)), NamedValue("identifier", t("com.example.login")), NamedValue("requirement", t("biometry")),
                     NamedValue("name", t("alice")), NamedValue("reason", t("account-replaced"))])
        }
    }
}
