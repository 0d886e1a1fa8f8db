import Foundation

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
    // @unchecked: `committing` and `durable` are only touched with `condition`'s lock held.
    private let condition = NSCondition()
    /// Whether a committer is working now.
    private var committing = false
    /// Every batch numbered below this is stored.
    private var durable: UInt64 = 0

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
        condition.lock()
        while durable <= ticket && committing { condition.wait() }
        if durable > ticket {
            condition.unlock()
            return nil
        }
        committing = true
        condition.unlock()
        let outcome = commit()
        finish(outcome.durableBelow)
        return outcome.error
    }

    /// Runs `body` as the only committer (waiting for the one at work): for closing the service.
    func exclusively<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        condition.lock()
        while committing { condition.wait() }
        committing = true
        condition.unlock()
        defer { finish(nil) }
        return try body()
    }

    private func finish(_ durableBelow: UInt64?) {
        condition.lock()
        committing = false
        if let durableBelow, durableBelow > durable { durable = durableBelow }
        condition.broadcast()
        condition.unlock()
    }
}
