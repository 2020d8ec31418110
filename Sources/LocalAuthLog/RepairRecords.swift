// The records `localauthctl repair` appends after the cut (FORMAT.md
// "Repair"), made here so that the simulator's repair appends the same:
// first a `passcode-changed` for each user of the passcode store whose own
// event was cut (known only to the store, so the repair record raises
// their delay too; the daemon's start would record it after the repair,
// with no delay), then `log-repaired`, which locks every user out of
// biometry (S-41).
import LocalAuthCore

public enum RepairRecords {
    /// `kept`: the log as the cut left it; `storedPasscodeUsers`: the users
    /// the passcode store holds a passcode for; `by`: who repairs.
    public static func make(firstLostSeq: UInt64, kept: EventLog, storedPasscodeUsers: [UserID], by: UserID)
        -> [(keys: RecordKeys, payload: [UInt8])] {
        let known = (try? Replay.fold(kept))?.state
        var bodies = storedPasscodeUsers.filter { known?.user($0).passcodeSet != true }
            .map { EventBody.passcodeChanged(uid: $0, set: true, by: by) }
        bodies.append(.logRepaired(firstLostSeq: firstLostSeq, by: by))
        return bodies.map { (RecordKeys(type: $0.kind.rawValue, uid: $0.uid), EventCodec.encode($0)) }
    }
}
