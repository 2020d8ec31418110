// The simulator's own reading of the log on its storage, record by record
// with the log's framing (RecordFraming) and the core's codec, never through
// the log's reader: the fold of every record on the file (S-38: the live
// state must equal it), which records reached the file (records before
// replies), and which would survive a crash now (S-40, no lockout bypass).
// Checkpoints of the fold let a restart be judged against the fold of
// exactly the records it recovered, and a repair against those it kept,
// without reading the whole log again.
import LocalAuthCore
import LocalAuthLog

final class LogShadow {
    let storage: SimulatedStorage
    let logDirectory: String
    /// The fold of every record read (seqs 1...lastSeq).
    private(set) var state = AuthState()
    private(set) var lastSeq: UInt64 = 0
    /// The segment being read (its first seq) and where its next record is.
    private var segment: UInt64 = 1
    private var offset = SegmentHeader.size
    /// The records read from this segment and the one before: seq, byte range.
    private var ends: [(seq: UInt64, start: Int, end: Int)] = []
    private var previous: (segment: UInt64, ends: [(seq: UInt64, start: Int, end: Int)])?
    private var checkpoints: [(seq: UInt64, segment: UInt64, offset: Int, state: AuthState)] = []
    /// Durable through here at the last rewind (a restart finds every byte durable).
    private var durableFloor: UInt64 = 0
    /// Told of each record folded, with the state before it.
    var folded: (Event, UInt64, borrowing AuthState) -> Void = { _, _, _ in }
    /// Why the last catch-up stopped before the file's end, if it did.
    private(set) var problem: String?

    init(storage: SimulatedStorage, logDirectory: String) {
        self.storage = storage
        self.logDirectory = logDirectory
    }

    func path(_ segment: UInt64) -> String { logDirectory + "/" + SegmentName.fileName(segment) }

    /// Reads what was written since the last call (as reads see the files).
    func catchUp(through last: UInt64 = .max) {
        problem = nil
        while lastSeq < last, step() {}
    }

    /// One record, or a move to the next segment; false at the end.
    private func step() -> Bool {
        guard let bytes = storage.contents(path(segment)) else { return false }
        let read: Bool? = bytes.withUnsafeBytes { raw in
            guard offset < raw.count else { return nil }
            switch RecordFraming.check(raw, at: offset, expectedSeq: lastSeq + 1, zerosEnd: true) {
            case .record(let seq, let time, let keys, let payload, let end):
                guard let body = try? EventCodec.decode(kind: keys.type, payload: UnsafeRawBufferPointer(rebasing: raw[payload])) else {
                    problem = "seq \(seq) does not decode"
                    return false
                }
                let event = Event(time: time, body)
                folded(event, seq, state)
                state.apply(event)
                lastSeq = seq
                ends.append((seq, offset, end))
                offset = end
                if seq % 64 == 0 { checkpoints.append((seq, segment, offset, state)) }
                return true
            case .zeros:
                return nil
            case .damaged(let detail, _), .untrusted(let detail, _):
                // A torn write's prefix (the log failed on it), until a restart cuts it.
                problem = "\(SegmentName.fileName(segment)) offset \(offset): \(detail)"
                return false
            }
        }
        if let read { return read }
        // The end of this segment's records: the next one, once the writer started it.
        let next = lastSeq + 1
        guard next > segment, storage.contents(path(next)) != nil else { return false }
        previous = (segment, ends)
        segment = next
        offset = SegmentHeader.size
        ends = []
        return true
    }

    /// The newest seq that, with every one before it, would survive a crash
    /// now: its bytes are where the storage made them durable, under a
    /// durable name (earlier segments were synced when the writer moved on).
    func durableThrough() -> UInt64 {
        max(durableFloor, durableInFiles())
    }

    private func durableInFiles() -> UInt64 {
        var durable = segment - 1
        if let previous, let last = previous.ends.last {
            durable = previous.segment - 1
            guard storage.isDurable(path(previous.segment), through: last.end) else { return durable }
            durable = last.seq
        }
        guard storage.isDurable(path(segment), through: 0) else { return durable }
        for record in ends {
            guard storage.isDurable(path(segment), through: record.end) else { break }
            durable = record.seq
        }
        return durable
    }

    /// Byte ranges of the open segment's records that an intact record
    /// follows: bit rot there must be refused at the next start, never cut
    /// as a torn write (FORMAT.md "Decoding").
    var rottableRecords: (path: String, ranges: [Range<Int>]) {
        let file = path(segment)
        let followed = zip(ends, ends.dropFirst()).filter { storage.isDurable(file, through: $0.1.end) }
        return (file, followed.map { $0.0.start..<$0.0.end })
    }

    /// The segment being appended to (its first seq).
    var openSegment: UInt64 { segment }

    /// Forgets every record after `keep` (a restart recovered that many, a
    /// repair kept them) and reads the file again up to there, from the
    /// newest checkpoint at or before it.
    func rewind(to keep: UInt64) {
        checkpoints.removeAll { $0.seq > keep }
        if let checkpoint = checkpoints.last {
            (lastSeq, segment, offset, state) = (checkpoint.seq, checkpoint.segment, checkpoint.offset, checkpoint.state)
        } else {
            (lastSeq, segment, offset, state) = (0, 1, SegmentHeader.size, AuthState())
        }
        ends = []
        previous = nil
        let told = folded
        folded = { _, _, _ in }
        catchUp(through: keep)
        folded = told
        durableFloor = lastSeq
    }
}
