// The passwd name of a uid, which fprintd wants (Claim, ListEnrolledFingers).
// getpwuid_r may ask NSS (LDAP, sssd) and take seconds, so it runs on a
// thread of its own, never on the event loop; the answer comes back through
// an eventfd (EventLoop.Token.sensorNames) and is cached for the daemon's life
// (a uid's name changing under a running daemon is not supported).
//
// The thread is a LookupThread (the same one the AdminGroup lookups use);
// this adds the cache and the callbacks waiting for each uid.
import LocalAuthCore
import LocalAuthSystem

final class UserNames {
    /// Posted by the thread when answers wait for the loop.
    var wake: EventFD { thread.wake }
    private let thread: LookupThread<UserID, String?>
    private var cache: [UserID: String] = [:]
    private var waiting: [UserID: [(String?) -> Void]] = [:]

    init() throws {
        thread = try LookupThread { uid in (try? Accounts.user(uid: uid))??.name }
    }

    /// Calls `done` on the loop with the name (nil: no such user), at once
    /// when cached, else after the lookup.
    func resolve(_ uid: UserID, _ done: @escaping (String?) -> Void) {
        if let name = cache[uid] { return done(name) }
        if waiting[uid] != nil {
            waiting[uid]!.append(done)
            return
        }
        waiting[uid] = [done]
        thread.ask(uid)
    }

    /// On the loop, when `wake` is readable: runs the waiting callbacks.
    func deliver() {
        for (uid, name) in thread.collect() {
            if let name { cache[uid] = name }
            for done in waiting.removeValue(forKey: uid) ?? [] { done(name) }
        }
    }
}
