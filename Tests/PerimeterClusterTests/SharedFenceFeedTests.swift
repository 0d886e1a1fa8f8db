import Foundation
import PerimeterCluster
import PerimeterEngine
import PerimeterFences
import PerimeterNATS
import PerimeterTestSupport
import Testing

@Suite("One fence feed per worker (NATS on loopback)", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct SharedFenceFeedTests {
    /// A worker holding 4 partitions reads the fences bucket through one consumer: the bucket's stream
    /// has one consumer and the worker's feed created one. Fences written while the partitions run
    /// reach every one of them: each partition's ticks record the fences' revision, and the updates
    /// published after that give exactly the single-process events, in every partition.
    @Test func aWorkerWithSeveralPartitionsReadsTheFencesOnceAndEveryPartitionSeesAChange() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let partitions = 4
            let layout = ClusterLayout(prefix: "f\(UUID().uuidString.prefix(8).lowercased())", partitioning: DevicePartitioning(count: partitions)!)
            let resources = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(5))
            defer { RetentionTests.cleanUp(js, layout) }
            let fenceStream = "KV_\(resources.fences.name)"
            // L is 10 minutes and data time starts now: ticks fire nothing, the engine alone is the reference.
            let worker = ClusterWorker(resources: resources, configuration: ClusterWorker.Configuration(
                id: "sharer", maxPartitions: partitions, allowedLateness: .seconds(600)))
            worker.start()
            defer { worker.stop(releasing: true) }
            try check(waitUntil(seconds: 20) { worker.ownedPartitions == Array(0..<partitions) }, "all partitions taken: \(worker.ownedPartitions)")
            try check(worker.fenceFeed?.consumersCreated == 1, "one consumer created: \(worker.fenceFeed?.consumersCreated ?? 0)")
            let consumers = try js.streamState(fenceStream).consumers
            try check(consumers == 1, "one consumer on the fences stream: \(consumers)")

            // The fences are written while the partitions run.
            var fenceRevision: UInt64 = 0
            for (id, json) in WorkerProcessTests.fenceFeatures { fenceRevision = try resources.fences.put(FenceFeed.key(of: FenceID(id)), json) }
            let carried = waitUntil(seconds: 10) {
                (0..<partitions).allSatisfy { partition in
                    guard let message = try? js.lastMessage(stream: layout.inputStream, subject: layout.tickSubject(partition)),
                          case .tick(_, _, _, let revision)? = try? InputRecord(message, in: layout) else { return false }
                    return revision >= fenceRevision
                }
            }
            try check(carried, "every partition's ticks carry fence revision \(fenceRevision)")

            let shift = Date().timeIntervalSince1970 - 1_780_000_000
            let updates = Drive.updates(devices: 24, seed: 19).map {
                var update = $0
                update.time = $0.time.addingTimeInterval(shift)
                return update
            }
            let expected = try WorkerProcessTests.reference(updates)
            try publishInput(updates, js: js, layout: layout)
            try check(waitUntil(seconds: 20) { ((try? js.streamState(layout.eventStream).messages) ?? 0) >= UInt64(expected.count) },
                      "the events stored")
            Thread.sleep(forTimeInterval: 0.5)   // nothing more comes
            let stored = try storedEvents(js: js, layout: layout)
            try check(stored.count == expected.count && Set(stored) == Set(expected), "exactly the single-process events: \(stored.count) of \(expected.count)")
            let partitionsWithEvents = Set(stored.map { layout.partitioning.partition(of: $0.device) })
            try check(partitionsWithEvents == Set(0..<partitions), "every partition applied the fences: \(partitionsWithEvents.sorted())")
            try check(worker.fenceFeed?.consumersCreated == 1, "still one consumer: \(worker.fenceFeed?.consumersCreated ?? 0)")
            try check(try js.streamState(fenceStream).consumers == 1, "still one consumer on the fences stream")
        }
    }
}
