// A table keyed by the core's Connection.ID: the core's connections and the
// shell's sockets. Each is looked up once or twice per connection and turn
// (a read's bytes, a `.send`, the epoll event), the hottest lookups of the
// loop: a Dictionary's SipHash cost ~40 instructions each (callgrind, c=16
// P=1 and P=16, 2 Dec: the core's two added ~90 per request at P=1). The
// ids are the core's own, handed out in sequence from 16 (never a client's
// words), so the id itself is the hash: live ids rarely collide, and linear
// probing with backward-shift deletion keeps the table without tombstones.
struct ConnectionTable<Value> {
    /// 0 = an empty slot (connection ids start at 16).
    private var ids: [UInt64]
    private var slots: [Value?]
    private var mask: Int
    private(set) var count = 0

    init(capacity: Int = 1024) {
        var size = 16
        while size < capacity { size <<= 1 }
        ids = Array(repeating: 0, count: size)
        slots = Array(repeating: nil, count: size)
        mask = size - 1
    }

    /// The value of `id`; setting nil removes it. Modified in place
    /// (`table[id]?.field = x` copies nothing): the core's connections are
    /// values, and a copy out and back of one would copy its output buffer
    /// on the next append.
    subscript(id: UInt64) -> Value? {
        // A plain getter, inlined, whose callers read a field or two: a
        // `_read` coroutine here was not inlined and copied the whole
        // connection out on every look-up (its value witness: callgrind,
        // c=16 P=1, +10,000 instructions per request).
        @inline(__always) get {
            let slot = self.slot(of: id)
            return slot < 0 ? nil : slots[slot]
        }
        @inline(__always) _modify {
            let slot = self.slot(of: id)
            if slot >= 0 {
                yield &slots[slot]
                if case .none = slots[slot] { remove(id) }
            } else {
                var added: Value?
                yield &added
                if let added { insert(added, for: id) }
            }
        }
    }

    /// Where `id` is, or -1 (0, an empty slot's mark, is never there: a
    /// passcode job whose requester is gone carries it).
    @inline(__always)
    private func slot(of id: UInt64) -> Int {
        var slot = Int(truncatingIfNeeded: id) & mask
        while true {
            let here = ids[slot]
            if here == id { return id == 0 ? -1 : slot }
            if here == 0 { return -1 }
            slot = (slot + 1) & mask
        }
    }

    func contains(_ id: UInt64) -> Bool { slot(of: id) >= 0 }

    /// `body` on `id`'s value in place (nil: not there). For a class that
    /// holds the table (the core), the access lasts for `body`: it must not
    /// touch the table again (exclusivity), so keep it to a few fields.
    @inline(__always)
    mutating func withValue<R>(_ id: UInt64, _ body: (inout Value) throws -> R) rethrows -> R? {
        let slot = self.slot(of: id)
        guard slot >= 0 else { return nil }
        return try body(&slots[slot]!)
    }

    mutating func insert(_ value: Value, for id: UInt64) {
        precondition(id != 0)
        if (count + 1) * 2 > ids.count { grow() }
        var slot = Int(truncatingIfNeeded: id) & mask
        while ids[slot] != 0 && ids[slot] != id { slot = (slot + 1) & mask }
        if ids[slot] == 0 { count += 1 }
        ids[slot] = id
        slots[slot] = value
    }

    /// Removes `id`'s value and returns it (nil: not there).
    @discardableResult
    mutating func remove(_ id: UInt64) -> Value? {
        guard id != 0 else { return nil }
        var slot = Int(truncatingIfNeeded: id) & mask
        while ids[slot] != id {
            if ids[slot] == 0 { return nil }
            slot = (slot + 1) & mask
        }
        let value = slots[slot]
        count -= 1
        // Backward shift: later entries of the run move into the hole when
        // their home slot is not between the hole and them.
        var hole = slot
        var next = (hole + 1) & mask
        while ids[next] != 0 {
            let home = Int(truncatingIfNeeded: ids[next]) & mask
            let between = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if !between {
                ids[hole] = ids[next]
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        ids[hole] = 0
        slots[hole] = nil
        return value
    }

    /// Every value, in slot order (a copy: the loop may close connections
    /// while it walks them).
    var values: [Value] {
        var all: [Value] = []
        all.reserveCapacity(count)
        for slot in ids.indices where ids[slot] != 0 { all.append(slots[slot]!) }
        return all
    }

    /// Every id, in slot order.
    var keys: [UInt64] { ids.filter { $0 != 0 } }

    /// Slots allocated (at least twice the count).
    var capacity: Int { ids.count }

    mutating func removeAll() {
        for slot in ids.indices {
            ids[slot] = 0
            slots[slot] = nil
        }
        count = 0
    }

    /// A copy whose size fits its count (after many connections closed).
    func resizedToFit() -> ConnectionTable {
        var copy = ConnectionTable(capacity: max(1024, count * 2))
        for slot in ids.indices where ids[slot] != 0 { copy.insert(slots[slot]!, for: ids[slot]) }
        return copy
    }

    private mutating func grow() {
        let oldIDs = ids
        let oldSlots = slots
        ids = Array(repeating: 0, count: oldIDs.count * 2)
        slots = Array(repeating: nil, count: oldIDs.count * 2)
        mask = ids.count - 1
        count = 0
        for slot in oldIDs.indices where oldIDs[slot] != 0 { insert(oldSlots[slot]!, for: oldIDs[slot]) }
    }
}
