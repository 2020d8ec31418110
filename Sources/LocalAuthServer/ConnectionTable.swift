// A table keyed by the core's Connection.ID: the core's connections and the
// shell's sockets. Each is looked up a few times per request (a read's
// bytes, a line, a reply, a `.send`, the epoll event), the hottest lookups
// of the loop: a Dictionary's SipHash cost ~40 instructions each (callgrind,
// c=16 P=1 and P=16, 2 Dec: the core's two added ~90 per request at P=1).
// The ids are the core's own, handed out in sequence from 64 (never a
// client's words), so the id itself is the hash: live ids rarely collide,
// and linear probing with backward-shift deletion keeps the table without
// tombstones.
//
// A class over manually allocated storage, not a struct of two arrays: the
// core's connections are values changed in place many times per request,
// and through arrays each change paid a uniqueness check and bounds checks
// (callgrind, c=16 P=1: ~20 look-ups, +540 instructions per request); a
// `_read` accessor was not inlined and copied the whole connection out at
// each look-up (+10,000). One owner holds each table (the core, the shell)
// in a `let` (a class-typed `var` is retained around every call on it);
// nobody copies it (`resizedToFit` makes a new one, `shrinkToFit` shrinks
// it in place).
package final class ConnectionTable<Value> {
    /// 0 = an empty slot (connection ids start at 64).
    private var ids: UnsafeMutablePointer<UInt64>
    /// `slots[i]` is initialised exactly while `ids[i] != 0` (no Optional
    /// to test at each look-up: its tag check cost ~9 instructions a time).
    private var slots: UnsafeMutablePointer<Value>
    private var size: Int
    private var mask: Int
    private(set) var count = 0
    #if DEBUG
    /// Inside `withValue`: the table must not change under it (a removal
    /// shifts values). Debug builds check it; release builds trust it.
    private var lent = false
    #endif

    init(capacity: Int = 1024) {
        var size = 16
        while size < capacity { size <<= 1 }
        self.size = size
        mask = size - 1
        ids = .allocate(capacity: size)
        ids.initialize(repeating: 0, count: size)
        slots = .allocate(capacity: size)
    }

    deinit {
        for slot in 0..<size where ids[slot] != 0 { (slots + slot).deinitialize(count: 1) }
        slots.deallocate()
        ids.deallocate()
    }

    /// The value of `id` (a copy: read a field, `table[id]?.field`);
    /// setting nil removes it; `table[id]?.field = x` changes it in place.
    package subscript(id: UInt64) -> Value? {
        @inline(__always) get {
            let slot = self.slot(of: id)
            return slot < 0 ? nil : slots[slot]
        }
        _modify {
            let slot = self.slot(of: id)
            if slot >= 0 {
                // Moved out and back (no retain, no copy of its buffers).
                var value: Value? = (slots + slot).move()
                defer {
                    if let value {
                        (slots + slot).initialize(to: value)
                    } else {
                        count -= 1
                        closeHole(at: slot)
                    }
                }
                yield &value
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

    /// `body` on `id`'s value in place (nil: not there), no copy. `body`
    /// must not touch the table (debug builds trap if it inserts or removes).
    @inline(__always)
    func withValue<R>(_ id: UInt64, _ body: (inout Value) throws -> R) rethrows -> R? {
        let slot = self.slot(of: id)
        guard slot >= 0 else { return nil }
        #if DEBUG
        precondition(!lent, "ConnectionTable: withValue inside withValue")
        lent = true
        defer { lent = false }
        #endif
        return try body(&slots[slot])
    }

    func insert(_ value: Value, for id: UInt64) {
        precondition(id != 0)
        checkNotLent()
        if (count + 1) * 2 > size { grow() }
        var slot = Int(truncatingIfNeeded: id) & mask
        while ids[slot] != 0 && ids[slot] != id { slot = (slot + 1) & mask }
        if ids[slot] == 0 {
            count += 1
            ids[slot] = id
            (slots + slot).initialize(to: value)
        } else {
            slots[slot] = value
        }
    }

    /// Removes `id`'s value and returns it (nil: not there).
    @discardableResult
    func remove(_ id: UInt64) -> Value? {
        let slot = self.slot(of: id)
        guard slot >= 0 else { return nil }
        checkNotLent()
        let value = (slots + slot).move()
        count -= 1
        closeHole(at: slot)
        return value
    }

    /// `slot` was emptied (its value moved out): backward shift, later
    /// entries of the run move into the hole when their home slot is not
    /// between the hole and them.
    private func closeHole(at slot: Int) {
        var hole = slot
        var next = (hole + 1) & mask
        while ids[next] != 0 {
            let home = Int(truncatingIfNeeded: ids[next]) & mask
            let between = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if !between {
                ids[hole] = ids[next]
                (slots + hole).moveInitialize(from: slots + next, count: 1)
                hole = next
            }
            next = (next + 1) & mask
        }
        ids[hole] = 0
    }

    @inline(__always)
    private func checkNotLent() {
        #if DEBUG
        precondition(!lent, "ConnectionTable: changed inside withValue")
        #endif
    }

    /// Every value, in slot order (a copy: the loop may close connections
    /// while it walks them).
    var values: [Value] {
        var all: [Value] = []
        all.reserveCapacity(count)
        for slot in 0..<size where ids[slot] != 0 { all.append(slots[slot]) }
        return all
    }

    /// Every id, in slot order.
    var keys: [UInt64] {
        var all: [UInt64] = []
        all.reserveCapacity(count)
        for slot in 0..<size where ids[slot] != 0 { all.append(ids[slot]) }
        return all
    }

    /// Slots allocated (at least twice the count).
    var capacity: Int { size }

    func removeAll() {
        checkNotLent()
        for slot in 0..<size where ids[slot] != 0 {
            (slots + slot).deinitialize(count: 1)
            ids[slot] = 0
        }
        count = 0
    }

    /// A new table whose size fits the count (after many connections closed).
    func resizedToFit() -> ConnectionTable {
        let copy = ConnectionTable(capacity: max(1024, count * 2))
        for slot in 0..<size where ids[slot] != 0 { copy.insert(slots[slot], for: ids[slot]) }
        return copy
    }

    /// The same, in place: the owner keeps the table in a `let` (a `var`
    /// of class type is retained around every call on it, twice per
    /// request on the hot path).
    func shrinkToFit() {
        checkNotLent()
        var fit = 16
        while fit < max(1024, count * 2) { fit <<= 1 }
        if fit < size { rehash(into: fit) }
    }

    private func grow() { rehash(into: size * 2) }

    private func rehash(into newSize: Int) {
        let oldIDs = ids, oldSlots = slots, oldSize = size
        size = newSize
        mask = size - 1
        ids = .allocate(capacity: size)
        ids.initialize(repeating: 0, count: size)
        slots = .allocate(capacity: size)
        count = 0
        for slot in 0..<oldSize where oldIDs[slot] != 0 { insert((oldSlots + slot).move(), for: oldIDs[slot]) }
        oldSlots.deallocate()
        oldIDs.deallocate()
    }
}
