// The production EventRecorder: events encoded by the core's EventCodec,
// appended to the LocalAuthLog with index keys, made durable by the log's
// group commit. The log's sync thread wakes the event loop through an
// eventfd when more becomes durable, or when writing failed.
import LocalAuthCore
import LocalAuthLog
import LocalAuthSystem
import Synchronization

final class LogRecorder: EventRecorder {
    let log: EventLog
    private var scratch = ByteWriter(capacity: 256)
    private let failureFlag: FailureFlag

    init(log: EventLog, failure: FailureFlag) {
        self.log = log
        self.failureFlag = failure
    }

    func record(_ event: Event) throws -> UInt64 {
        scratch.bytes.removeAll(keepingCapacity: true)
        EventCodec.encode(event.body, into: &scratch)
        let keys = RecordKeys(type: event.body.kind.rawValue, uid: event.body.uid, context: event.body.ctx)
        return try scratch.bytes.withUnsafeBytes { payload throws(LogError) in
            try log.append(time: event.time, keys: keys, payload: payload)
        }
    }

    var durableSeq: UInt64 { log.durableSeq }
    var lastSeq: UInt64 { log.lastSeq }
    var failure: String? { failureFlag.value }
}

/// Set by the log's sync thread when a write or fsync failed; read by the loop.
final class FailureFlag: Sendable {
    private let box = Mutex<String?>(nil)
    var value: String? { box.withLock { $0 } }
    func set(_ message: String) { box.withLock { $0 = message } }
}

/// Rebuilds the state from the newest valid snapshot plus the log's tail
/// (S-38). Used by the daemon at start and by `localauthctl replay`.
enum StateLoader {
    struct Loaded {
        var state: AuthState
        var fromSnapshot: UInt64?
        var replayed: Int
        var skippedSnapshots: [String]
    }

    static func load(_ log: EventLog, until: UInt64 = .max) throws -> Loaded {
        var state = AuthState()
        var start: UInt64 = 1
        var fromSnapshot: UInt64?
        let (snapshot, skipped) = log.newestValidSnapshot()
        if let snapshot, snapshot.seq <= until {
            do {
                state = try StateCodec.decode(snapshot.payload)
                guard state.eventCount == snapshot.seq else { throw DecodeError("snapshot covers \(state.eventCount) events, header says \(snapshot.seq)") }
                start = snapshot.seq + 1
                fromSnapshot = snapshot.seq
            } catch {
                DaemonLog.error("Failed to use snapshot \(snapshot.seq), replaying the whole log: \(error)")
                state = AuthState()
            }
        }
        let reader = try log.reader(from: start)
        var replayed = 0
        loop: while true {
            switch reader.next() {
            case .record(let record):
                guard record.seq <= until else { break loop }
                let body = try EventCodec.decode(kind: record.keys.type, payload: record.payload)
                state.apply(Event(time: record.time, body))
                replayed += 1
            case .end:
                break loop
            case .tornTail(let torn):
                throw StoreError("the log ends in a torn record (\(torn)); run `localauthctl verify`")
            case .corruption(let corruption):
                throw StoreError("\(corruption); run `localauthctl verify`, then `localauthctl repair` with the daemon stopped")
            }
        }
        return Loaded(state: state, fromSnapshot: fromSnapshot, replayed: replayed, skippedSnapshots: skipped.map(\.description))
    }
}
