// S-56: a watch of another uid lasts only while its watcher is an
// administrator. `watch uid=N` was judged once, when asked (S-51), and
// then streamed N's state for as long as the connection lasted, after the
// watcher had left AdminGroup (issue 27 item 9). Now each STATE line for
// another uid is judged as an admin request is (AdminRights: the group
// answer stands for a few seconds), and so is every such watch once a
// second (AdminRights.refreshAge), so a membership that ended is noticed
// when its cached answer expires even while nothing changes. That timer
// runs only while someone watches another uid (S-82: an idle daemon does
// not wake). While the answer is being looked up, no line is sent; a
// watcher found not to be an administrator gets the watch's tag with
// `permission-denied`, and the watch ends.
import LocalAuthCore
import LocalAuthProtocol

extension ServerCore {
    /// Whether `connection` may hear `uid`'s state now: its own always;
    /// another's while it is an administrator. A watch that may not ends
    /// here (with its error line); `.unknown` holds the line back.
    func watchMayBeTold(_ connection: Connection.ID, _ uid: UserID, tag: String) -> Bool {
        guard peer(of: connection).uid != uid else { return true }
        switch adminVerdict(connection) {
        case .administrator: return true
        case .unknown: return false
        case .notAdministrator:
            endWatch(connection, uid, tag: tag)
            return false
        }
    }

    /// When the watches of other uids are next judged: a refresh age from
    /// now while there is one, none (no wakeup, S-82) while there is not.
    func watchRejudgeDeadline() -> UInt64? {
        if let known = deadlines.watchRejudge { return known }
        guard !watches.isEmpty, watches.byUser.contains(where: { uid, watchers in
            watchers.contains { peer(of: $0.connection).uid != uid }
        }) else { return nil }
        let at = turn.monotonic + AdminRights<ParkedRequest>.refreshAge
        deadlines.watchRejudge = at
        return at
    }

    /// At its deadline: every watch of another uid judged again; those still
    /// allowed are told what they missed while their answer was looked up.
    func rejudgeWatches() {
        guard !watches.isEmpty else { return }
        var watched: Set<UserID> = []
        for (uid, watchers) in watches.byUser {
            for watcher in watchers where peer(of: watcher.connection).uid != uid && connections[watcher.connection]?.isOpen == true {
                if watchMayBeTold(watcher.connection, uid, tag: watcher.tag) { watched.insert(uid) }
            }
        }
        for uid in watched { sendWatchedStates(uid) }
    }

    private func endWatch(_ connection: Connection.ID, _ uid: UserID, tag: String) {
        if watches.remove(connection, uid) { authenticator.watched.remove(uid) }
        counters.permissionDenied += 1
        reply(connection, tag, ProtocolError(.permissionDenied,
            "The watch of uid \(uid) ended: this caller is no longer an administrator (S-56)."))
    }
}
