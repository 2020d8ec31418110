// A pthread mutex with condition variables and the state they guard. The
// writer needs to *wait* (the sync thread for work, `waitDurable` callers for
// the durable seq), which Synchronization.Mutex cannot do. `state` is read
// and written only between `lock()` and `unlock()`; it is a stored property
// of a class (never an inout held across `wait`), so every access after a
// wait reloads it.

import Glibc

final class ConditionLock<State>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let conditions: UnsafeMutablePointer<pthread_cond_t>
    private let conditionCount: Int
    /// Guarded by the lock.
    var state: State

    init(_ state: State, conditions count: Int) {
        self.state = state
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        conditionCount = count
        conditions = .allocate(capacity: count)
        for index in 0..<count { pthread_cond_init(conditions + index, nil) }
    }

    deinit {
        for index in 0..<conditionCount { pthread_cond_destroy(conditions + index) }
        pthread_mutex_destroy(mutex)
        conditions.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Waits on condition `index`; the lock must be held.
    func wait(_ index: Int) { pthread_cond_wait(conditions + index, mutex) }
    func signal(_ index: Int) { pthread_cond_signal(conditions + index) }
    func broadcast(_ index: Int) { pthread_cond_broadcast(conditions + index) }
}
