import Foundation
import PerimeterCluster
import PerimeterEngine
import PerimeterNATS
import PerimeterTestSupport
import Testing

@Suite("Partition assignment (pure)")
struct PartitionAssignmentTests {
    static func workers(_ ids: [String], max: Int = 64) -> [WorkerPresence] { ids.map { WorkerPresence(id: $0, maxPartitions: max) } }

    @Test func everyPartitionGoesToOneWorkerInFairShares() throws {
        for count in 1...5 {
            let ids = (1...count).map { "host-\($0)-\(1000 + $0)" }
            let assignment = PartitionAssignment.assign(partitions: 64, workers: Self.workers(ids))
            try check(assignment.count == 64 && Set(assignment.values).isSubset(of: Set(ids)), "every partition assigned")
            let shares = Dictionary(grouping: assignment.keys, by: { assignment[$0]! }).mapValues(\.count)
            let fair = (64 + count - 1) / count
            try check(shares.values.allSatisfy { $0 <= fair && $0 >= 64 / count - 1 }, "fair shares for \(count): \(shares)")
        }
    }

    @Test func everyWorkerComputesTheSameAssignment() throws {
        let ids = ["b", "a", "worker.c", "ω-7", "d"]
        let reference = PartitionAssignment.assign(partitions: 64, workers: Self.workers(ids))
        var random = SplitMix64(seed: 3)
        for _ in 0..<20 {
            var shuffled = Self.workers(ids)
            shuffled.shuffle(using: &random)
            try check(PartitionAssignment.assign(partitions: 64, workers: shuffled + [shuffled[0]]) == reference, "order and repeats do not matter")
        }
        // Pinned: the hash is part of the protocol between processes (a change must be a deliberate one).
        try check(PartitionAssignment.score(0, "a") == PartitionAssignment.score(0, "a"), "deterministic")
        try check(PartitionAssignment.score(1, "a") != PartitionAssignment.score(0, "a"), "depends on the partition")
    }

    @Test func aJoiningWorkerTakesItsShareMostlyFromTheOthers() throws {
        let before = PartitionAssignment.assign(partitions: 64, workers: Self.workers(["a", "b"]))
        let after = PartitionAssignment.assign(partitions: 64, workers: Self.workers(["a", "b", "c"]))
        let moved = (0..<64).filter { before[$0] != after[$0] }
        let toNew = moved.filter { after[$0] == "c" }
        try check(toNew.count >= 20, "the newcomer gets about a third: \(toNew.count)")
        try check(moved.count <= 32, "no reshuffle of everything: \(moved.count) moved")
    }

    @Test func maximaAreRespectedAndLeftOversGoWhereThereIsRoom() throws {
        let assignment = PartitionAssignment.assign(partitions: 10, workers: [WorkerPresence(id: "small", maxPartitions: 2),
                                                                            WorkerPresence(id: "big", maxPartitions: 100)])
        let shares = Dictionary(grouping: assignment.keys, by: { assignment[$0]! }).mapValues(\.count)
        try check(shares["small"]! <= 2 && assignment.count == 10, "\(shares)")
        let tooSmall = PartitionAssignment.assign(partitions: 10, workers: [WorkerPresence(id: "x", maxPartitions: 3)])
        try check(tooSmall.count == 3, "only as many as there is room for")
        try check(PartitionAssignment.assign(partitions: 10, workers: []).isEmpty, "nobody: nothing assigned")
    }
}

@Suite("Balancing workers on a real nats-server", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct BalancingTests {
    /// Three workers join one after another and one crashes, while input keeps arriving: the partitions
    /// are spread fairly at each point, the crashed worker's partitions go to the others within the
    /// lease time plus a few seconds, and the events stream holds exactly the single-process events.
    @Test func workersShareThePartitionsAndTakeOverACrashedOnes() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let partitions = 8
            let layout = ClusterLayout(prefix: "b\(UUID().uuidString.prefix(8).lowercased())",
                                       partitioning: DevicePartitioning(count: partitions)!)
            let lease = Duration.seconds(2)
            let resources = try ClusterResources.open(on: js, layout: layout, leaseDuration: lease)
            let updates = Drive.updates(devices: 24, seed: 11)
            let chunks = stride(from: 0, to: updates.count, by: updates.count / 4 + 1).map { Array(updates[$0..<min($0 + updates.count / 4 + 1, updates.count)]) }
            // The clock stands before the drive: ticks fire nothing, so one process without ticks is the reference.
            let before = updates[0].time.addingTimeInterval(-1000)
            func worker(_ id: String) -> ClusterWorker {
                ClusterWorker(jetStream: js, layout: layout, leases: resources.leases, snapshots: resources.snapshots,
                              configuration: ClusterWorker.Configuration(id: id, leaseDuration: lease, maxPartitions: partitions, batchSize: 50,
                                                                         tickInterval: .milliseconds(100), allowedLateness: .seconds(1),
                                                                         snapshotEvery: 100, membershipInterval: .milliseconds(250),
                                                                         fences: Drive.fences),
                              clock: { before })
            }
            let (w1, w2, w3) = (worker("worker-1"), worker("worker-2"), worker("worker-3"))
            defer {
                w1.stop(releasing: true)
                w2.stop(releasing: false)
                w3.stop(releasing: true)
            }
            func shares(_ workers: [ClusterWorker]) -> [Int] { workers.map(\.ownedPartitions.count) }
            func disjointAndComplete(_ workers: [ClusterWorker]) -> Bool {
                let owned = workers.flatMap(\.ownedPartitions)
                return owned.count == partitions && Set(owned).count == partitions
            }

            try publishInput(chunks[0], js: js, layout: layout)
            w1.start()
            try check(waitUntil(seconds: 20) { w1.ownedPartitions.count == partitions }, "alone, worker-1 takes every partition")
            w2.start()
            try publishInput(chunks[1], js: js, layout: layout)
            try check(waitUntil(seconds: 20) { shares([w1, w2]) == [4, 4] && disjointAndComplete([w1, w2]) },
                      "two workers hold half each: \(shares([w1, w2]))")
            try check(w1.assignment == w2.assignment && w1.handedOver == 4, "the same assignment; worker-1 handed 4 over")

            w3.start()
            try publishInput(chunks[2], js: js, layout: layout)
            try check(waitUntil(seconds: 20) { shares([w1, w2, w3]).sorted() == [2, 3, 3] && disjointAndComplete([w1, w2, w3]) },
                      "three workers share 8 as 3, 3, 2: \(shares([w1, w2, w3]))")

            // worker-2 crashes: no snapshot, no release; its presence and leases expire.
            let crashed = w2.ownedPartitions
            w2.stop(releasing: false)
            let crashedAt = ContinuousClock.now
            try publishInput(chunks[3], js: js, layout: layout)
            let tookOver = waitUntil(seconds: 20) { disjointAndComplete([w1, w3]) }
            let failover = ContinuousClock.now - crashedAt
            try check(tookOver, "worker-1 and worker-3 hold every partition: \(w1.ownedPartitions) \(w3.ownedPartitions)")
            try check(failover < lease + .seconds(3), "taken over within lease + 3 s: \(failover)")
            try check(Set(crashed).isSubset(of: Set(w1.ownedPartitions + w3.ownedPartitions)), "the crashed worker's partitions moved")
            print("balancing: failover of \(crashed.count) partitions after a crash took \(failover) (lease \(lease))")

            let expected = Drive.singleProcessEvents(updates)
            let caughtUp = waitUntil(seconds: 40) {
                ((try? js.streamState(layout.eventStream).messages) ?? 0) >= UInt64(expected.count)
            }
            try check(caughtUp, "every event published")
            usleep(500_000)   // anything doubled would show up now
            w1.stop(releasing: true)
            w3.stop(releasing: true)
            let stored = try storedEvents(js: js, layout: layout)
            try check(stored.count == expected.count && Set(stored) == Set(expected), "0 lost, 0 doubled: \(stored.count) of \(expected.count)")
            try check(perDevice(stored) == perDevice(expected), "per-device order")
            try check(try resources.leases.keys().filter { $0.hasPrefix(WorkerMembership.keyPrefix) }.isEmpty,
                      "graceful stops left the membership; the crashed worker's presence expired")
        }
    }
}

@Suite("Lease renewal on a timer", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct LeaseRenewerTests {
    /// A lease kept by the renewer stays valid over several lease times without any step; when
    /// someone else's write replaces it, the renewer finds it lost within a third of the lease time (plus
    /// its interval), and the partition's worker then publishes nothing more.
    @Test func aRenewedLeaseOutlivesLongStepsAndALostOneStopsTheWorkerAtOnce() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let layout = try freshLayout(partitions: 1, js: js)
            let duration = Duration.seconds(1)
            let leases = try js.createKeyValue(PartitionLease.bucketConfiguration(name: uniqueBucket(), duration: duration))
            guard let lease = try PartitionLease.acquire(in: leases, partition: 0, owner: "w", duration: duration) else {
                throw Failed("not acquired")
            }
            let worker = try PartitionWorker(jetStream: js, layout: layout, lease: lease, engine: DetectionEngine(fences: Drive.fences))
            let renewer = LeaseRenewer(interval: duration / 6)
            renewer.add(lease)
            renewer.start()
            defer { renewer.stop() }
            let first = lease.revision
            usleep(3_000_000)   // three lease times with no step at all: a long step
            try check(lease.isValid && lease.revision > first, "still valid, renewed by the timer (revision \(first) → \(lease.revision))")
            try check(try leases.get(PartitionLease.key(0))?.text == "w", "the key is still this holder's")

            let updates = Drive.updates(devices: 4, seed: 5)
            try publishInput(updates, js: js, layout: layout)
            try check(try drain(worker) == .idle, "works while it holds")
            let stored = try js.streamState(layout.eventStream).messages
            try check(stored > 0, "events published")

            // Someone else's write: the renewer finds the lease lost at its next renewal.
            try leases.put(PartitionLease.key(0), Array("intruder".utf8))
            let stolenAt = ContinuousClock.now
            try check(waitUntil(seconds: 3) { lease.isLost }, "the renewer found the lease lost")
            let noticed = ContinuousClock.now - stolenAt
            try check(noticed < duration / 3 + duration / 6 + .milliseconds(500), "within a third of the lease plus the interval: \(noticed)")
            try check(renewer.partitions.isEmpty, "a lost lease is no longer renewed")
            try publishInput(Drive.updates(devices: 4, seed: 6), js: js, layout: layout)
            try check(try worker.step(maxMessages: 100, wait: .milliseconds(300)) == .leaseLost, "the worker stops at its next step")
            try check(try js.streamState(layout.eventStream).messages == stored, "and publishes nothing more")
            try js.deleteKeyValue(leases.name)
        }
    }
}
