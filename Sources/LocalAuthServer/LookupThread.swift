// A thread of its own for NSS lookups (getgrnam, getgrouplist: LDAP or sssd
// may take seconds), never the event loop: the loop posts queries, the
// thread answers them in order, and an eventfd wakes the loop to collect the
// answers. A plain pthread, not a Dispatch queue: a lookup blocks in NSS for
// as long as NSS takes without holding one of libdispatch's few workers.
// UserNames (fprintd's passwd names) runs on one too, with its cache.
import Glibc
import LocalAuthSystem
import Synchronization

final class LookupThread<Query: Sendable, Answer: Sendable> {
    /// Posted by the thread when answers wait for the loop.
    let wake: EventFD
    private let shared: LookupQueue<Query, Answer>

    /// Starts the thread; `lookup` runs on it, one query at a time.
    init(_ lookup: @escaping @Sendable (Query) -> Answer) throws {
        wake = try EventFD()
        shared = LookupQueue(wake: wake, requestsReady: try EventFD(), lookup: lookup)
        var handle = pthread_t()
        let started = pthread_create(&handle, nil, { argument in
            Unmanaged<LookupRunner>.fromOpaque(argument!).takeRetainedValue().run()
            return nil
        }, Unmanaged<LookupRunner>.passRetained(shared).toOpaque())
        guard started == 0 else { throw SystemError(call: "pthread_create", errno: started) }
        pthread_detach(handle)
    }

    /// Queues `query` for the thread.
    func ask(_ query: Query) {
        shared.requests.withLock { $0.append(query) }
        try? shared.requestsReady.post()
    }

    /// On the loop, when `wake` is readable: the answers so far, in order.
    func collect() -> [(Query, Answer)] {
        _ = try? wake.drain()
        return shared.answers.withLock { answers in
            defer { answers.removeAll() }
            return answers
        }
    }
}

/// The thread's entry point (a C function cannot name a generic type).
class LookupRunner: @unchecked Sendable {
    func run() {}
}

/// What the loop and the lookup thread share.
private final class LookupQueue<Query: Sendable, Answer: Sendable>: LookupRunner, @unchecked Sendable {
    let wake: EventFD
    let requestsReady: EventFD
    let lookup: @Sendable (Query) -> Answer
    let requests = Mutex<[Query]>([])
    let answers = Mutex<[(Query, Answer)]>([])

    init(wake: EventFD, requestsReady: EventFD, lookup: @escaping @Sendable (Query) -> Answer) {
        self.wake = wake
        self.requestsReady = requestsReady
        self.lookup = lookup
    }

    /// Waits for queries, answers each, posts the answers.
    override func run() {
        var descriptor = pollfd(fd: requestsReady.fileDescriptor.rawValue, events: Int16(POLLIN), revents: 0)
        while true {
            _ = poll(&descriptor, 1, -1)
            _ = try? requestsReady.drain()
            let batch = requests.withLock { requests in
                defer { requests.removeAll() }
                return requests
            }
            for query in batch {
                let answer = lookup(query)
                answers.withLock { $0.append((query, answer)) }
                try? wake.post()
            }
        }
    }
}
