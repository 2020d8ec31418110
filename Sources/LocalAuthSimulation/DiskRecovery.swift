// A restart's first step, as the daemon's open and replay do it, on the
// simulated disk: every record decoded by the log's RecordFraming and the
// core's EventCodec, a torn tail told from corruption by the log's own
// test (an intact record after the damage means corruption, S-41), the tail
// cut, and the events folded into a fresh AuthState (S-38).
import LocalAuthCore
import LocalAuthLog

struct DiskRecovery {
    var events: [Event] = []
    var records: [(seq: UInt64, end: Int)] = []
    /// The length kept (where a torn tail was cut, else the file's length).
    var length = 0
    var tornBytes = 0
    /// Why the log cannot be trusted (the daemon refuses to start), or nil.
    var corruption: String?

    init(_ file: [UInt8]) {
        file.withUnsafeBytes { raw in
            var offset = 0
            var expected: UInt64 = 1
            while offset < raw.count {
                switch RecordFraming.check(raw, at: offset, expectedSeq: expected, zerosEnd: true) {
                case .record(let seq, let time, let keys, let payload, let end):
                    do {
                        let body = try EventCodec.decode(kind: keys.type, payload: UnsafeRawBufferPointer(rebasing: raw[payload]))
                        events.append(Event(time: time, body))
                    } catch {
                        corruption = "seq \(seq) does not decode: \(error)"
                        return
                    }
                    records.append((seq, end))
                    offset = end
                    expected = seq + 1
                case .zeros:
                    length = offset
                    return
                case .damaged(let detail, let reason):
                    if RecordFraming.intactRecordFollows(raw, after: offset, expectedSeq: expected) {
                        corruption = "\(reason.rawValue) at offset \(offset) seq \(expected): \(detail)"
                        return
                    }
                    tornBytes = raw.count - offset
                    length = offset
                    return
                case .untrusted(let detail, let reason):
                    corruption = "\(reason.rawValue) at offset \(offset) seq \(expected): \(detail)"
                    return
                }
            }
            length = offset
        }
    }

    var lastSeq: UInt64 { records.last?.seq ?? 0 }

    /// The fold of the recovered events (what the daemon starts from).
    var state: AuthState {
        var state = AuthState()
        for event in events { state.apply(event) }
        return state
    }
}
