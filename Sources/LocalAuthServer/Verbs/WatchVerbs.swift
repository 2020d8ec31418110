// watch, cancel-watch (PROTOCOL.md v1.1): LAEnvironment's observers. A
// watch answers OK, then sends `TAG STATE uid=N biometry=T enrolled=N
// passcode-set=B locked-out=B domain-state=HEX|""` at once and again at the
// end of every loop turn in which an event changed one of those fields
// (enrollment, lockout, passcode set or cleared, reset, rules reloaded);
// changes within one turn arrive as one line with the final state. STATE
// lines go through the server's send path, so a line that reveals a
// failure's effect (locked-out=true after a no-match) waits for that
// failure's fsync like any reply (S-40). Another uid needs an administrator,
// judged again for each line and once a second (S-56, WatchRights.swift).
import LocalAuthCore
import LocalAuthProtocol

extension ServerCore {
    func watch(_ request: Request, _ connection: Connection.ID) {
        guard let uid = targetUID(request, connection) else { return }
        if !watches.isWatching(connection, uid), watches.count(of: connection) >= WatchTable.maximumPerConnection {
            return reply(connection, request.tag, ProtocolError(.limitExceeded,
                "A connection may watch at most \(WatchTable.maximumPerConnection) users."))
        }
        watches.add(connection, uid, tag: request.tag)
        authenticator.watched.insert(uid)
        replyOK(connection, request.tag)
        sendWatchedStates(uid)
    }

    func cancelWatch(_ request: Request, _ connection: Connection.ID) {
        guard let uid = targetUID(request, connection) else { return }
        if watches.remove(connection, uid) { authenticator.watched.remove(uid) }
        replyOK(connection, request.tag)
    }

    /// End of a loop turn: tells the watchers of each user an event touched.
    func notifyWatchers() {
        guard !authenticator.touched.isEmpty else { return }
        for uid in authenticator.takeTouched() { sendWatchedStates(uid) }
    }

    /// A closed connection's watches end with it.
    func forgetWatches(of connection: Connection.ID) {
        for uid in watches.drop(connection) { authenticator.watched.remove(uid) }
    }

    /// Sends the user's state to each of its watchers that has not seen it
    /// and may hear it (S-56: another uid's watcher is judged again).
    func sendWatchedStates(_ uid: UserID) {
        guard let watchers = watches.byUser[uid] else { return }
        let state = WatchedState(authenticator.state, uid,
                                 sensorInaccessible: whereabouts.inaccessible(reader: sensor.readerName))
        for watcher in watchers where watcher.lastSent != state && connections[watcher.connection]?.isOpen == true {
            guard watchMayBeTold(watcher.connection, uid, tag: watcher.tag) else { continue }
            watches.sent(state, uid: uid, connection: watcher.connection)
            sendLine(to: watcher.connection) { line in
                line.beginResponse(tag: watcher.tag, status: .state)
                line.append(key: "uid", value: String(uid))
                line.append(key: "biometry", value: state.biometry.wireName)
                line.append(key: "enrolled", value: state.enrolled)
                line.append(key: "passcode-set", value: state.passcodeSet)
                line.append(key: "locked-out", value: state.lockedOut)
                line.append(key: "domain-state", value: state.domainState)
                // PROTOCOL.md 1.2, after v1.1's fields (S-62).
                line.append(key: "sensor-inaccessible", value: state.sensorInaccessible)
                line.endLine()
            }
        }
    }
}
