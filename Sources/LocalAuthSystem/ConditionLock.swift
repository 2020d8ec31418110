// A pthread mutex with condition variables and the state they guard. The
// log's writer needs to *wait* (the sync thread for work, `waitDurable`
// callers for the durable seq), which Synchronization.Mutex cannot do.
// `state` is read and written only between `lock()` and `unlock()`; it is a
// stored property of a class (never an inout held across `wait`), so every
// access after a wait reloads it. Inlinable: the log takes it once per
// appended record, and the calls then cost what the pthread calls do.

import Glibc

public final class ConditionLock<State>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let conditions: UnsafeMutablePointer<pthread_cond_t>
    private let conditionCount: Int
    /// Guarded by the lock.
    public var state: State

    public init(_ state: State, conditions count: Int) {
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

    @inlinable public func lock() { pthread_mutex_lock(mutex) }
    @inlinable public func unlock() { pthread_mutex_unlock(mutex) }

    @inlinable
    public func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Waits on condition `index`; the lock must be held.
    @inlinable public func wait(_ index: Int) { pthread_cond_wait(conditions + index, mutex) }
    @inlinable public func signal(_ index: Int) { pthread_cond_signal(conditions + index) }
    @inlinable public func broadcast(_ index: Int) { pthread_cond_broadcast(conditions + index) }
}
