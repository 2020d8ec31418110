// An event as auditors see it (AUDIT.md "JSON event lines"): `type` and its
// fields in snake_case, typed for JSON. The short and verbose formats of
// `log` print the same fields, so the three never disagree.

import LocalAuthCore

enum EventFields {
    static func fields(_ body: EventBody) -> [(String, JSONValue)] {
        func ctx(_ id: ContextID) -> (String, JSONValue) { ("ctx", .string(id.hex)) }
        func uid(_ id: UserID) -> (String, JSONValue) { ("uid", .number(id)) }
        func eval(_ id: EvaluationID) -> (String, JSONValue) { ("eval", .number(id)) }
        switch body {
        case .daemonStarted(let version, let bootID, let pid):
            return [("version", .string(version)), ("boot_id", .string(bootID)), ("pid", .number(pid))]
        case .daemonStopped:
            return []
        case .contextCreated(let u, let c, let pid, let origin):
            // AUDIT.md v1.1: `caller` only when it differs from `uid`.
            var fields = [uid(u), ctx(c), ("pid", .number(pid))]
            if let caller = origin.caller, caller != u { fields.append(("caller", .number(caller))) }
            // S-54: who asked for an on-behalf context (who ran su).
            if let requester = origin.requester { fields.append(("requester", .number(requester))) }
            if let service = origin.service { fields.append(("service", .string(service))) }
            if let tty = origin.tty { fields.append(("tty", .string(tty))) }
            if let rhost = origin.rhost { fields.append(("rhost", .string(rhost))) }
            if !origin.passcodePrompts { fields.append(("passcode_prompts", .bool(false))) }
            // AUDIT.md (issue 32): only for contexts of the D-Bus API.
            if origin.transport != .socket { fields.append(("transport", .string(origin.transport.name))) }
            if let name = origin.busName { fields.append(("bus_name", .string(name))) }
            if let app = origin.app { fields.append(("app", .string(app))) }
            return fields
        case .contextPropertySet(let u, let c, let property):
            return [uid(u), ctx(c), ("name", .string(property.name)), ("value", .string(property.value))]
        case .contextInvalidated(let u, let c, let reason):
            return [uid(u), ctx(c), ("reason", .string(reason.rawValue))]
        case .policyChecked(let u, let c, let policy, let biometry, let result, let reason):
            var fields = [uid(u), ctx(c), ("policy", .number(policy.rawValue)), ("biometry", .string(biometry.wireName)),
                          ("result", .string(result?.wireName ?? "ok"))]
            if let reason { fields.append(("reason", .string(reason))) }
            return fields
        case .policyCheckedRepeatedly(let checks):
            // Shown as the policy-checked each check is, with its count; the
            // printer adds the time range (the record keeps its span).
            return fields(checks.check) + [("count", .number(checks.count))]
        case .evaluationStarted(let u, let c, let e, let policy, let reason):
            return [uid(u), ctx(c), eval(e), ("policy", .number(policy.rawValue)), ("reason", .string(reason))]
        case .promptShown(let u, let c, let e, let prompt):
            var fields = [uid(u), ctx(c), eval(e), ("kind", .string(prompt.kind.rawValue))]
            switch prompt.kind {
            case .biometric:
                fields += [("attempt", .number(prompt.attempt)), ("fallback", .bool(prompt.fallbackOffered))]
                // S-60: the passcode half of this evaluation ended (a delay).
                if prompt.retryAfter > 0 { fields.append(("retry_after", .int(prompt.retryAfter))) }
            case .passcode:
                fields.append(("attempts_left", .number(prompt.attemptsLeft)))
            case .biometricOrPasscode:
                fields += [("attempt", .number(prompt.attempt)), ("attempts_left", .number(prompt.attemptsLeft))]
            }
            if let message = prompt.message { fields.append(("message", .string(message))) }
            return fields
        case .biometricMatched(let u, let c, let e), .biometricFailed(let u, let c, let e),
             .fallbackChosen(let u, let c, let e), .biometricDisconnected(let u, let c, let e),
             .passcodeSubmitted(let u, let c, let e):
            return [uid(u), ctx(c), eval(e)]
        case .biometricRetry(let u, let c, let e, let message):
            return [uid(u), ctx(c), eval(e), ("message", .string(message))]
        case .passcodeAccepted(let u, let c, let e):
            return [uid(u)] + (c.map { [ctx($0)] } ?? []) + (e.map { [eval($0)] } ?? [])
        case .passcodeRejected(let u, let c, let e, let counted, let requester):
            return [uid(u)] + (c.map { [ctx($0)] } ?? []) + (e.map { [eval($0)] } ?? []) + [("counted", .bool(counted))]
                + (requester.map { [("requester", .number($0))] } ?? [])
        case .passcodeRefused(let u, let c, let e, let retryAfter):
            return [uid(u)] + (c.map { [ctx($0)] } ?? []) + (e.map { [eval($0)] } ?? []) + [("retry_after", .int(retryAfter))]
        case .evaluationSucceeded(let u, let c, let e, let method):
            return [uid(u), ctx(c), eval(e), ("method", .string(method.rawValue))]
        case .evaluationFailed(let u, let c, let e, let failure):
            var fields = [uid(u), ctx(c), eval(e), ("code", .number(failure.code.rawValue)),
                          ("name", .string(failure.code.wireName)), ("message", .string(failure.message))]
            if let reason = failure.reason { fields.append(("reason", .string(reason))) }
            if let retry = failure.retryAfter { fields.append(("retry_after", .int(retry))) }
            if failure.adminLocked { fields.append(("admin_locked", .bool(true))) }
            return fields
        case .enrollmentChanged(let u, let templates, let by, _, let source):
            // AUDIT.md v1.1: fprintd's changes name the fingers, and `by` is fprintd.
            if source == .fprintd {
                return [uid(u), ("templates", .number(templates.count)), ("fingers", .array(templates.map { .string($0) })),
                        ("by", .string("fprintd"))]
            }
            return [uid(u), ("templates", .number(templates.count)), ("by", .number(by))]
        case .passcodeChanged(let u, let set, let by):
            return [uid(u), ("set", .bool(set)), ("by", .number(by))]
        case .deviceUnlocked(let u, let by), .userReset(let u, let by):
            return [uid(u), ("by", .number(by))]
        case .logRepaired(let firstLostSeq, let by):
            return [("first_lost_seq", .number(firstLostSeq)), ("by", .number(by))]
        case .rulesApplied(let rules):
            return [
                ("biometry", .string(rules.biometryType.wireName)),
                ("attempts_per_evaluation", .number(rules.attemptsPerEvaluation)),
                ("lockout_threshold", .number(rules.lockoutThreshold)),
                ("prompt_timeout_sec", .int(rules.promptTimeout / TimeText.second)),
                ("passcode_required_after_sec", .int(rules.passcodeRequiredAfter / TimeText.second)),
                ("passcode_required_after_boot", .bool(rules.passcodeRequiredAfterBoot)),
                ("delay_after_failures", .number(rules.delayAfterFailures)),
                ("backoff_sec", .array(rules.backoff.map { .int($0 / TimeText.second) })),
                ("max_passcode_failures", .number(rules.maxPasscodeFailures)),
            ]
        case .contextReleased(let u, let c):
            return [uid(u), ctx(c)]
        case .snapshotRecorded(let snapshotSeq, let sha256):
            return [("snapshot_seq", .number(snapshotSeq)), ("sha256", .string(sha256))]
        case .logRollbackAccepted(let journalSeq, let logSeq, let by):
            return [("journal_seq", .number(journalSeq)), ("log_seq", .number(logSeq)), ("by", .number(by))]
        case .rightSaved(let u, let identifier, let requirement), .rightRemoved(let u, let identifier, let requirement):
            return [uid(u), ("identifier", .string(identifier)), ("requirement", .string(requirement.wireName))]
        case .rightAuthorized(let u, let c, let identifier, let method):
            return [uid(u), ctx(c), ("identifier", .string(identifier)), ("method", .string(method.rawValue))]
        case .rightSecretRead(let u, let c, let identifier):
            return [uid(u), ctx(c), ("identifier", .string(identifier))]
        case .promptHalfEnded(let u, let c, let e, let half, let reason, let retryAfter):
            var fields = [uid(u), ctx(c), eval(e), ("half", .string(half.rawValue)), ("reason", .string(reason.rawValue))]
            if half == .passcode { fields.append(("retry_after", .int(retryAfter))) }
            return fields
        case .biometrySkipped(let u, let c, let e, let reason, let detail):
            return [uid(u), ctx(c), eval(e), ("reason", .string(reason.rawValue))] + (detail.map { [("detail", .string($0))] } ?? [])
        case .systemSleep(let suspending):
            return [("state", .string(suspending ? "suspending" : "resumed"))]
        case .agentRegistered(let u, let session, let pid):
            return [uid(u), ("session", .string(session)), ("pid", .number(pid))]
        case .agentUnregistered(let u, let session, let pid, let reason):
            return [uid(u), ("session", .string(session)), ("pid", .number(pid)), ("reason", .string(reason.rawValue))]
        case .promptsRouted(let u, let c, let e, let route):
            return [uid(u), ctx(c), eval(e), ("session", .string(route.session)), ("agent_pid", .number(route.agentPID)),
                    ("passcode_prompts", .bool(route.passcodePrompts))]
        case .agentRefused(let refusal):
            var fields = [uid(refusal.uid), ("pid", .number(refusal.pid)), ("request", .string(refusal.request.rawValue)),
                          ("reason", .string(refusal.reason.rawValue))]
            if let session = refusal.session { fields.append(("session", .string(session))) }
            if let c = refusal.ctx { fields.append(ctx(c)) }
            if let e = refusal.eval { fields.append(eval(e)) }
            return fields
        case .rightKeyCreated(let u, let identifier, let digest):
            return [uid(u), ("identifier", .string(identifier)), ("public_key_sha256", .string(digest))]
        case .rightKeyUsed(let u, let c, let identifier, let algorithm):
            return [uid(u), ctx(c), ("identifier", .string(identifier)), ("operation", .string(algorithm.operation.wireName)),
                    ("algorithm", .string(algorithm.name))]
        case .loginSecretStored(let u, let c, let e, let service), .loginSecretReleased(let u, let c, let e, let service):
            return [uid(u), ctx(c), eval(e), ("service", .string(service))]
        case .loginSecretVoided(let u, let reason):
            return [uid(u), ("reason", .string(reason.rawValue))]
        case .loginSecretRefused(let refusal):
            var fields = [uid(refusal.uid), ("caller", .number(refusal.caller))]
            if let c = refusal.ctx { fields.append(ctx(c)) }
            if let e = refusal.eval { fields.append(eval(e)) }
            if let service = refusal.service { fields.append(("service", .string(service))) }
            fields.append(("reason", .string(refusal.reason.rawValue)))
            return fields
        case .loginSecretChoice(let u, let enabled, let by):
            return [uid(u), ("enabled", .bool(enabled)), ("by", .number(by))]
        case .rightDropped(let u, let identifier, let requirement, let name, let reason):
            return [uid(u), ("identifier", .string(identifier)), ("requirement", .string(requirement.wireName)),
                    ("name", .optional(name)), ("reason", .string(reason.rawValue))]
        }
    }
}
