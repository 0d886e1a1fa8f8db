import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterNATS
import Synchronization

/// A worker process's core: takes free partitions (up to a maximum), runs a ``PartitionWorker`` for
/// each — input, events, the owner's clock, snapshots — and drops a partition the moment its lease is
/// lost (docs/cluster.md, "The parts").
///
/// Each ``runOnce()`` round: tries to take free partitions while it owns fewer than the maximum (from
/// their latest snapshot), then for every owned partition: one step, a tick when the tick interval has
/// passed, a snapshot when enough input was applied since the last. ``start()`` runs rounds on a
/// thread of its own until ``stop(releasing:)``.
///
/// Not yet here (docs/cluster.md, "Still to build"): balancing partitions across workers — a worker
/// takes any free partition, so the first one started holds up to its maximum.
public final class ClusterWorker: @unchecked Sendable {
    /// How a worker behaves.
    public struct Configuration: Sendable {
        /// The worker's id (the value of the lease keys it holds).
        public var id: String
        /// The lease time (the leases bucket's TTL).
        public var leaseDuration: Duration
        /// The most partitions it holds.
        public var maxPartitions: Int
        /// The input records one step of one partition applies at most.
        public var batchSize: Int
        /// How often each partition's clock ticks.
        public var tickInterval: Duration
        /// *L* of the live-service rules: a tick advances to now − L and holds the devices heard from
        /// within L.
        public var allowedLateness: Duration
        /// A snapshot after this many input records.
        public var snapshotEvery: Int
        /// The engine's configuration.
        public var engine: DetectionEngine.Configuration
        /// The fences when there is no fences bucket.
        public var fences: [Fence]

        /// A configuration with the given id and the defaults: 10 s leases, 64 partitions, batches of
        /// 1000, ticks every 0.25 s, L = 5 s, a snapshot every 10 000 records.
        public init(id: String, leaseDuration: Duration = .seconds(10), maxPartitions: Int = 64, batchSize: Int = 1000,
                    tickInterval: Duration = .milliseconds(250), allowedLateness: Duration = .seconds(5), snapshotEvery: Int = 10_000,
                    engine: DetectionEngine.Configuration = DetectionEngine.Configuration(), fences: [Fence] = []) {
            self.id = id
            self.leaseDuration = leaseDuration
            self.maxPartitions = maxPartitions
            self.batchSize = batchSize
            self.tickInterval = tickInterval
            self.allowedLateness = allowedLateness
            self.snapshotEvery = snapshotEvery
            self.engine = engine
            self.fences = fences
        }
    }

    private struct Owned {
        var worker: PartitionWorker
        var lastTick: ContinuousClock.Instant
        var recordsSinceSnapshot: Int
        /// A copy of the worker's statistics, taken after each round (read from other threads).
        var statistics = PartitionWorker.Statistics()
    }

    /// The configuration.
    public let configuration: Configuration
    private let jetStream: JetStream
    private let layout: ClusterLayout
    private let leases: KeyValueBucket
    private let snapshots: SnapshotStore
    private let fenceBucket: KeyValueBucket?
    private let clock: @Sendable () -> Date
    private let state = Mutex<(owned: [Int: Owned], running: Bool, thread: Thread?)>(([:], false, nil))
    private let done = DispatchSemaphore(value: 0)

    /// A worker on `jetStream` for `layout`'s partitions. `clock` is "now" for ticks (the system clock;
    /// a fixed one in tests).
    public init(jetStream: JetStream, layout: ClusterLayout, leases: KeyValueBucket, snapshots: SnapshotStore,
                fenceBucket: KeyValueBucket? = nil, configuration: Configuration,
                clock: @escaping @Sendable () -> Date = { Date() }) {
        self.jetStream = jetStream
        self.layout = layout
        self.leases = leases
        self.snapshots = snapshots
        self.fenceBucket = fenceBucket
        self.configuration = configuration
        self.clock = clock
    }

    /// The partitions it owns now.
    public var ownedPartitions: [Int] { state.withLock { $0.owned.keys.sorted() } }

    /// Statistics of the partitions it owns now, as of the end of their last round.
    public var statistics: [Int: PartitionWorker.Statistics] {
        state.withLock { $0.owned.mapValues(\.statistics) }
    }

    /// One round (see the type's description). - Returns: the input records applied.
    @discardableResult
    public func runOnce() throws -> Int {
        try acquire()
        var applied = 0
        for partition in ownedPartitions {
            guard var owned = state.withLock({ $0.owned[partition] }) else { continue }
            let before = owned.worker.inputSequence
            let step = try owned.worker.step(maxMessages: configuration.batchSize, wait: .milliseconds(20))
            if step == .leaseLost {
                _ = state.withLock { $0.owned.removeValue(forKey: partition) }
                continue
            }
            let count = Int(owned.worker.inputSequence - before)
            applied += count
            owned.recordsSinceSnapshot += count
            if ContinuousClock.now - owned.lastTick >= configuration.tickInterval {
                let now = clock()
                let lateness = Double(configuration.allowedLateness.components.seconds)
                    + Double(configuration.allowedLateness.components.attoseconds) / 1e18
                // Devices whose updates this worker applied within L are left to their own updates.
                let held = owned.worker.recentlyHeard(within: lateness, now: now)
                if try !owned.worker.tick(to: now.addingTimeInterval(-lateness), holding: held) {
                    _ = state.withLock { $0.owned.removeValue(forKey: partition) }
                    continue
                }
                owned.lastTick = .now
            }
            if owned.recordsSinceSnapshot >= configuration.snapshotEvery {
                if try !owned.worker.saveSnapshot(to: snapshots) {
                    _ = state.withLock { $0.owned.removeValue(forKey: partition) }
                    continue
                }
                owned.recordsSinceSnapshot = 0
            }
            owned.statistics = owned.worker.statistics
            state.withLock { $0.owned[partition] = owned }
        }
        return applied
    }

    /// Runs rounds on a thread of its own until ``stop(releasing:)``; a round that fails is retried
    /// after a short pause (the cluster may be electing a leader).
    public func start() {
        let thread = Thread { [self] in
            while state.withLock({ $0.running }) {
                do {
                    try runOnce()
                } catch {
                    usleep(100_000)
                }
            }
            // The thread holds this block, which holds the worker: dropping the worker's reference to
            // the thread ends that cycle, so a stopped worker and its connections are freed.
            state.withLock { $0.thread = nil }
            done.signal()
        }
        thread.name = "perimeter cluster worker \(configuration.id)"
        state.withLock {
            $0.running = true
            $0.thread = thread
        }
        thread.start()
    }

    /// Stops the rounds; with `releasing`, saves a snapshot of each partition and releases its lease
    /// so another worker takes over at once (a graceful shutdown); without, the partitions are simply
    /// abandoned, as by a crash, and the leases expire.
    public func stop(releasing: Bool) {
        let wasRunning = state.withLock { state -> Bool in
            defer { state.running = false }
            return state.running
        }
        if wasRunning { done.wait() }
        let owned = state.withLock { state -> [Owned] in
            defer { state.owned.removeAll() }
            return Array(state.owned.values)
        }
        for partition in owned {
            if releasing { _ = try? partition.worker.saveSnapshot(to: snapshots) }
            partition.worker.stop(releasing: releasing)
        }
    }

    private func acquire() throws {
        let owned = Set(ownedPartitions)
        guard owned.count < configuration.maxPartitions else { return }
        for partition in 0..<layout.partitioning.count where !owned.contains(partition) {
            guard ownedPartitions.count < configuration.maxPartitions else { return }
            guard let lease = try PartitionLease.acquire(in: leases, partition: partition, owner: configuration.id,
                                                         duration: configuration.leaseDuration) else { continue }
            do {
                let worker = try PartitionWorker.resume(jetStream: jetStream, layout: layout, lease: lease, snapshots: snapshots,
                                                        configuration: configuration.engine, fences: configuration.fences,
                                                        fenceBucket: fenceBucket)
                state.withLock { $0.owned[partition] = Owned(worker: worker, lastTick: .now, recordsSinceSnapshot: 0) }
            } catch {
                try? lease.release()
                throw error
            }
        }
    }
}
