#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a ``ServiceLock`` guards: told whenever the lock is taken, before the caller's body runs.
protocol LockedValue {
    /// Called with the lock held at the start of every ``ServiceLock/withLock(_:)``, not of
    /// ``ServiceLock/withLockAsIs(_:)``.
    mutating func lockTaken()
}

/// A value guarded by a plain `pthread_mutex_t`: the service's lock.
///
/// Why not `Synchronization.Mutex`: on Linux its slow path spins on the CPU before it sleeps on a
/// priority-inheritance futex. The service lock is held for whole batches, so on a machine with few
/// cores the waiters' spinning took the CPU the holder needed (a quarter of a loaded server's time,
/// measured with `perf`). A default glibc mutex sleeps at once and wakes one waiter. Store commits run
/// outside this lock (``GroupCommit``).
final class ServiceLock<Value: LockedValue>: @unchecked Sendable {
    // @unchecked: `value` is only touched between `pthread_mutex_lock` and `pthread_mutex_unlock`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// Guards `value`.
    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value, after the value's ``LockedValue/lockTaken()``.
    /// - Complexity: O(1) besides `lockTaken` and `body`; blocks (without spinning) while another thread
    ///   holds the lock.
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        value.lockTaken()
        return try body(&value)
    }

    /// Runs `body` with exclusive access to the value, without ``LockedValue/lockTaken()``: for a body
    /// that does itself what `lockTaken` would (see ``ServiceCore/lockTaken()``).
    func withLockAsIs<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
