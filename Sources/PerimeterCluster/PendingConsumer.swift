import Foundation
import PerimeterNATS
import Synchronization

/// A pull consumer being created on a thread of its own, attempt after attempt, until one succeeds or
/// the caller no longer wants it: the worker's loop takes it when it is there and never waits for it.
///
/// On nats-server 2.9, an ephemeral consumer of a replicated stream is placed on one of the stream's
/// servers chosen at random, dead or alive, and a creation placed on a dead server is never answered
/// (docs/cluster.md, "Recovery after a NATS server dies"): while a server is down, about one creation
/// in three waits out its timeout, and the next attempt is placed anew. Waiting for that in the loop
/// held up every other partition, and a graceful stop behind them.
final class PendingConsumer<Consumer: Sendable>: @unchecked Sendable {
    private struct State {
        var consumer: Consumer?
        var cancelled = false
        var attempts = 0
        var lastError: (any Error)?
    }

    private let state = Mutex(State())
    private let close: @Sendable (Consumer) -> Void

    /// Starts creating: `attempt` is called on a new thread until it returns a consumer or ``cancel()``
    /// is called, pausing `pause` after each failure. `close` closes a consumer created after a cancel.
    /// `trace` gets a line for each failed attempt and for the success after failures.
    init(what: String, pause: Duration = .milliseconds(100), trace: (@Sendable (String) -> Void)?,
         attempt: @escaping @Sendable () throws -> Consumer, close: @escaping @Sendable (Consumer) -> Void) {
        self.close = close
        let started = ContinuousClock.now
        let thread = Thread { [self] in
            while !state.withLock({ $0.cancelled }) {
                let tried = ContinuousClock.now
                do {
                    let consumer = try attempt()
                    let (kept, failures) = state.withLock { state -> (Bool, Int) in
                        state.attempts += 1
                        if state.cancelled { return (false, state.attempts - 1) }
                        state.consumer = consumer
                        return (true, state.attempts - 1)
                    }
                    if !kept { close(consumer) }
                    if failures > 0 {
                        trace?("\(what): opened after \(failures) failed attempt\(failures == 1 ? "" : "s"), \(ClusterWorker.format(ContinuousClock.now - started)) in all")
                    }
                    return
                } catch {
                    state.withLock {
                        $0.attempts += 1
                        $0.lastError = error
                    }
                    trace?("\(what): opening failed after \(ClusterWorker.format(ContinuousClock.now - tried)): \(error)")
                    Thread.sleep(forTimeInterval: Double(pause.components.seconds) + Double(pause.components.attoseconds) / 1e18)
                }
            }
        }
        thread.name = "perimeter consumer: \(what)"
        thread.start()
    }

    /// The consumer, once created (then it is the caller's, and later calls answer `nil`).
    func take() -> Consumer? {
        state.withLock { state in
            defer { state.consumer = nil }
            return state.consumer
        }
    }

    /// Attempts made so far.
    var attempts: Int { state.withLock { $0.attempts } }

    /// The last attempt's failure, if any.
    var lastError: (any Error)? { state.withLock { $0.lastError } }

    /// No more attempts; a consumer created now or not yet taken is closed.
    func cancel() {
        let left = state.withLock { state -> Consumer? in
            state.cancelled = true
            defer { state.consumer = nil }
            return state.consumer
        }
        if let left { close(left) }
    }
}
