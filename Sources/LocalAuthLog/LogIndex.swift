// In-memory indexes from record keys to record positions: each context's
// records (its own stream) and each user's records, so reading one history is
// a few seeks, not a scan. Rebuilt on open (after a `.sealed` open: on first
// use, `LazyIndex`) from the keys outside the payloads,
// updated on append. A position is packed in one UInt64:
// segment ordinal (24 bits) << 40 | byte offset in the segment (40 bits).

import LocalAuthCore

struct LogIndex: Sendable {
    private(set) var byContext: [ContextID: [UInt64]] = [:]
    private(set) var byUser: [UserID: [UInt64]] = [:]
    /// Segment first seqs by ordinal (ordinal = index in this array).
    private(set) var segments: [UInt64] = []

    mutating func addSegment(_ firstSeq: UInt64) {
        if segments.last != firstSeq { segments.append(firstSeq) }
    }

    mutating func add(_ keys: RecordKeys, offset: Int) {
        guard keys.uid != nil || keys.context != nil else { return }
        let packed = UInt64(segments.count - 1) << 40 | UInt64(offset)
        if let context = keys.context { byContext[context, default: []].append(packed) }
        if let uid = keys.uid { byUser[uid, default: []].append(packed) }
    }

    func positions(context: ContextID) -> [LogPosition] { unpack(byContext[context] ?? []) }
    func positions(uid: UserID) -> [LogPosition] { unpack(byUser[uid] ?? []) }

    private func unpack(_ packed: [UInt64]) -> [LogPosition] {
        packed.map { LogPosition(segment: segments[Int($0 >> 40)], offset: Int($0 & (1 << 40 - 1))) }
    }
}
