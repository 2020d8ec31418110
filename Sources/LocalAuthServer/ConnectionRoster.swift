// Who is connected, as the core counts them, a value with no I/O: the ids
// it hands out, each uid's open connections (MaxConnections,
// MaxConnectionsPerUser), the D-Bus API's callers (S-70), the connection
// that owns each context, and the connections whose fd epoll watches for
// writability. It answers an admission (an id, or a refusal) and the
// `.watch` actions; each connection's own state (its splitter, output,
// contexts) is a `Connection` in the core's ConnectionTable, and the
// sockets are the shell's.
import LocalAuthCore

struct ConnectionRoster {
    /// 64 on: the shell's epoll tokens below 64 are its own fds (EventLoop.Token).
    private var nextID: Connection.ID = 64
    /// Open connections per principal (S-53; one with none has no entry).
    private(set) var perUser: [UserID: Int] = [:]
    /// The D-Bus API's callers, apart from `Connection` so that socket
    /// connections carry nothing of them; empty without the bus.
    private var busPeers: [Connection.ID: BusPeer] = [:]
    /// The connection that created each live context.
    private var owners: [ContextID: Connection.ID] = [:]
    /// Connections whose fd epoll watches for writability (output that did
    /// not fit in the socket).
    private var watchingWritable: Set<Connection.ID> = []

    // MARK: - Admission

    /// A client of principal `uid` (S-53) connects while `open` connections
    /// are: its id, or nil when MaxConnections or MaxConnectionsPerUser
    /// refuses it (the last slots are kept for those who `mayUseReserve`).
    mutating func admit(_ uid: UserID, bus: BusPeer?, open: Int, maxConnections: Int, maxPerUser: Int,
                        mayUseReserve: Bool) -> Connection.ID? {
        guard ConnectionAdmission.admits(open: open, openOfPrincipal: perUser[uid, default: 0], maxConnections: maxConnections,
                                         maxPerPrincipal: maxPerUser, mayUseReserve: mayUseReserve) else { return nil }
        let id = nextID
        nextID += 1
        if let bus { busPeers[id] = bus }
        perUser[uid, default: 0] += 1
        return id
    }

    /// The connection of `uid` is forgotten.
    mutating func closed(_ id: Connection.ID, uid: UserID) {
        if !busPeers.isEmpty { busPeers[id] = nil }
        watchingWritable.remove(id)
        perUser[uid, default: 1] -= 1
        if perUser[uid] == 0 { perUser[uid] = nil }
    }

    /// S-73: the bus name and app of a D-Bus API caller; nil for a socket's.
    func busPeer(of id: Connection.ID) -> BusPeer? { busPeers.isEmpty ? nil : busPeers[id] }

    // MARK: - Contexts' owners

    func owner(of ctx: ContextID) -> Connection.ID? { owners[ctx] }
    mutating func own(_ ctx: ContextID, by id: Connection.ID) { owners[ctx] = id }
    mutating func disown(_ ctx: ContextID) { owners[ctx] = nil }
    /// Every context ended at once (the log reopened, shutdown).
    mutating func disownAll() { owners.removeAll() }

    /// The owners' table at its present size, after a wave of closes (MemoryRelease.swift).
    mutating func compactOwners() {
        if owners.capacity > 4 * max(owners.count, 64) { owners = owners.resizedToFit() }
    }

    // MARK: - Epoll's interest

    /// The interest in `id`'s fd, its writability as it was.
    func watch(_ id: Connection.ID, reading: Bool) -> ServerAction {
        .watch(id, reading: reading, writing: watchingWritable.contains(id))
    }

    /// The interest in `id`'s fd, writability as asked.
    mutating func watch(_ id: Connection.ID, reading: Bool, writing: Bool) -> ServerAction {
        if writing { watchingWritable.insert(id) } else { watchingWritable.remove(id) }
        return .watch(id, reading: reading, writing: writing)
    }

    /// After a write: the new interest when whether output waits changed, else nil.
    mutating func writability(_ id: Connection.ID, unsent: Bool, reading: Bool) -> ServerAction? {
        let watching = !watchingWritable.isEmpty && watchingWritable.contains(id)
        guard unsent != watching else { return nil }
        return watch(id, reading: reading, writing: unsent)
    }
}
