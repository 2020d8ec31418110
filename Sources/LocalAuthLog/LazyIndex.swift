// The per-context/per-user index of what a `.sealed` open found, built on
// the first history query instead of at start (fast READY).

import LocalAuthSystem
import Synchronization

/// The index of the records present at open, built on first use (`.sealed`).
final class LazyIndex: Sendable {
    let storage: any Storage
    let logDirectory: String
    let lastSeq: UInt64
    private let built = Mutex<LogIndex?>(nil)

    init(storage: any Storage, logDirectory: String, lastSeq: UInt64) {
        self.storage = storage
        self.logDirectory = logDirectory
        self.lastSeq = lastSeq
    }

    /// One scan (no chain) of the records up to `lastSeq`; they were checked by open.
    var index: LogIndex {
        built.withLock { built in
            if let built { return built }
            var index = LogIndex()
            if lastSeq > 0, let reader = try? LogReader(storage: storage, logDirectory: logDirectory) {
                while case .record(let record) = reader.next(), record.seq <= lastSeq {
                    index.addSegment(record.position.segment)
                    index.add(record.keys, offset: record.position.offset)
                }
            }
            built = index
            return index
        }
    }
}
