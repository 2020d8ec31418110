// The fold of the log: a trusted snapshot, then every record after it
// decoded and applied, up to an optional limit (S-38). The daemon starts from
// it and `localauthctl replay` prints it, so both derive state the same way.
//
// A snapshot is trusted only when the log itself vouches for it (S-49): a
// `snapshot-recorded` event after the snapshot's seq names the SHA-256 of its
// file. The event is looked for while the records after the snapshot are
// folded anyway, so a trusted snapshot costs no extra read. A snapshot
// without its event (written, then the daemon died before recording it) is
// passed over for an older one or a full replay: never a wrong state. A
// snapshot whose file differs from its recorded digest was changed after it
// was written; `strict` (the daemon) refuses to start then, as it does on a
// snapshot newer than the log (records were removed), naming the commands.
import LocalAuthCore
import LocalAuthSystem

public enum Replay {
    public struct Outcome: Sendable {
        public var state: AuthState
        /// The time of the last event folded (or the snapshot's high-water mark).
        public var lastTime: Int64 = 0
        public var fromSnapshot: UInt64?
        public var replayed = 0
        /// The log ends in an unfinished write (only seen on a live or copied log).
        public var tornTail: TornTail?
        public var skippedSnapshots: [String] = []
    }

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    static let commands = "run 'localauthctl verify', and 'localauthctl repair' with the daemon stopped"

    /// Folds `log` (opened by the caller) up to `untilSeq` / `untilTime`.
    /// `strict`: refuse (instead of skipping) a snapshot newer than the log,
    /// one whose chain head differs from the log's, or one whose file
    /// differs from its `snapshot-recorded` digest.
    public static func fold(
        _ log: EventLog, untilSeq: UInt64 = .max, untilTime: Int64? = nil, strict: Bool = false
    ) throws(Failure) -> Outcome {
        let store = log.snapshots
        let lastSeq = log.lastSeq
        var notes: [String] = []
        let seqs: [UInt64]
        do throws(SystemError) { seqs = try store.list() } catch {
            throw Failure(description: "Failed to list the snapshots: \(error)")
        }
        if strict, let newest = seqs.last, newest > lastSeq {
            throw Failure(description: "Snapshot \(SegmentName.hex(newest)) covers seq \(newest) but the log ends at seq \(lastSeq): "
                + "recorded events were removed; \(commands)")
        }
        for seq in seqs.reversed() {
            let file = SegmentName.hex(seq) + SnapshotStore.suffix
            let snapshot: Snapshot
            switch store.check(seq, chainHeadAt: { $0 <= lastSeq ? try? log.chainHead(at: $0) : nil }) {
            case .failure(let skip):
                if strict, skip.reason.hasPrefix("chain head differs") {
                    throw Failure(description: "Snapshot \(file) does not match the log at seq \(seq) (\(skip.reason)); \(commands)")
                }
                notes.append(skip.description)
                continue
            case .success(let found):
                snapshot = found
            }
            guard snapshot.seq <= untilSeq, untilTime.map({ snapshot.time <= $0 }) ?? true else { continue }
            guard let state = try? StateCodec.decode(snapshot.payload), state.eventCount == snapshot.seq else {
                notes.append("snapshot \(seq): payload does not decode to the state it claims")
                continue
            }
            var outcome = Outcome(state: state)
            outcome.lastTime = state.clockHighWater
            outcome.fromSnapshot = seq
            switch try run(log, from: seq + 1, untilSeq: untilSeq, untilTime: untilTime, vouching: snapshot, into: &outcome) {
            case .vouched:
                outcome.skippedSnapshots = notes
                return outcome
            case .unrecorded:
                notes.append("skipped snapshot \(file): no snapshot-recorded event in the log vouches for it")
            case .differs(let recorded):
                let reason = "its file's SHA-256 \(snapshot.fileDigest.hex) differs from the one recorded at seq \(recorded)"
                if strict { throw Failure(description: "Snapshot \(file) was changed after it was written (\(reason)); \(commands)") }
                notes.append("skipped snapshot \(file): \(reason)")
            }
        }
        var outcome = Outcome(state: AuthState())
        _ = try run(log, from: 1, untilSeq: untilSeq, untilTime: untilTime, vouching: nil, into: &outcome)
        outcome.skippedSnapshots = notes
        return outcome
    }

    enum Vouch { case vouched, unrecorded, differs(atSeq: UInt64) }

    /// Folds records from `seq` into `outcome`; with `vouching`, also looks
    /// for that snapshot's `snapshot-recorded` event (past the limits if need be).
    private static func run(
        _ log: EventLog, from seq: UInt64, untilSeq: UInt64, untilTime: Int64?, vouching snapshot: Snapshot?,
        into outcome: inout Outcome
    ) throws(Failure) -> Vouch {
        var vouch: Vouch? = snapshot == nil ? .vouched : nil
        var folding = true
        let reader: LogReader
        do { reader = try log.reader(from: seq) } catch { throw Failure(description: "Failed to read the event log: \(error)") }
        let recordedKind = EventKind.snapshotRecorded.rawValue
        loop: while true {
            switch reader.next() {
            case .record(let record):
                if record.seq > untilSeq || untilTime.map({ record.time > $0 }) == true { folding = false }
                if !folding && vouch != nil { break loop }
                // Past the limits only the vouching event is looked for.
                if !folding && record.keys.type != recordedKind { continue }
                let body: EventBody
                do {
                    body = try EventCodec.decode(kind: record.keys.type, payload: record.payload)
                } catch {
                    throw Failure(description: "Failed to decode seq \(record.seq) at \(record.position): \(error); \(commands)")
                }
                if let snapshot, vouch == nil, case .snapshotRecorded(let covered, let digest) = body, covered == snapshot.seq {
                    vouch = digest == snapshot.fileDigest.hex ? .vouched : .differs(atSeq: record.seq)
                    if case .differs = vouch { return vouch! }
                }
                guard folding else { continue }
                outcome.state.apply(Event(time: record.time, body))
                outcome.lastTime = record.time
                outcome.replayed += 1
            case .end:
                break loop
            case .tornTail(let torn):
                outcome.tornTail = torn
                break loop
            case .corruption(let corruption):
                throw Failure(description: "The log cannot be trusted from seq \(corruption.seq): \(corruption); \(commands)")
            }
        }
        return vouch ?? .unrecorded
    }
}
