// S-55: PAM traffic has a budget of its own. Every su, sudo, login or ssh
// attempt is a context that root (pam_localauth) opens on behalf of a
// subject (S-42), and root is exempt from S-48's budget and may write into
// the space reserve: a `su` loop wrote ~700 uncharged events a second and
// filled a small disk, after which everyone, root included, was refused.
// So the requests of an on-behalf context (`new uid=`, its `evaluate` and
// `passcode`) are charged to a bucket kept per (subject, requester) pair,
// at `[Log] UserEventRate=`/`UserEventBurst=`, whoever the connection is,
// and are refused once the free space falls to the reserve. A setuid
// caller's principal (S-53) pays its own budget as well, so a user who
// names many subjects gains no more than their own budget. Root's own
// `localauthctl` and ordinary clients are judged as before.
import LocalAuthCore
import LocalAuthProtocol

extension ServerCore {
    /// The refusal of a request of an on-behalf context whose subject is
    /// `subject` and requester `requester` (nil: the subject itself or
    /// unknown) that would record `events` events, or nil (then they are
    /// taken from the pair's bucket).
    func onBehalfRefusal(subject: UserID, requester: UserID?, events: Int) -> ProtocolError? {
        if reserveIsReached() {
            limits.refusedForSpace += 1
            return ProtocolError(.unavailable,
                "The disk holding the event log is nearly full (less than ReserveSpace=\(configuration.log.reserveSpace) bytes free); "
                + "authentication through PAM is not recorded into the reserve until space is freed.")
        }
        let rate = configuration.log.userEventRate, burst = configuration.log.userEventBurst
        guard rate > 0 else { return nil }
        let pair = RequesterPair(subject: subject, requester: requester ?? subject)
        let allowance = limits.onBehalfAllowance(for: pair, rate: rate, burst: burst, now: now)
        if allowance.take(events, rate: rate, burst: burst, now: now) { return nil }
        limits.refusedForRate += 1
        let who = requester.map { "uid \($0)" } ?? "callers that name no requester"
        return ProtocolError(.limitExceeded,
            "Too many authentications of uid \(subject) asked for by \(who): at most UserEventRate=\(rate) logged events per second "
            + "(UserEventBurst=\(burst) at once); nothing was recorded, try again later.")
    }

    /// The same for a request on context `ctx`: nil when it is not on behalf.
    func onBehalfRefusal(_ ctx: ContextID, events: Int) -> ProtocolError? {
        guard let origin = trail.origin(of: ctx), let subject = authenticator.state.contexts[ctx]?.uid else { return nil }
        return onBehalfRefusal(subject: subject, requester: origin.requester, events: events)
    }
}

extension LogLimits {
    /// Pairs kept at most before the full buckets among them are dropped.
    static let onBehalfPrunedAbove = 256

    /// The bucket of `pair`, made full at its first request. Buckets that
    /// are full again are forgotten once there are many (a full bucket is
    /// what a new one would be), so memory follows the pairs that are busy.
    mutating func onBehalfAllowance(for pair: RequesterPair, rate: Int, burst: Int, now: Int64) -> UserAllowance {
        if let existing = onBehalf[pair] { return existing }
        if onBehalf.count >= Self.onBehalfPrunedAbove {
            onBehalf = onBehalf.filter { !$0.value.isIdle(rate: rate, burst: burst, now: now) }
        }
        let fresh = UserAllowance(uid: pair.subject, burst: burst, now: now)
        onBehalf[pair] = fresh
        return fresh
    }
}
