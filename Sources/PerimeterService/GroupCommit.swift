#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Serialises the service's store commits and lets concurrent callers share them (group commit).
///
/// Changes accumulate in numbered *batches* under the service lock (``ServiceCore/batch``). A caller
/// that needs its changes stored holds a *ticket*, the number of the batch its changes went into, and
/// calls ``commit(through:_:)``. One caller at a time is the committer: it takes every pending change
/// out under the service lock (closing the batch), writes them to the store **without** the service
/// lock, and publishes how far the store is durable. Meanwhile other callers keep processing; those that
/// need a commit wait here, and the next committer stores all of their changes in one transaction. The
/// batch grows with the load by itself: no timer, no spinning, and no commit while the service lock is
/// held (the log-writer pattern of database group commit). The service's committer yields the
/// processor once before it takes the changes (``GeofencingService/commit(through:)``).
///
/// - Complexity: O(1) besides the commit itself; waiting callers sleep on a condition variable.
final class GroupCommit: @unchecked Sendable {
    // @unchecked: `committing` and `durable` are only touched with `mutex` held.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    /// Whether a committer is working now.
    private var committing = false
    /// Every batch numbered below this is stored.
    private var durable: UInt64 = 0

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// What a commit run did.
    struct Outcome {
        /// The batches below this are stored now (`nil` when the commit failed).
        var durableBelow: UInt64?
        /// The failure, if the commit failed.
        var error: GeofencingError?
    }

    /// Returns once batch `ticket` is stored: at once if an earlier commit (by any thread) stored it,
    /// after waiting for the committer at work if that one stores it, or after running `commit` as
    /// the committer.
    ///
    /// `commit` takes every pending change, stores it and reports the batches now stored. When it
    /// fails it must put the changes back, so that the next committer retries them; each waiting
    /// caller whose batch is then still not stored becomes a committer in turn (and gets its own error
    /// if the store keeps failing).
    /// - Returns: the error of a commit this call ran, if it failed.
    func commit(through ticket: UInt64, _ commit: () -> Outcome) -> GeofencingError? {
        pthread_mutex_lock(mutex)
        while durable <= ticket && committing { pthread_cond_wait(condition, mutex) }
        if durable > ticket {
            pthread_mutex_unlock(mutex)
            return nil
        }
        committing = true
        pthread_mutex_unlock(mutex)
        let outcome = commit()
        finish(outcome.durableBelow)
        return outcome.error
    }

    /// Runs `body` as the only committer (waiting for the one at work): for closing the service.
    func exclusively<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        while committing { pthread_cond_wait(condition, mutex) }
        committing = true
        pthread_mutex_unlock(mutex)
        defer { finish(nil) }
        return try body()
    }

    private func finish(_ durableBelow: UInt64?) {
        pthread_mutex_lock(mutex)
        committing = false
        if let durableBelow, durableBelow > durable { durable = durableBelow }
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }
}
