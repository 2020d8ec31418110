// The passwd name of a uid, which fprintd wants (Claim, ListEnrolledFingers).
// getpwuid_r may ask NSS (LDAP, sssd) and take seconds, so it runs on a
// thread of its own, never on the event loop; the answer comes back through
// an eventfd (EventLoop.Token.sensorNames) and is cached for the daemon's life
// (a uid's name changing under a running daemon is not supported).
//
// A plain pthread, not a Dispatch queue: a lookup blocks in NSS for as long
// as NSS takes without holding one of libdispatch's few workers.
import Glibc
import LocalAuthCore
import LocalAuthSystem
import Synchronization

final class UserNames {
    /// Posted by the thread when answers wait for the loop.
    let wake: EventFD
    private let shared: Shared
    private var cache: [UserID: String] = [:]
    private var waiting: [UserID: [(String?) -> Void]] = [:]

    init() throws {
        wake = try EventFD()
        shared = Shared(wake: wake, requestsReady: try EventFD())
        var handle = pthread_t()
        let started = pthread_create(&handle, nil, { argument in
            Unmanaged<Shared>.fromOpaque(argument!).takeRetainedValue().run()
            return nil
        }, Unmanaged.passRetained(shared).toOpaque())
        guard started == 0 else { throw SystemError(call: "pthread_create", errno: started) }
        pthread_detach(handle)
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
        shared.requests.withLock { $0.append(uid) }
        try? shared.requestsReady.post()
    }

    /// On the loop, when `wake` is readable: runs the waiting callbacks.
    func deliver() {
        _ = try? wake.drain()
        let answers = shared.answers.withLock { answers in
            defer { answers.removeAll() }
            return answers
        }
        for (uid, name) in answers {
            if let name { cache[uid] = name }
            for done in waiting.removeValue(forKey: uid) ?? [] { done(name) }
        }
    }
}

/// What the loop and the lookup thread share.
private final class Shared: Sendable {
    let wake: EventFD
    let requestsReady: EventFD
    let requests = Mutex<[UserID]>([])
    let answers = Mutex<[(UserID, String?)]>([])

    init(wake: EventFD, requestsReady: EventFD) {
        self.wake = wake
        self.requestsReady = requestsReady
    }

    /// The thread: waits for requests, looks each up, posts the answers.
    func run() {
        var descriptor = pollfd(fd: requestsReady.fileDescriptor.rawValue, events: Int16(POLLIN), revents: 0)
        while true {
            _ = poll(&descriptor, 1, -1)
            _ = try? requestsReady.drain()
            let batch = requests.withLock { requests in
                defer { requests.removeAll() }
                return requests
            }
            guard !batch.isEmpty else { continue }
            let found = batch.map { uid in (uid, (try? Accounts.user(uid: uid))??.name) }
            answers.withLock { $0.append(contentsOf: found) }
            try? wake.post()
        }
    }
}
