// The fold of the log: the newest usable snapshot, then every record after it
// decoded and applied, up to an optional limit (S-38). The daemon starts from
// it and `localauthctl replay` prints it, so both derive state the same way.
import LocalAuthCore

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

    /// Folds `log` (opened by the caller) up to `untilSeq` / `untilTime`.
    public static func fold(_ log: EventLog, untilSeq: UInt64 = .max, untilTime: Int64? = nil) throws(Failure) -> Outcome {
        var outcome = Outcome(state: AuthState())
        var start: UInt64 = 1
        let (snapshot, skipped) = log.newestValidSnapshot()
        outcome.skippedSnapshots = skipped.map(\.description)
        if let snapshot, snapshot.seq <= untilSeq, untilTime.map({ snapshot.time <= $0 }) ?? true {
            if let state = try? StateCodec.decode(snapshot.payload), state.eventCount == snapshot.seq {
                outcome.state = state
                outcome.lastTime = state.clockHighWater
                outcome.fromSnapshot = snapshot.seq
                start = snapshot.seq + 1
            } else {
                outcome.skippedSnapshots.append("snapshot \(snapshot.seq): payload does not decode to the state it claims")
            }
        }
        let reader: LogReader
        do { reader = try log.reader(from: start) } catch { throw Failure(description: "Failed to read the event log: \(error)") }
        loop: while true {
            switch reader.next() {
            case .record(let record):
                if record.seq > untilSeq { break loop }
                if let untilTime, record.time > untilTime { break loop }
                let body: EventBody
                do {
                    body = try EventCodec.decode(kind: record.keys.type, payload: record.payload)
                } catch {
                    throw Failure(description: "Failed to decode seq \(record.seq) at \(record.position): \(error); "
                        + "run 'localauthctl verify', and 'localauthctl repair' with the daemon stopped")
                }
                outcome.state.apply(Event(time: record.time, body))
                outcome.lastTime = record.time
                outcome.replayed += 1
            case .end:
                break loop
            case .tornTail(let torn):
                outcome.tornTail = torn
                break loop
            case .corruption(let corruption):
                throw Failure(description: "The log cannot be trusted from seq \(corruption.seq): \(corruption); "
                    + "run 'localauthctl verify', and 'localauthctl repair' with the daemon stopped")
            }
        }
        return outcome
    }
}
