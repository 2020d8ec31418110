// Who watches which user's state (`watch`, PROTOCOL.md v1.1), for
// LAEnvironment's observers. A watch is one (connection, uid) pair with the
// tag its STATE lines carry and the state it last sent, so a watcher is told
// each change once, and a new watcher gets the current state at once without
// others hearing it twice. The table is empty unless someone watches, and
// the authenticator only notes the users in it (`Authenticator.watched`), so
// watching costs nothing on the hot path while nobody watches.
import LocalAuthCore

/// The fields of a STATE line; a change of any of them is sent.
struct WatchedState: Equatable {
    var biometry: BiometryType
    var enrolled: Int
    var passcodeSet: Bool
    var lockedOut: Bool
    /// "" while nothing is enrolled.
    var domainState: String
    /// S-62: the reader cannot be reached (the lid is closed).
    var sensorInaccessible: Bool

    init(_ state: AuthState, _ uid: UserID, sensorInaccessible: Bool = false) {
        self.sensorInaccessible = sensorInaccessible
        let user = state.user(uid)
        biometry = state.rules.biometryType
        enrolled = user.templates.count
        passcodeSet = user.passcodeSet
        lockedOut = user.biometryLockedOut
        domainState = user.templates.isEmpty ? "" : user.domainState.description
    }
}

struct WatchTable {
    /// At most this many watched uids per connection (`limit-exceeded`).
    static let maximumPerConnection = 16

    struct Watcher {
        /// The watching connection (gone from the core's table = closed).
        let connection: Connection.ID
        var tag: String
        var lastSent: WatchedState?
    }

    private(set) var byUser: [UserID: [Watcher]] = [:]
    private var perConnection: [Connection.ID: Set<UserID>] = [:]

    var isEmpty: Bool { byUser.isEmpty }

    func count(of connection: Connection.ID) -> Int { perConnection[connection]?.count ?? 0 }

    func isWatching(_ connection: Connection.ID, _ uid: UserID) -> Bool {
        perConnection[connection]?.contains(uid) ?? false
    }

    /// Adds the watch, or gives an existing one its new tag (it is then told
    /// the state again, as a new watch would be).
    mutating func add(_ connection: Connection.ID, _ uid: UserID, tag: String) {
        var watchers = byUser[uid] ?? []
        watchers.removeAll { $0.connection == connection }
        watchers.append(Watcher(connection: connection, tag: tag, lastSent: nil))
        byUser[uid] = watchers
        perConnection[connection, default: []].insert(uid)
    }

    /// Removes one watch; true when nobody watches `uid` any more.
    @discardableResult
    mutating func remove(_ connection: Connection.ID, _ uid: UserID) -> Bool {
        guard perConnection[connection]?.remove(uid) != nil else { return byUser[uid] == nil }
        if perConnection[connection]?.isEmpty == true { perConnection[connection] = nil }
        byUser[uid]?.removeAll { $0.connection == connection }
        if byUser[uid]?.isEmpty == true {
            byUser[uid] = nil
            return true
        }
        return false
    }

    /// Removes every watch of a closed connection; returns the uids nobody watches any more.
    mutating func drop(_ connection: Connection.ID) -> [UserID] {
        guard let uids = perConnection[connection] else { return [] }
        return uids.filter { remove(connection, $0) }
    }

    /// Records what was sent to `connection`'s watch of `uid` (by
    /// connection, not index: judging a watcher may end another watch).
    mutating func sent(_ state: WatchedState, uid: UserID, connection: Connection.ID) {
        guard let index = byUser[uid]?.firstIndex(where: { $0.connection == connection }) else { return }
        byUser[uid]?[index].lastSent = state
    }
}
