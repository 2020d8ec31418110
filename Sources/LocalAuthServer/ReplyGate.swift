// S-40's reply gate, the one place that decides where output goes: a
// failure's outcome never leaves the daemon before the failure is durable.
// The barrier is the seq of the newest event that must be durable before
// output produced after it is revealed (the Authenticator names it,
// `EventBody.isDurableBeforeReply`). While the log is not durable through
// the barrier, every byte for a connection and every journal entry is held
// here, in order, each behind the barrier of its time; `durable(through:)`
// releases exactly what S covers; a log that fails drops it all (it will
// never be durable, fail closed). Pure: no socket, no clock, no journal —
// the server writes what the gate hands back.
package struct ReplyGate<JournalEntry> {
    package typealias ConnectionID = UInt64

    /// Every event with seq <= durable is on disk, as last learned.
    private(set) var durable: UInt64 = 0
    /// The log failed: nothing held will ever be released (until a new gate
    /// comes with a reopened log).
    private(set) var failed = false
    /// Output held per connection, and the order in which connections
    /// started holding (release walks it, so the order is deterministic;
    /// ids of forgotten connections are skipped and pruned there).
    private var held: [ConnectionID: HeldOutput] = [:]
    private var order: [ConnectionID] = []
    /// Journal entries held, in order, each with the seq it waits for.
    private var journal: [(seq: UInt64, entry: JournalEntry)] = []

    /// One connection's held output in one buffer (no allocation per held
    /// line); `marks` says up to which byte each seq holds.
    struct HeldOutput {
        var bytes: [UInt8] = []
        var marks: [(seq: UInt64, end: Int)] = []
    }

    /// Whether output produced now must wait: the barrier is not durable
    /// yet (after a log failure nothing waits: what would is dropped).
    @inline(__always)
    mutating func isShut(barrier: UInt64, durable current: () -> UInt64) -> Bool {
        !failed && isPending(barrier, durable: current)
    }

    /// Whether the log is not durable through `barrier`. `current` (the
    /// log's durable seq) is asked only then: durable only grows, so once
    /// it covered the barrier it still does, and the common answer costs a
    /// compare.
    @inline(__always)
    private mutating func isPending(_ barrier: UInt64, durable current: () -> UInt64) -> Bool {
        if barrier <= durable { return false }
        let now = current()
        if now > durable { durable = now }
        return barrier > durable
    }

    /// Whether bytes produced now for `id` may go straight to its output:
    /// the gate is open and nothing of `id` is held (bytes queue behind
    /// held ones, in order).
    @inline(__always)
    mutating func admits(_ id: ConnectionID, barrier: UInt64, durable current: () -> UInt64) -> Bool {
        if isShut(barrier: barrier, durable: current) { return false }
        return held.isEmpty || held[id] == nil
    }

    /// Holds bytes for `id` that `admits` refused: behind the barrier if it
    /// is not durable, and behind what `id` already holds.
    mutating func hold(_ bytes: [UInt8], for id: ConnectionID, barrier: UInt64) {
        let wait = barrier > durable ? barrier : 0
        if held[id] == nil { order.append(id) }
        held[id, default: HeldOutput()].append(bytes, wait: wait)
    }

    /// A journal entry to write now, or nil when it is held (behind the
    /// barrier, or behind entries held before it: the journal keeps the
    /// order of events).
    mutating func journal(_ entry: JournalEntry, barrier: UInt64, durable current: () -> UInt64) -> JournalEntry? {
        let pending = isPending(barrier, durable: current)
        // After a log failure an entry behind an undurable barrier is dropped.
        if failed { return pending ? nil : entry }
        // Never before one held earlier, even if the log caught up meanwhile.
        let seq = max(pending ? barrier : 0, journal.last?.seq ?? 0)
        if journal.isEmpty && seq <= durable { return entry }
        journal.append((seq, entry))
        return nil
    }

    /// The log is durable through `seq`: hands out, in order, the journal
    /// entries and each connection's bytes that `seq` covers.
    mutating func durable(through seq: UInt64, journal write: (JournalEntry) -> Void,
                          release: (ConnectionID, ArraySlice<UInt8>) -> Void) {
        if seq > durable { durable = seq }
        guard !failed else { return }
        if !journal.isEmpty {
            var taken = 0
            while taken < journal.count, journal[taken].seq <= durable {
                write(journal[taken].entry)
                taken += 1
            }
            journal.removeFirst(taken)
        }
        guard !order.isEmpty else { return }
        // Compacted in place: the connections still holding stay in order.
        var kept = 0
        for index in order.indices {
            let id = order[index]
            guard var output = held[id] else { continue }  // forgotten
            let released = output.release(through: durable)
            if !released.isEmpty { release(id, released) }
            if output.marks.isEmpty {
                held[id] = nil
            } else {
                held[id] = output
                order[kept] = id
                kept += 1
            }
        }
        order.removeLast(order.count - kept)
    }

    /// The log failed: what is held will never be durable and is dropped
    /// unsent, and from now on nothing is held (the daemon refuses every
    /// request that needs the log). Returns the connections that lost held
    /// output, in the order they started holding.
    mutating func logFailed() -> [ConnectionID] {
        failed = true
        let lost = order.filter { held[$0] != nil }
        held.removeAll()
        order.removeAll()
        journal.removeAll()
        return lost
    }

    /// Drops what `id` holds (it closed, or its output is being discarded).
    mutating func forget(_ id: ConnectionID) {
        guard !held.isEmpty else { return }
        held[id] = nil
    }

    func isHolding(_ id: ConnectionID) -> Bool { !held.isEmpty && held[id] != nil }

    package func heldByteCount(_ id: ConnectionID) -> Int { held.isEmpty ? 0 : held[id]?.bytes.count ?? 0 }

    /// Nothing is held (the usual end of a turn: nothing to release).
    var isEmpty: Bool { journal.isEmpty && order.isEmpty }
    package var heldJournalEntries: Int { journal.count }
}

extension ReplyGate.HeldOutput {
    /// Appends bytes that wait for `wait` (0: only for what is held before them).
    mutating func append(_ more: [UInt8], wait: UInt64) {
        let seq = max(wait, marks.last?.seq ?? 0)
        bytes.append(contentsOf: more)
        if let last = marks.indices.last, marks[last].seq == seq {
            marks[last].end = bytes.count
        } else {
            marks.append((seq, bytes.count))
        }
    }

    /// Removes and returns the bytes whose seq is <= `durable`.
    mutating func release(through durable: UInt64) -> ArraySlice<UInt8> {
        var released = 0
        var end = 0
        for mark in marks {
            guard mark.seq <= durable else { break }
            end = mark.end
            released += 1
        }
        guard released > 0 else { return [] }
        let out = bytes[..<end]
        if released == marks.count {
            bytes = []
            marks = []
        } else {
            bytes.removeFirst(end)
            marks.removeFirst(released)
            for index in marks.indices { marks[index].end -= end }
        }
        return out
    }
}
