// The passwd name of a uid, which fprintd wants (Claim, ListEnrolledFingers).
// getpwuid_r may ask NSS (LDAP, sssd) and take seconds, so it runs on a
// Dispatch queue, never on the event loop; the answer comes back through an
// eventfd (Server.Token.sensorNames) and is cached for the daemon's life
// (a uid's name changing under a running daemon is not supported).
import Dispatch
import LocalAuthCore
import LocalAuthSystem
import Synchronization

final class UserNames {
    let wake: EventFD
    private let queue = DispatchQueue(label: "localauthd.usernames")
    private let inbox = Inbox()
    private var cache: [UserID: String] = [:]
    private var waiting: [UserID: [(String?) -> Void]] = [:]

    init() throws { wake = try EventFD() }

    /// Calls `done` on the loop with the name (nil: no such user), at once
    /// when cached, else after the lookup.
    func resolve(_ uid: UserID, _ done: @escaping (String?) -> Void) {
        if let name = cache[uid] { return done(name) }
        if waiting[uid] != nil {
            waiting[uid]!.append(done)
            return
        }
        waiting[uid] = [done]
        queue.async { [inbox, wake] in
            let name = (try? Accounts.user(uid: uid))??.name
            inbox.answers.withLock { $0.append((uid, name)) }
            try? wake.post()
        }
    }

    /// On the loop, when `wake` is readable: runs the waiting callbacks.
    func deliver() {
        _ = try? wake.drain()
        let answers = inbox.answers.withLock { inbox in
            defer { inbox.removeAll() }
            return inbox
        }
        for (uid, name) in answers {
            if let name { cache[uid] = name }
            for done in waiting.removeValue(forKey: uid) ?? [] { done(name) }
        }
    }
}

/// The lookups' answers, handed from the queue to the loop.
private final class Inbox: Sendable {
    let answers = Mutex<[(UserID, String?)]>([])
}
