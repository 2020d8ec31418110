// What the journal says about authentications (the trail: each evaluation's
// end, lockouts engaged and lifted, passcode backoff, resets, account
// changes), a value with no I/O. The core shows it every event it delivers;
// it answers with the entries to journal, each now or only once the event
// is durable (a failure's outcome must not leave before its fsync, S-40).
// Never a secret: ids, uids, counts, and the PAM service, tty and remote
// host of on-behalf contexts (S-42), never the reason text an app gave.
// It keeps what the entries need across events: the users locked out (also
// STATUS='s count) and the origins of open on-behalf contexts.
import LocalAuthCore

struct AuthenticationTrail {
    /// Users locked out (biometry or admin lock): STATUS='s count, and the
    /// lockout-lifted entry.
    private(set) var lockedOut: Set<UserID>
    /// The PAM service, tty and remote host of open on-behalf contexts.
    private var origins: [ContextID: ContextOrigin] = [:]

    /// The origin of an open on-behalf context (S-42), if it is one.
    func origin(of ctx: ContextID) -> ContextOrigin? { origins[ctx] }

    /// The trail of a daemon that starts on `state`.
    init(_ state: AuthState) {
        lockedOut = Set(state.users.compactMap { $0.value.biometryLockedOut || $0.value.adminLocked ? $0.key : nil })
    }

    /// The entries `event` (record `seq`, folded into `state`) makes, in order:
    /// `write(entry, afterDurable)`.
    mutating func note(_ event: Event, seq: UInt64, in state: borrowing AuthState,
                       _ write: (JournalEntry, _ afterDurable: Bool) -> Void) {
        switch event.body {
        case .evaluationSucceeded(let uid, let ctx, _, let method):
            write(evaluationEnd(uid: uid, ctx: ctx, seq: seq, .success(method)), true)
        case .evaluationFailed(let uid, let ctx, _, let failure):
            write(evaluationEnd(uid: uid, ctx: ctx, seq: seq, .failure(failure)), true)
        case .biometricFailed(let uid, let ctx, _):
            let user = state.user(uid)
            if user.biometryLockedOut { lockedOut.insert(uid) }
            if user.biometryLockedOut, user.biometricFailures == state.rules.lockoutThreshold {
                let failures = user.biometricFailures
                write(JournalEntry(.notice, "Biometry locked out for uid \(uid) after \(failures) failures.",
                                   id: .lockoutEngaged, fields: JournalEntry.fields(uid: uid, context: ctx, seq: seq)), true)
            }
        case .passcodeRejected(let uid, let ctx, _, true, nil):
            // The failure that reached MaxPasscodeFailures set the lock (S-6),
            // whether or not biometry was already locked out (which had put
            // the uid in `lockedOut` without a word about the passcode).
            let user = state.user(uid)
            if user.adminLocked { lockedOut.insert(uid) }
            if user.adminLocked, user.passcodeFailures == state.rules.maxPasscodeFailures {
                write(JournalEntry(.notice, "Passcode locked for uid \(uid) until an administrator resets it.",
                                   id: .lockoutEngaged, fields: JournalEntry.fields(uid: uid, context: ctx, seq: seq)), true)
            }
            let retry = state.passcodeRetryAfter(uid, now: event.time)
            if retry > 0 {
                write(JournalEntry(.notice, "Passcode entry disabled for uid \(uid) for \(retry) s.", id: .passcodeBackoff,
                                   fields: JournalEntry.fields(uid: uid, context: ctx, seq: seq)), true)
            }
        case .passcodeAccepted(let uid, let ctx, _):
            if let lifted = liftLockout(uid, context: ctx, seq: seq, why: "the passcode was entered", in: state) { write(lifted, false) }
        case .userReset(let uid, let by):
            write(JournalEntry(.notice, "Administrator \(by) reset uid \(uid).", id: .adminReset,
                               fields: JournalEntry.fields(uid: uid, context: nil, seq: seq) + [("LOCALAUTH_BY", String(by))]), false)
            if let lifted = liftLockout(uid, context: nil, seq: seq, why: "administrator \(by) reset the user", in: state) {
                write(lifted, false)
            }
        case .contextCreated(_, let ctx, _, let origin) where origin.isOnBehalf:
            origins[ctx] = origin
        case .contextInvalidated(_, let ctx, _):
            origins[ctx] = nil
        case .enrollmentChanged(let uid, let templates, let by, _, _):
            write(accountChange("The enrollment of uid \(uid) changed: \(templates.count) template(s), by uid \(by).",
                                uid: uid, by: by, seq: seq, change: "enrollment"), true)
        case .passcodeChanged(let uid, let set, let by):
            write(accountChange("The passcode of uid \(uid) was \(set ? "set" : "removed") by uid \(by).",
                                uid: uid, by: by, seq: seq, change: set ? "passcode-set" : "passcode-removed"), true)
        case .deviceUnlocked(let uid, let by):
            write(accountChange("A device unlock of uid \(uid) was reported by uid \(by).",
                                uid: uid, by: by, seq: seq, change: "unlocked"), true)
        default:
            break
        }
    }

    /// Every evaluation's end: the user, the context, the method or the
    /// LAError, and an on-behalf context's origin.
    private func evaluationEnd(uid: UserID, ctx: ContextID, seq: UInt64, _ end: EvaluationEnd) -> JournalEntry {
        var fields = JournalEntry.fields(uid: uid, context: ctx, seq: seq)
        if let origin = origins[ctx] {
            if let caller = origin.caller { fields.append(("LOCALAUTH_CALLER", String(caller))) }
            if let requester = origin.requester { fields.append(("LOCALAUTH_REQUESTER", String(requester))) }
            if let service = origin.service { fields.append(("LOCALAUTH_SERVICE", service)) }
            if let tty = origin.tty { fields.append(("LOCALAUTH_TTY", tty)) }
            if let rhost = origin.rhost { fields.append(("LOCALAUTH_RHOST", rhost)) }
        }
        let via = origins[ctx]?.service.map { " via \($0)" } ?? ""
        switch end {
        case .success(let method):
            fields += [("LOCALAUTH_RESULT", "success"), ("LOCALAUTH_METHOD", method.rawValue)]
            return JournalEntry(.info, "Authentication succeeded for uid \(uid)\(via) (\(method.rawValue)).",
                                id: .evaluationSucceeded, fields: fields)
        case .failure(let failure):
            fields += [("LOCALAUTH_RESULT", failure.code.wireName), ("LOCALAUTH_CODE", String(failure.code.rawValue))]
            if let reason = failure.reason { fields.append(("LOCALAUTH_REASON", reason)) }
            return JournalEntry(.notice, "Authentication failed for uid \(uid)\(via): \(failure.code.wireName) (\(failure.code.rawValue)).",
                                id: .evaluationFailed, fields: fields)
        }
    }

    /// An enrollment, passcode or unlock change, with who made it.
    private func accountChange(_ message: String, uid: UserID, by: UserID, seq: UInt64, change: String) -> JournalEntry {
        let fields = JournalEntry.fields(uid: uid, context: nil, seq: seq) + [("LOCALAUTH_BY", String(by)), ("LOCALAUTH_CHANGE", change)]
        return JournalEntry(.notice, message, id: .accountChanged, fields: fields)
    }

    /// "Lockout lifted" when `uid` was locked out and no longer is.
    private mutating func liftLockout(_ uid: UserID, context: ContextID?, seq: UInt64, why: String,
                                      in state: borrowing AuthState) -> JournalEntry? {
        let user = state.user(uid)
        guard !user.biometryLockedOut, !user.adminLocked, lockedOut.remove(uid) != nil else { return nil }
        return JournalEntry(.notice, "Lockout lifted for uid \(uid): \(why).", id: .lockoutLifted,
                            fields: JournalEntry.fields(uid: uid, context: context, seq: seq))
    }
}

/// How an evaluation ended, for its trail entry.
private enum EvaluationEnd {
    case success(SuccessMethod)
    case failure(Failure)
}
