// S-64 on the wire (PROTOCOL.md 1.2): a failure tally as reply fields, for
// the success reply of an evaluation that asked (`notice=failures`: the
// tally its sign-in closed) and for `status` (the tally since the last
// sign-in).
import LocalAuthCore

enum FailureNotice {
    static func fields(_ tally: FailureTally) -> [(String, String)] {
        var fields = [("failed-attempts", String(tally.total)), ("failed-biometric", String(tally.biometric)),
                      ("failed-passcode", String(tally.passcode)), ("refused-passcode", String(tally.refused))]
        guard tally.total > 0, let at = tally.lastAt else { return fields }
        fields.append(("last-failed-at", String(at / Timestamp.second)))
        if let service = tally.lastService { fields.append(("last-failed-service", service)) }
        if let tty = tally.lastTTY { fields.append(("last-failed-tty", tty)) }
        if let rhost = tally.lastRHost { fields.append(("last-failed-rhost", rhost)) }
        return fields
    }
}
