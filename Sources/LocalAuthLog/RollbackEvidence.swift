// S-49's judgement of a log at a start, shared by the daemon (which refuses
// to start on it) and `localauthctl verify` (which fails on it): the log is
// behind what is known of it. Two kinds of evidence:
//   - an empty log next to a builtin passcode store that holds passcodes
//     (`log/` emptied: no anchor needed to see it; a passcode is only ever
//     set by a daemon that recorded its start first);
//   - the newest anchor (the journal's or the test stand-in's) that the log
//     is behind, or whose chain head differs from the log's at its seq.
// One implementation, so that `verify` cannot say OK on a directory the
// daemon refuses (issue 27 item 11).

public struct RollbackEvidence: Sendable, Equatable {
    /// The anchor's seq (0 when the evidence is the passcode store).
    public var journalSeq: UInt64
    /// What is wrong, for messages.
    public var what: String

    /// `storedPasscodes`: the number of passcodes the builtin store holds
    /// (0 under Backend=shadow, whose passwords are the system's).
    /// `anchor`: the newest anchor of this state directory and the store's
    /// name, when one was read. nil when the log holds what is known of it.
    public static func judge(_ log: EventLog, storedPasscodes: Int, anchor: (LogAnchor, store: String)?) -> RollbackEvidence? {
        var evidence: RollbackEvidence?
        if log.lastSeq == 0, storedPasscodes > 0 {
            evidence = RollbackEvidence(journalSeq: 0, what: "the event log is empty but the passcode store holds "
                + "\(storedPasscodes) passcode(s): the log was removed or emptied")
        }
        if let (anchor, store) = anchor {
            switch log.compare(with: anchor) {
            case .holds:
                break
            case .behind(let logSeq):
                evidence = RollbackEvidence(journalSeq: anchor.seq, what: "the event log ends at seq \(logSeq), behind the head "
                    + "recorded in \(store) (\(anchor)): the state directory was restored from an older copy or the log was cut")
            case .diverges(let head):
                evidence = RollbackEvidence(journalSeq: anchor.seq, what: "the event log's chain head at seq \(anchor.seq) is "
                    + "\(head.hex.prefix(16))…, not the one recorded in \(store) (\(anchor)): the log was rewritten")
            }
        }
        return evidence
    }
}
