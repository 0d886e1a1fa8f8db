import Foundation
import PerimeterNATS
import Synchronization

/// A pull consumer being created off the caller's thread, attempt after attempt, until one succeeds or
/// the caller no longer wants it: the worker's loop takes it when it is there and never waits for it.
///
/// On nats-server 2.9, an ephemeral consumer of a replicated stream is placed on one of the stream's
/// servers chosen at random, dead or alive, and a creation placed on a dead server is never answered
/// (docs/cluster.md, "Recovery after a NATS server dies"): while a server is down, about one creation
/// in three waits out its timeout, and the next attempt is placed anew. So attempts overlap: while one
/// waits for its answer, another starts every ``hedge`` (at most ``maxInFlight`` at once); the first
/// consumer created is kept and any later one closed. When the cluster is well the first attempt
/// answers in milliseconds and it is the only one.
final class PendingConsumer<Consumer: Sendable>: @unchecked Sendable {
    private struct State {
        var consumer: Consumer?
        var created = false
        var cancelled = false
        var inFlight = 0
        var attempts = 0
        var lastError: (any Error)?
    }

    /// How long an attempt runs alone before another starts beside it.
    static var hedge: Duration { .milliseconds(500) }
    /// The most attempts waiting at once.
    static var maxInFlight: Int { 3 }

    private let state = Mutex(State())
    private let changed = DispatchSemaphore(value: 0)
    private let close: @Sendable (Consumer) -> Void
    private let what: String
    private let trace: (@Sendable (String) -> Void)?

    /// Starts creating: `attempt` is called on threads of its own until one returns a consumer or
    /// ``cancel()`` is called. `close` closes a consumer that is not kept. `trace` gets a line for each
    /// failed attempt and for the success after failures.
    init(what: String, trace: (@Sendable (String) -> Void)?, attempt: @escaping @Sendable () throws -> Consumer,
         close: @escaping @Sendable (Consumer) -> Void) {
        self.close = close
        self.what = what
        self.trace = trace
        let started = ContinuousClock.now
        let supervisor = Thread { [self] in
            while true {
                // nil: done; true: start an attempt; false: enough attempts are waiting.
                let start = state.withLock { state -> Bool? in
                    guard !state.created, !state.cancelled else { return nil }
                    guard state.inFlight < PendingConsumer.maxInFlight else { return false }
                    state.inFlight += 1
                    state.attempts += 1
                    return true
                }
                guard let start else { return }
                if start {
                    launch(attempt, started: started)
                    // Not faster than this, even when attempts fail at once (no leader yet).
                    Thread.sleep(forTimeInterval: 0.1)
                }
                // Woken by an attempt's end, or after the hedge: then another attempt starts.
                _ = changed.wait(timeout: .now() + .milliseconds(Int(PendingConsumer.hedge.components.seconds * 1000
                                                                      + PendingConsumer.hedge.components.attoseconds / 1_000_000_000_000_000)))
            }
        }
        supervisor.name = "perimeter consumer: \(what)"
        supervisor.start()
    }

    private func launch(_ attempt: @escaping @Sendable () throws -> Consumer, started: ContinuousClock.Instant) {
        let thread = Thread { [self] in
            let tried = ContinuousClock.now
            do {
                let consumer = try attempt()
                let (kept, failures) = state.withLock { state -> (Bool, Int) in
                    state.inFlight -= 1
                    guard !state.created, !state.cancelled else { return (false, 0) }
                    state.created = true
                    state.consumer = consumer
                    return (true, state.attempts - state.inFlight - 1)
                }
                if !kept { close(consumer) }
                if kept && failures > 0 {
                    trace?("\(what): opened after \(failures) failed attempt\(failures == 1 ? "" : "s"), \(ClusterWorker.format(ContinuousClock.now - started)) in all")
                }
            } catch {
                state.withLock {
                    $0.inFlight -= 1
                    $0.lastError = error
                }
                trace?("\(what): opening failed after \(ClusterWorker.format(ContinuousClock.now - tried)): \(error)")
            }
            changed.signal()
        }
        thread.start()
    }

    /// The consumer, once created (then it is the caller's, and later calls answer `nil`).
    func take() -> Consumer? {
        state.withLock { state in
            defer { state.consumer = nil }
            return state.consumer
        }
    }

    /// Waits at most `timeout` for the consumer and takes it; `nil` when none was created in time (the
    /// attempts go on: ``take()`` later, or ``cancel()``).
    func wait(upTo timeout: Duration) -> Consumer? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let consumer = take() { return consumer }
            if ContinuousClock.now >= deadline || state.withLock({ $0.cancelled || $0.created }) { return take() }
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    /// Creates a consumer with overlapping attempts (see the type), waiting at most `timeout`.
    /// - Throws: the last attempt's ``PerimeterNATS/NATSError`` (or a timeout) when none was created in
    ///   time; the attempts are then cancelled.
    static func create(what: String, timeout: Duration, trace: (@Sendable (String) -> Void)?,
                       attempt: @escaping @Sendable () throws -> Consumer,
                       close: @escaping @Sendable (Consumer) -> Void) throws(NATSError) -> Consumer {
        let pending = PendingConsumer(what: what, trace: trace, attempt: attempt, close: close)
        if let consumer = pending.wait(upTo: timeout) { return consumer }
        pending.cancel()
        if let consumer = pending.take() { return consumer }
        throw (pending.lastError as? NATSError) ?? NATSError.timeout(what, "no consumer created within \(timeout)")
    }

    /// Closes `consumer` on another thread and returns at once. Closing an ephemeral consumer asks the
    /// server to delete it and waits for the answer (libnats' unsubscribe, up to the 5 s request
    /// timeout): when the consumer's server is dead nobody answers, and the worker's loop, or a stop,
    /// would wait that out for every consumer it replaces.
    static func closeInBackground(_ consumer: Consumer, _ close: @escaping @Sendable (Consumer) -> Void) {
        DispatchQueue.global(qos: .utility).async { close(consumer) }
    }

    /// Attempts started so far.
    var attempts: Int { state.withLock { $0.attempts } }

    /// The last failed attempt's error, if any.
    var lastError: (any Error)? { state.withLock { $0.lastError } }

    /// No more attempts; a consumer created now or not yet taken is closed.
    func cancel() {
        let left = state.withLock { state -> Consumer? in
            state.cancelled = true
            defer { state.consumer = nil }
            return state.consumer
        }
        if let left { PendingConsumer.closeInBackground(left, close) }
        changed.signal()
    }
}
