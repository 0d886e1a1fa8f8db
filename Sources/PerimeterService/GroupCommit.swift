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
/// Callers that must not block (a server thread that serves many connections) register a completion
/// instead with ``whenStored(_:commit:then:)``: a committer thread of this object's own, started when
/// needed, commits for them, and a commit covers every completion registered while the one before it
/// ran, however many there are. Callers that work in rounds (event loops) register completions without
/// a committer (`commit: nil`) and settle them at the end of each round with ``commitWaiting(_:)``, which
/// never waits for another thread's commit: that commit, if it ends with such completions still waiting,
/// calls the *nudge* (``setNudge(_:)``) so that their owners come back.
///
/// - Complexity: O(1) besides the commit itself; waiting callers sleep on a condition variable;
///   completions are called in ticket order.
final class GroupCommit: @unchecked Sendable {
    // @unchecked: every `var` is only touched with `condition`'s lock held.
    private let condition = NSCondition()
    /// Whether a committer is working now.
    private var committing = false
    /// Every batch numbered below this is stored.
    private var durable: UInt64 = 0
    /// Completions waiting for their batch, in ticket order.
    private var waiters: [Waiter] = []
    /// Whether the committer thread runs.
    private var committerRuns = false

    /// A completion waiting for batch `ticket`.
    private struct Waiter {
        var ticket: UInt64
        var completion: @Sendable (GeofencingError?) -> Void
        /// Whether a caller of ``commitWaiting(_:)`` commits for it (rather than the committer thread).
        var byCaller: Bool
    }
    /// Called when a commit ends while completions without a committer wait (see ``setNudge(_:)``).
    private var nudge: (@Sendable () -> Void)?

    /// What a commit run did.
    struct Outcome {
        /// The batches below this are stored now (`nil` when the commit failed).
        var durableBelow: UInt64?
        /// The failure, if the commit failed.
        var error: GeofencingError?
        /// When the commit failed: the last batch whose changes it tried to store (their changes are
        /// pending again, for the next commit).
        var attemptedThrough: UInt64?

        /// The waiters whose ticket is below this are settled by the commit: stored, or after a
        /// failure given its error.
        var settledBelow: UInt64 { durableBelow ?? attemptedThrough.map { $0 &+ 1 } ?? .max }
    }

    /// How long the committer thread waits for more work before it ends (a later completion starts a
    /// new one).
    let committerLinger: TimeInterval
    /// Times the committer thread went round its loop (commits, waits, idle checks): for tests, which
    /// check that a waiting committer sleeps instead of spinning.
    private var committerRounds = 0

    init(committerLinger: TimeInterval = 1) {
        self.committerLinger = committerLinger
    }

    /// The committer thread's state: whether it runs, and how many rounds it went.
    var committerState: (isRunning: Bool, rounds: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (committerRuns, committerRounds)
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

    /// Runs `body` as the committer (after the one at work, if any), for a call that changes state and
    /// commits it in one hold of the service lock (the in-memory store's processing:
    /// ``GeofencingService/processCommittingInPlace(_:simulated:store:)``); `body` returns what its commit
    /// did, `nil` when it made none.
    func commitAlongside<Result, Failure: Error>(_ body: () throws(Failure) -> (Result, Outcome?)) throws(Failure)
        -> (Result, Outcome?) {
        condition.lock()
        while committing { condition.wait() }
        committing = true
        condition.unlock()
        var durableBelow: UInt64?
        defer { finish(durableBelow) }
        let (result, outcome) = try body()
        durableBelow = outcome?.durableBelow
        return (result, outcome)
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

    /// Calls `completion` once batch `ticket` is stored (with `nil`) or a commit that tried to store it
    /// failed (with its error; the changes stay pending for the next commit). Returns at once: the
    /// completion runs on this object's committer thread, or on the calling thread when the batch is
    /// already stored. Completions run in ticket order and must not block.
    ///
    /// `commit` is what ``commit(through:_:)`` runs; the committer thread runs it until no completion waits.
    ///
    /// With `commit` `nil` no thread is started: the completion waits for a caller of
    /// ``commitWaiting(_:)`` (or the committer thread, if one runs for other completions).
    func whenStored(_ ticket: UInt64, commit: (@Sendable () -> Outcome)?,
                    then completion: @escaping @Sendable (GeofencingError?) -> Void) {
        condition.lock()
        if durable > ticket {
            condition.unlock()
            completion(nil)
            return
        }
        // Tickets only grow, but two callers may register out of order; keep the list sorted.
        var index = waiters.endIndex
        while index > waiters.startIndex && waiters[index - 1].ticket > ticket { index -= 1 }
        waiters.insert(Waiter(ticket: ticket, completion: completion, byCaller: commit == nil), at: index)
        guard let commit else {
            condition.unlock()
            return
        }
        let start = !committerRuns
        committerRuns = true
        condition.broadcast()
        condition.unlock()
        if start {
            let thread = Thread { [self] in runCommitter(commit) }
            thread.name = "perimeter-commit"
            thread.start()
        }
    }

    /// Commits every pending change and calls the completions that are then due, on the calling thread,
    /// in ticket order — unless another commit is at work, in which case it returns at once: that commit
    /// ends by calling ``nudge`` if completions registered without a committer still wait, so that their
    /// owner calls again. For threads that register completions during a round of work and settle them
    /// at its end, without ever waiting for each other (event loops). A commit that fails completes the
    /// calls it covered with its error (their changes stay pending).
    /// - Returns: how many completions were called.
    @discardableResult
    func commitWaiting(_ commit: () -> Outcome) -> Int {
        condition.lock()
        guard !committing, !waiters.isEmpty else {
            condition.unlock()
            return 0
        }
        committing = true
        condition.unlock()
        let outcome = commit()
        let done = finish(outcome.durableBelow, takingWaitersBelow: outcome.settledBelow)
        for waiter in done { waiter.completion(outcome.error) }
        return done.count
    }

    /// Called when a commit ends while completions registered without a committer (by callers of
    /// ``commitWaiting(_:)``) still wait; set once, before such completions are registered.
    func setNudge(_ nudge: (@Sendable () -> Void)?) {
        condition.lock()
        self.nudge = nudge
        condition.unlock()
    }

    /// The committer thread: commits while completions wait, ends after ``committerLinger`` idle seconds.
    private func runCommitter(_ commit: @Sendable () -> Outcome) {
        condition.lock()
        var idleSince = Date()
        while true {
            committerRounds += 1
            if waiters.isEmpty {
                // Idle: end after the linger time (a new completion starts a new thread), whatever
                // another thread's commit is doing. Never a wait with a past deadline: no spinning.
                let deadline = idleSince.addingTimeInterval(committerLinger)
                if Date() >= deadline {
                    committerRuns = false
                    condition.unlock()
                    return
                }
                _ = condition.wait(until: deadline)
                continue
            }
            if committing {
                // Another thread's commit runs; its end (`finish`) wakes this thread.
                condition.wait()
                continue
            }
            let done: [Waiter]
            var error: GeofencingError?
            if waiters[0].ticket < durable {
                // Stored by a commit another thread ran: no commit needed for these.
                done = takeWaiters(below: durable)
            } else {
                committing = true
                condition.unlock()
                let outcome = commit()
                // A failed commit completes the waiters whose changes it tried to store, with its error.
                done = finish(outcome.durableBelow, takingWaitersBelow: outcome.settledBelow)
                error = outcome.error
                condition.lock()
            }
            condition.unlock()
            for waiter in done { waiter.completion(error) }
            condition.lock()
            idleSince = Date()
        }
    }

    /// Removes and returns the waiters whose ticket is below `limit`. Call with the lock held.
    private func takeWaiters(below limit: UInt64) -> [Waiter] {
        let count = waiters.prefix { $0.ticket < limit }.count
        guard count > 0 else { return [] }
        let done = Array(waiters[..<count])
        waiters.removeFirst(count)
        return done
    }

    /// Ends a commit: publishes how far the store is durable and wakes waiting callers; then, outside the
    /// lock, nudges the owners of completions that wait without a committer.
    /// - Returns: the waiters below `limit`, taken (the caller completes them); none without a limit.
    @discardableResult
    private func finish(_ durableBelow: UInt64?, takingWaitersBelow limit: UInt64? = nil) -> [Waiter] {
        condition.lock()
        committing = false
        if let durableBelow, durableBelow > durable { durable = durableBelow }
        let done = limit.map(takeWaiters(below:)) ?? []
        let nudge = waiters.contains(where: \.byCaller) ? self.nudge : nil
        condition.broadcast()
        condition.unlock()
        nudge?()
        return done
    }
}
