import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterNATS
import Synchronization

/// A worker process's core: holds the partitions the cluster's assignment gives it, runs a
/// ``PartitionWorker`` for each — input, events, the owner's clock, snapshots — and drops a partition the
/// moment its lease is lost (docs/cluster.md, "The parts").
///
/// Balancing: the worker announces itself with a presence key (``WorkerMembership``) and, every
/// ``Configuration/membershipInterval``, reads the live workers and computes the same
/// ``PartitionAssignment`` as every other worker. It takes only partitions assigned to it that are free,
/// and hands over (snapshot, then release) partitions assigned to another live worker, so workers that
/// join or leave move partitions without any coordinator. A crashed worker's presence key and leases
/// expire after the lease time; the others' assignment then gives its partitions to them.
///
/// Each ``runOnce()`` round: reads the membership when due, hands over partitions now assigned to
/// another worker, takes free partitions assigned to it (from their latest snapshot), then for every
/// owned partition: one step, a tick when the tick interval has passed, a snapshot when enough input
/// was applied since the last. A partition whose round fails does not hold up the others: a new input
/// consumer is created for it off the loop (``PartitionWorker/reopenInput()``), or, when its engine got
/// ahead of what it published, it gets a new worker from its latest snapshot under the same lease; a
/// partition idle for the lease time also gets a new input consumer (an ephemeral consumer dies with its
/// server, and then only looks idle). ``start()`` runs rounds on a thread of its own until
/// ``stop(releasing:)``, and a ``LeaseRenewer`` renews the leases and the presence key on a timer, so a
/// long round cannot let a lease run out.
public final class ClusterWorker: @unchecked Sendable {
    /// How a worker behaves.
    public struct Configuration: Sendable {
        /// The worker's id (the value of the lease keys it holds; unique in the cluster).
        public var id: String
        /// The lease time (the leases bucket's TTL).
        public var leaseDuration: Duration
        /// The most partitions it holds (announced, so the others' assignment respects it).
        public var maxPartitions: Int
        /// The input records one step of one partition applies at most.
        public var batchSize: Int
        /// How often each partition's clock ticks.
        public var tickInterval: Duration
        /// Whether a partition leaves out a tick that would change nothing
        /// (``PartitionWorker/tickUnlessIdle(to:holding:)``): a quiet partition then writes no ticks.
        public var leavesOutIdleTicks: Bool
        /// *L* of the live-service rules: a tick advances to now − L and holds the devices heard from
        /// within L.
        public var allowedLateness: Duration
        /// A snapshot after this many input records.
        public var snapshotEvery: Int
        /// How often it reads the live workers and recomputes the assignment.
        public var membershipInterval: Duration
        /// The engine's configuration.
        public var engine: DetectionEngine.Configuration
        /// The fences when there is no fences bucket.
        public var fences: [Fence]
        /// Where timing lines go — membership reads, acquisitions, slow or failed rounds, lease renewals
        /// that failed or came back (`perimeter worker` prints them when `PERIMETER_WORKER_TRACE=1`);
        /// `nil`: nowhere.
        public var trace: (@Sendable (String) -> Void)?
        /// Where lines about lost data go — input a partition needed that aged out of the input stream
        /// (``PartitionWorker/checkRetainedInput()``; `perimeter worker` prints them always); `nil`: nowhere.
        public var warning: (@Sendable (String) -> Void)?

        /// A configuration with the given id and the defaults: 10 s leases, 64 partitions, batches of
        /// 1000, ticks every 0.25 s (idle ones left out), L = 5 s, a snapshot every 10 000 records, the
        /// membership read every second.
        public init(id: String, leaseDuration: Duration = .seconds(10), maxPartitions: Int = 64, batchSize: Int = 1000,
                    tickInterval: Duration = .milliseconds(250), allowedLateness: Duration = .seconds(5), snapshotEvery: Int = 10_000,
                    membershipInterval: Duration = .seconds(1),
                    engine: DetectionEngine.Configuration = DetectionEngine.Configuration(), fences: [Fence] = [],
                    trace: (@Sendable (String) -> Void)? = nil, warning: (@Sendable (String) -> Void)? = nil,
                    leavesOutIdleTicks: Bool = true) {
            self.id = id
            self.leavesOutIdleTicks = leavesOutIdleTicks
            self.leaseDuration = leaseDuration
            self.maxPartitions = maxPartitions
            self.batchSize = batchSize
            self.tickInterval = tickInterval
            self.allowedLateness = allowedLateness
            self.snapshotEvery = snapshotEvery
            self.membershipInterval = membershipInterval
            self.engine = engine
            self.fences = fences
            self.trace = trace
            self.warning = warning
        }
    }

    private struct Owned {
        var worker: PartitionWorker
        var lastTick: ContinuousClock.Instant
        var recordsSinceSnapshot: Int
        /// Since when its steps found no input (nil: the last step applied some).
        var idleSince: ContinuousClock.Instant?
        /// A copy of the worker's statistics, taken after each round (read from other threads).
        var statistics = PartitionWorker.Statistics()
    }

    /// A partition being taken: its lease is held (and renewed), and its worker is being built from the
    /// latest snapshot on a thread of its own, so the resume's consumer creations (up to 4 s each after a
    /// server died) do not hold up the other partitions' steps. The loop adopts the worker when it is
    /// there (``ClusterWorker/adoptTaken()``); a stop abandons it.
    private final class Taking: @unchecked Sendable {
        let lease: PartitionLease
        let asked: ContinuousClock.Instant
        let leased: ContinuousClock.Instant
        private let lock = NSLock()
        private var result: Result<PartitionWorker, any Error>?
        /// Set by ``abandon(releasing:)``: whether the lease is to be released.
        private var abandoned: Bool?

        init(lease: PartitionLease, asked: ContinuousClock.Instant, leased: ContinuousClock.Instant) {
            self.lease = lease
            self.asked = asked
            self.leased = leased
        }

        /// The resume's outcome; stops the worker at once when the partition was abandoned meanwhile.
        func finish(_ outcome: Result<PartitionWorker, any Error>) {
            let releasing = lock.withLock { () -> Bool? in
                if abandoned == nil { result = outcome }
                return abandoned
            }
            if let releasing { Taking.discard(outcome, lease: lease, releasing: releasing) }
        }

        /// The outcome once the resume ended, `nil` before.
        func outcome() -> Result<PartitionWorker, any Error>? { lock.withLock { result } }

        /// Gives the partition up: now when the resume ended, otherwise when it does.
        func abandon(releasing: Bool) {
            let outcome = lock.withLock { () -> Result<PartitionWorker, any Error>? in
                abandoned = releasing
                defer { result = nil }
                return result
            }
            if let outcome { Taking.discard(outcome, lease: lease, releasing: releasing) }
        }

        private static func discard(_ outcome: Result<PartitionWorker, any Error>, lease: PartitionLease, releasing: Bool) {
            switch outcome {
            case .success(let worker): worker.stop(releasing: releasing)
            case .failure: if releasing { try? lease.release() }
            }
        }
    }

    private struct State {
        var owned: [Int: Owned] = [:]
        /// Partitions whose lease is held and whose worker is being built (``Taking``).
        var taking: [Int: Taking] = [:]
        var running = false
        /// ``stop(releasing:)`` was called: a round under way ends before its next partition.
        var stopping = false
        var members: [WorkerPresence] = []
        var assignment: [Int: String]?
        var membershipReadAt: ContinuousClock.Instant?
        var acquiredAt: ContinuousClock.Instant?
        var handedOver = 0
    }

    /// The configuration.
    public let configuration: Configuration
    private let jetStream: JetStream
    private let layout: ClusterLayout
    private let leases: KeyValueBucket
    private let snapshots: SnapshotStore
    private let fenceBucket: KeyValueBucket?
    /// The one fence feed of the worker, shared by its partitions (each through a reader of its own);
    /// opened by the first partition taken, closed by ``stop(releasing:)``.
    private var sharedFeed: FenceFeed?
    private let sharedFeedLock = NSLock()
    private let clock: @Sendable () -> Date
    private let membership: WorkerMembership
    private let renewer: LeaseRenewer
    private let state = Mutex(State())
    private let done = DispatchSemaphore(value: 0)

    /// How often it tries to take the free partitions assigned to it.
    private static let acquireInterval = Duration.milliseconds(200)
    /// After this long without input (the lease time, at least 3 s), a partition's input consumer is
    /// opened anew — its server may have died (``PartitionWorker/reopenInput()``). Not much more often:
    /// on a cluster, creating a consumer goes through the cluster's meta leader.
    private var idleReopenInterval: Duration { max(.seconds(3), configuration.leaseDuration) }

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
        let membership = WorkerMembership(bucket: leases, presence: WorkerPresence(id: configuration.id, maxPartitions: configuration.maxPartitions))
        self.membership = membership
        renewer = LeaseRenewer(interval: configuration.leaseDuration / 6, heartbeat: { try? membership.announce() },
                               trace: configuration.trace)
    }

    /// A worker on a cluster's resources (``ClusterResources/open(on:layout:replicas:leaseDuration:)``):
    /// fences from its fences bucket, the lease time it was opened with.
    ///
    /// The leases bucket is opened again on a JetStream context of its own whose requests wait at most
    /// ``leaseRequestTimeout(_:)``: renewals, acquisitions and the membership read must not wait out the
    /// connection's 5 s request timeout, which is longer than a short lease's validity and held up every
    /// round after a NATS server died (docs/cluster.md, "Worker process"). When that context cannot be
    /// made, the resources' bucket is used.
    public convenience init(resources: ClusterResources, configuration: Configuration, clock: @escaping @Sendable () -> Date = { Date() }) {
        var configuration = configuration
        configuration.leaseDuration = resources.leaseDuration
        let timeout = ClusterWorker.leaseRequestTimeout(resources.leaseDuration)
        var leases = resources.leases
        if timeout < resources.jetStream.requestTimeout,
           let bucket = try? JetStream(resources.jetStream.connection, requestTimeout: timeout).keyValue(resources.leases.name) {
            leases = bucket
        }
        self.init(jetStream: resources.jetStream, layout: resources.layout, leases: leases, snapshots: resources.snapshots,
                  fenceBucket: resources.fences, configuration: configuration, clock: clock)
    }

    /// How long one request on the leases bucket (a renewal, an acquisition, the membership read) waits
    /// for an answer: a fifth of the lease time, at least 0.5 s, so that several renewals fit in a
    /// lease's validity and an unanswered one is retried at the renewer's next pass.
    public static func leaseRequestTimeout(_ leaseDuration: Duration) -> Duration {
        max(.milliseconds(500), leaseDuration / 5)
    }

    /// The partitions it owns now (a partition whose lease was found lost is no longer counted).
    public var ownedPartitions: [Int] {
        state.withLock { $0.owned.filter { !$0.value.worker.lease.isLost }.keys.sorted() }
    }

    /// The live workers as last read, this one included, sorted by id.
    public var members: [WorkerPresence] { state.withLock { $0.members } }

    /// The assignment as last computed (partition → worker id).
    public var assignment: [Int: String] { state.withLock { $0.assignment ?? [:] } }

    /// Partitions handed over to another worker so far.
    public var handedOver: Int { state.withLock { $0.handedOver } }

    /// The fence feed its partitions share (`nil` before a partition was taken, after a stop, or without
    /// a fences bucket): one consumer on the fences bucket per worker, however many partitions it owns.
    public var fenceFeed: FenceFeed? { sharedFeedLock.withLock { sharedFeed } }

    /// The shared fence feed, opened now when there is none (a partition being taken waits here while
    /// another opens it). - Throws: when its first consumer cannot be created; the next call tries again.
    private func openFenceFeed() throws -> FenceFeed? {
        guard let fenceBucket else { return nil }
        sharedFeedLock.lock()
        defer { sharedFeedLock.unlock() }
        if let sharedFeed { return sharedFeed }
        var feedTrace: (@Sendable (String) -> Void)?
        if let trace = configuration.trace { feedTrace = { line in trace("worker: \(line)") } }
        let feed = try FenceFeed(bucket: fenceBucket, trace: feedTrace)
        sharedFeed = feed
        return feed
    }

    /// Statistics of the partitions it owns now, as of the end of their last round.
    public var statistics: [Int: PartitionWorker.Statistics] {
        state.withLock { $0.owned.mapValues(\.statistics) }
    }

    /// One round (see the type's description). - Returns: the input records applied.
    @discardableResult
    public func runOnce() throws -> Int {
        var firstError: (any Error)?
        // The leases bucket may not answer (listing its keys creates a consumer, which can time out for
        // tens of seconds after a NATS server died) while the partitions' streams do: the owned
        // partitions are stepped whatever happened here.
        for (what, body) in [("membership read", self.readMembershipIfDue), ("hand-over", self.handOver), ("acquire", self.acquire)] {
            do {
                try timed(what, body)
            } catch {
                firstError = firstError ?? error
            }
        }
        var applied = 0
        for partition in state.withLock({ $0.owned.keys.sorted() }) {
            if state.withLock({ $0.stopping }) { break }
            // One partition's failure (its consumer's server died, a publish failed) must not stop the others.
            let started = ContinuousClock.now
            do {
                applied += try round(partition)
                if ContinuousClock.now - started >= ClusterWorker.slow { trace("partition \(partition): round took \(ClusterWorker.format(ContinuousClock.now - started))") }
            } catch {
                trace("partition \(partition): round failed after \(ClusterWorker.format(ContinuousClock.now - started)): \(error)")
                firstError = firstError ?? error
                let recovering = ContinuousClock.now
                recover(partition)
                trace("partition \(partition): recovery took \(ClusterWorker.format(ContinuousClock.now - recovering))")
            }
        }
        if let firstError { throw firstError }
        return applied
    }

    /// One step of `partition`, its tick and its snapshot when due. - Returns: the records applied.
    private func round(_ partition: Int) throws -> Int {
        guard var owned = state.withLock({ $0.owned[partition] }) else { return 0 }
        let before = owned.worker.inputSequence
        let step = try owned.worker.step(maxMessages: configuration.batchSize, wait: .milliseconds(20))
        if step == .leaseLost {
            drop(partition)
            return 0
        }
        let count = Int(owned.worker.inputSequence - before)
        if step == .idle {
            owned.idleSince = owned.idleSince ?? .now
            if ContinuousClock.now - owned.idleSince! >= idleReopenInterval {
                owned.worker.reopenInput()
                owned.idleSince = .now
            }
        } else {
            owned.idleSince = nil
        }
        owned.recordsSinceSnapshot += count
        if ContinuousClock.now - owned.lastTick >= configuration.tickInterval {
            let now = clock()
            let lateness = Double(configuration.allowedLateness.components.seconds)
                + Double(configuration.allowedLateness.components.attoseconds) / 1e18
            // Devices whose updates this worker applied within L are left to their own updates.
            let held = owned.worker.recentlyHeard(within: lateness, now: now)
            let ticked = configuration.leavesOutIdleTicks
                ? try owned.worker.tickUnlessIdle(to: now.addingTimeInterval(-lateness), holding: held)
                : try owned.worker.tick(to: now.addingTimeInterval(-lateness), holding: held)
            if !ticked {
                drop(partition)
                return 0
            }
            owned.lastTick = .now
        }
        if owned.recordsSinceSnapshot >= configuration.snapshotEvery {
            if try !owned.worker.saveSnapshot(to: snapshots) {
                drop(partition)
                return 0
            }
            owned.recordsSinceSnapshot = 0
        }
        owned.statistics = owned.worker.statistics
        state.withLock { $0.owned[partition] = owned }
        return count
    }

    /// After a round of `partition` failed: a worker whose engine is still consistent with what it
    /// published gets a new input consumer (the failure may have been its consumer's server); one whose
    /// engine is ahead (``PartitionWorker/isConsistent``) is built anew from the latest snapshot under the
    /// same lease — the replay publishes what is missing and the duplicate window drops the rest. When
    /// that fails too, the partition is dropped and its lease released; the assignment gives it back at
    /// a later round.
    private func recover(_ partition: Int) {
        guard let owned = state.withLock({ $0.owned[partition] }) else { return }
        if owned.worker.isConsistent {
            owned.worker.reopenInput()
            return
        }
        owned.worker.stop(releasing: false)
        let lease = owned.worker.lease
        guard lease.isValid else {
            drop(partition)
            return
        }
        do {
            let worker = try PartitionWorker.resume(jetStream: jetStream, layout: layout, lease: lease, snapshots: snapshots,
                                                    configuration: configuration.engine, fences: configuration.fences,
                                                    fenceFeed: try openFenceFeed(), trace: configuration.trace,
                                                    warning: configuration.warning)
            state.withLock { $0.owned[partition] = Owned(worker: worker, lastTick: owned.lastTick, recordsSinceSnapshot: 0) }
        } catch {
            drop(partition)
            try? lease.release()
        }
    }

    /// Runs rounds on a thread of its own until ``stop(releasing:)``, and renews the leases and the
    /// presence key on a timer; a round that fails is retried after a short pause (the cluster may be
    /// electing a leader).
    public func start() {
        let started = state.withLock { state -> Bool in
            defer { state.running = true }
            return !state.running
        }
        guard started else { return }
        state.withLock { $0.stopping = false }
        try? membership.announce()
        renewer.start()
        let thread = Thread { [self] in
            while state.withLock({ $0.running }) {
                do {
                    try runOnce()
                    // Nothing to step: wait a little rather than ask the cluster in a tight loop.
                    if state.withLock({ $0.owned.isEmpty }) { usleep(20_000) }
                } catch {
                    usleep(100_000)
                }
            }
            done.signal()
        }
        thread.name = "perimeter cluster worker \(configuration.id)"
        thread.start()
    }

    /// Stops the rounds; with `releasing`, leaves the membership, saves a snapshot of each partition
    /// and releases its lease so other workers take over at once (a graceful shutdown); without, the
    /// partitions and the presence key are simply abandoned, as by a crash, and expire after the lease
    /// time.
    public func stop(releasing: Bool) {
        let wasRunning = state.withLock { state -> Bool in
            defer {
                state.running = false
                state.stopping = true
            }
            return state.running
        }
        let stopping = ContinuousClock.now
        if wasRunning { done.wait() }
        let roundEnded = ContinuousClock.now
        renewer.stop()
        if releasing { try? membership.leave() }
        let (owned, taking) = state.withLock { state -> ([Owned], [Taking]) in
            defer {
                state.owned.removeAll()
                state.taking.removeAll()
            }
            return (Array(state.owned.values), Array(state.taking.values))
        }
        // Nothing was applied since their snapshot: released (or abandoned) without one.
        for partition in taking { partition.abandon(releasing: releasing) }
        for partition in owned {
            if releasing { _ = try? partition.worker.saveSnapshot(to: snapshots) }
            partition.worker.stop(releasing: releasing)
        }
        // A resume still under way keeps its reader; the feed it reads is closed, so it fails and lets go.
        sharedFeedLock.withLock {
            sharedFeed?.close()
            sharedFeed = nil
        }
        trace("stop: the round under way ended after \(ClusterWorker.format(roundEnded - stopping)), "
              + "\(releasing ? "snapshots and releases" : "abandoning") \(owned.count) partitions took \(ClusterWorker.format(ContinuousClock.now - roundEnded))")
    }

    private func drop(_ partition: Int) {
        trace("partition \(partition): no longer owned (lease lost or handed over)")
        renewer.remove(partition)
        _ = state.withLock { $0.owned.removeValue(forKey: partition) }
    }

    private func readMembershipIfDue() throws {
        let due = state.withLock { state in
            state.membershipReadAt.map { ContinuousClock.now - $0 >= configuration.membershipInterval } ?? true
        }
        guard due else { return }
        let readAt = ContinuousClock.now
        // A read that fails is tried again at the next interval, not at every round.
        state.withLock { $0.membershipReadAt = readAt }
        let members = try membership.members()
        let assignment = PartitionAssignment.assign(partitions: layout.partitioning.count, workers: members)
        state.withLock {
            $0.members = members
            $0.assignment = assignment
            $0.membershipReadAt = readAt
        }
    }

    /// Hands every owned partition that the assignment gives to another live worker over: a snapshot
    /// (so the next owner replays little), then the release.
    private func handOver() throws {
        let (owned, assignment) = state.withLock { ($0.owned, $0.assignment ?? [:]) }
        for (partition, entry) in owned.sorted(by: { $0.key < $1.key }) {
            guard let target = assignment[partition], target != configuration.id else { continue }
            let saved = try entry.worker.saveSnapshot(to: snapshots)
            entry.worker.stop(releasing: saved)
            drop(partition)
            if saved { state.withLock { $0.handedOver += 1 } }
        }
    }

    /// Takes the free partitions assigned to this worker, up to its maximum: their leases here, their
    /// workers on threads of their own (``Taking``), adopted at a later round.
    private func acquire() throws {
        adoptTaken()
        let (owned, assignment, due) = state.withLock { state in
            (Set(state.owned.keys).union(state.taking.keys), state.assignment ?? [:],
             state.acquiredAt.map { ContinuousClock.now - $0 >= ClusterWorker.acquireInterval } ?? true)
        }
        guard due, owned.count < configuration.maxPartitions else { return }
        state.withLock { $0.acquiredAt = .now }
        var count = owned.count
        for partition in 0..<layout.partitioning.count where !owned.contains(partition) && assignment[partition] == configuration.id {
            guard count < configuration.maxPartitions, !state.withLock({ $0.stopping }) else { return }
            let started = ContinuousClock.now
            let taken: PartitionLease?
            do {
                taken = try PartitionLease.acquire(in: leases, partition: partition, owner: configuration.id,
                                                   duration: configuration.leaseDuration)
            } catch {
                trace("partition \(partition): lease not taken after \(ClusterWorker.format(ContinuousClock.now - started)): \(error)")
                throw error
            }
            guard let lease = taken else { continue }
            let taking = Taking(lease: lease, asked: started, leased: .now)
            renewer.add(lease)
            state.withLock { $0.taking[partition] = taking }
            count += 1
            let (jetStream, layout, snapshots, configuration) = (jetStream, layout, snapshots, configuration)
            let thread = Thread { [self] in
                taking.finish(Result {
                    try PartitionWorker.resume(jetStream: jetStream, layout: layout, lease: lease, snapshots: snapshots,
                                               configuration: configuration.engine, fences: configuration.fences,
                                               fenceFeed: try openFenceFeed(), trace: configuration.trace, warning: configuration.warning)
                })
            }
            thread.name = "perimeter take partition \(partition)"
            thread.start()
        }
    }

    /// Adopts the partitions whose workers are built; a partition whose resume failed gives its lease
    /// back (the assignment offers it again at a later round).
    private func adoptTaken() {
        let ended = state.withLock { state -> [(Int, Taking, Result<PartitionWorker, any Error>)] in
            var ended: [(Int, Taking, Result<PartitionWorker, any Error>)] = []
            for (partition, taking) in state.taking {
                if let outcome = taking.outcome() { ended.append((partition, taking, outcome)) }
            }
            for (partition, _, _) in ended { state.taking.removeValue(forKey: partition) }
            return ended
        }
        for (partition, taking, outcome) in ended.sorted(by: { $0.0 < $1.0 }) {
            switch outcome {
            case .success(let worker):
                trace("partition \(partition): taken — lease \(ClusterWorker.format(taking.leased - taking.asked)), resume \(ClusterWorker.format(ContinuousClock.now - taking.leased))")
                state.withLock { $0.owned[partition] = Owned(worker: worker, lastTick: .now, recordsSinceSnapshot: 0) }
            case .failure(let error):
                trace("partition \(partition): resume failed after \(ClusterWorker.format(ContinuousClock.now - taking.leased)): \(error)")
                renewer.remove(partition)
                try? taking.lease.release()
            }
        }
    }

    /// A step of a round slower than this is traced.
    private static let slow = Duration.milliseconds(500)

    private func trace(_ message: @autoclosure () -> String) {
        configuration.trace?(message())
    }

    /// Runs `body`, tracing it when it was slow or failed.
    private func timed(_ what: String, _ body: () throws -> Void) throws {
        let started = ContinuousClock.now
        do {
            try body()
        } catch {
            trace("\(what) failed after \(ClusterWorker.format(ContinuousClock.now - started)): \(error)")
            throw error
        }
        if ContinuousClock.now - started >= ClusterWorker.slow { trace("\(what) took \(ClusterWorker.format(ContinuousClock.now - started))") }
    }

    /// `1.234 s`.
    static func format(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return String(format: "%.3f s", seconds)
    }
}
