import Foundation
import PerimeterNATS
import Synchronization

/// Renews a worker's leases on a timer of its own, so that a long step of one partition cannot let any
/// lease run out (docs/cluster.md, "Leases"): every ``interval`` it calls
/// ``PartitionLease/renewIfDue()`` on each lease it keeps, and then its `heartbeat` (the worker's
/// presence key).
///
/// A renewal that finds someone else's revision marks the lease lost at once; the partition's worker
/// sees it at its next check (``PartitionLease/isValid``, before and after each batch) and publishes
/// nothing more. Lost leases are dropped from the set. A renewal that fails because the cluster does
/// not answer is retried at the next interval; the lease stays trusted until ``PartitionLease/isValid``
/// turns false.
public final class LeaseRenewer: @unchecked Sendable {
    /// How often it wakes.
    public let interval: Duration
    private let heartbeat: (@Sendable () -> Void)?
    private let trace: (@Sendable (String) -> Void)?
    /// Partitions whose last renewal failed for want of an answer (traced when they come back).
    private let failing = Mutex<Set<Int>>([])
    private let state = Mutex<(leases: [Int: PartitionLease], running: Bool)>(([:], false))
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    /// A renewer that wakes every `interval` (a sixth of the lease time gives a lease two renewals
    /// before the third of its time that ``PartitionLease/renewIfDue()`` waits for has passed twice).
    /// `trace` receives a line for each renewal that failed, came back, or found the lease lost.
    public init(interval: Duration, heartbeat: (@Sendable () -> Void)? = nil, trace: (@Sendable (String) -> Void)? = nil) {
        self.interval = interval
        self.heartbeat = heartbeat
        self.trace = trace
    }

    /// Keeps `lease` renewed (replacing any lease of the same partition).
    public func add(_ lease: PartitionLease) {
        state.withLock { $0.leases[lease.partition] = lease }
    }

    /// Stops renewing `partition`'s lease.
    public func remove(_ partition: Int) {
        _ = state.withLock { $0.leases.removeValue(forKey: partition) }
    }

    /// The partitions whose leases it renews.
    public var partitions: [Int] { state.withLock { $0.leases.keys.sorted() } }

    /// Starts the timer thread (once).
    public func start() {
        let started = state.withLock { state -> Bool in
            defer { state.running = true }
            return !state.running
        }
        guard started else { return }
        let thread = Thread { [self] in
            while state.withLock({ $0.running }) {
                renewDue()
                heartbeat?()
                _ = wake.wait(timeout: .now() + .nanoseconds(Int(interval.nanosecondsClamped)))
            }
            done.signal()
        }
        thread.name = "perimeter lease renewer"
        thread.start()
    }

    /// Stops the timer thread and waits for it.
    public func stop() {
        let wasRunning = state.withLock { state -> Bool in
            defer { state.running = false }
            return state.running
        }
        guard wasRunning else { return }
        wake.signal()
        done.wait()
    }

    /// One pass over the leases (what the timer does each interval).
    public func renewDue() {
        for lease in state.withLock({ Array($0.leases.values) }) {
            let started = ContinuousClock.now
            do {
                _ = try lease.renewIfDue()
                if failing.withLock({ $0.remove(lease.partition) }) != nil {
                    trace?("partition \(lease.partition): renewal answered again (\(lease.isLost ? "lost" : "held"))")
                }
            } catch {
                failing.withLock { _ = $0.insert(lease.partition) }
                trace?("partition \(lease.partition): renewal failed after \(ClusterWorker.format(ContinuousClock.now - started)), valid: \(lease.isValid): \(error)")
            }
            if lease.isLost {
                trace?("partition \(lease.partition): lease lost")
                state.withLock { state in
                    if state.leases[lease.partition] === lease { state.leases.removeValue(forKey: lease.partition) }
                }
            }
        }
    }
}

extension Duration {
    /// The duration in nanoseconds, clamped to `Int64`.
    var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? (seconds < 0 ? .min : .max) : product &+ attoseconds / 1_000_000_000
    }
}
