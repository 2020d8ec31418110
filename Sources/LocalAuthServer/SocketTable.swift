// The shell's client sockets by the core's Connection.ID. It is looked up
// twice per connection and turn (its epoll event, its `.send`), the hottest
// lookups the shell adds: a Dictionary's SipHash cost ~40 instructions each
// (callgrind, c=16 P=16, 2 Dec). The ids are the core's own, handed out in
// sequence (never a client's words), so the id itself is the hash: live ids
// rarely collide, and linear probing with backward-shift deletion keeps the
// table without tombstones.
import LocalAuthSystem

struct SocketTable {
    /// 0 = an empty slot (connection ids start at 16).
    private var ids: [UInt64]
    private var fds: [Int32]
    private var mask: Int
    private(set) var count = 0

    init(capacity: Int = 1024) {
        var size = 16
        while size < capacity { size <<= 1 }
        ids = Array(repeating: 0, count: size)
        fds = Array(repeating: -1, count: size)
        mask = size - 1
    }

    @inline(__always)
    subscript(id: UInt64) -> FileDescriptor? {
        var slot = Int(truncatingIfNeeded: id) & mask
        while true {
            let here = ids[slot]
            if here == id { return FileDescriptor(rawValue: fds[slot]) }
            if here == 0 { return nil }
            slot = (slot + 1) & mask
        }
    }

    mutating func insert(_ fd: FileDescriptor, for id: UInt64) {
        precondition(id != 0)
        if (count + 1) * 2 > ids.count { grow() }
        var slot = Int(truncatingIfNeeded: id) & mask
        while ids[slot] != 0 && ids[slot] != id { slot = (slot + 1) & mask }
        if ids[slot] == 0 { count += 1 }
        ids[slot] = id
        fds[slot] = fd.rawValue
    }

    /// Removes `id`'s socket and returns it (nil: not there).
    mutating func remove(_ id: UInt64) -> FileDescriptor? {
        var slot = Int(truncatingIfNeeded: id) & mask
        while ids[slot] != id {
            if ids[slot] == 0 { return nil }
            slot = (slot + 1) & mask
        }
        let fd = FileDescriptor(rawValue: fds[slot])
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
                fds[hole] = fds[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        ids[hole] = 0
        fds[hole] = -1
        return fd
    }

    /// Every socket, in no order.
    var all: [FileDescriptor] {
        var sockets: [FileDescriptor] = []
        for slot in ids.indices where ids[slot] != 0 { sockets.append(FileDescriptor(rawValue: fds[slot])) }
        return sockets
    }

    mutating func removeAll() {
        for slot in ids.indices {
            ids[slot] = 0
            fds[slot] = -1
        }
        count = 0
    }

    private mutating func grow() {
        let oldIDs = ids
        let oldFDs = fds
        ids = Array(repeating: 0, count: oldIDs.count * 2)
        fds = Array(repeating: -1, count: oldIDs.count * 2)
        mask = ids.count - 1
        count = 0
        for slot in oldIDs.indices where oldIDs[slot] != 0 {
            insert(FileDescriptor(rawValue: oldFDs[slot]), for: oldIDs[slot])
        }
    }
}
