import Foundation
import PerimeterCluster
import PerimeterEngine
import PerimeterNATS
import PerimeterTestSupport
import Testing

@Suite("Taking a partition off the loop (NATS on loopback)", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct TakingTests {
    /// A partition whose resume hangs (its snapshot names a fence revision the bucket never reaches, so
    /// each resume waits 10 s for it and fails) does not hold up another owned partition: updates
    /// published to the other in chunks are each applied within a few seconds, while the first is still
    /// being taken again and again; a graceful stop does not wait for the hanging resume.
    @Test func anOwnedPartitionKeepsSteppingWhileAnotherIsBeingTaken() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let layout = ClusterLayout(prefix: "g\(UUID().uuidString.prefix(8).lowercased())", partitioning: DevicePartitioning(count: 2)!)
            let resources = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(5))
            defer { RetentionTests.cleanUp(js, layout) }
            let stuck = PartitionSnapshot(partition: 1, inputSequence: 0, fenceRevision: 999, devices: [],
                                          engineState: DetectionEngine(fences: []).engineState)
            _ = try resources.snapshots.save(stuck, previousRevision: 0)
            let updates = Drive.updates(devices: 12, seed: 3).filter { layout.partitioning.partition(of: $0.device) == 0 }
            try check(updates.count >= 50, "enough updates of partition 0: \(updates.count)")
            let lines = Lines()
            let worker = ClusterWorker(resources: resources, configuration: ClusterWorker.Configuration(
                id: "taker", maxPartitions: 2, fences: Drive.fences, trace: { lines.append($0) }))
            worker.start()
            try check(waitUntil(seconds: 20) { worker.ownedPartitions == [0] }, "partition 0 taken: \(worker.ownedPartitions)")
            let chunk = updates.count / 5 + 1
            var published = 0
            for start in stride(from: 0, to: updates.count, by: chunk) {
                let part = Array(updates[start..<min(start + chunk, updates.count)])
                try publishInput(part, js: js, layout: layout)
                published += part.count
                let target = published
                let publishedAt = Date()
                try check(waitUntil(seconds: 4) { (worker.statistics[0]?.updates ?? 0) + (worker.statistics[0]?.rejected ?? 0) >= target },
                          "partition 0 applied \(target) updates within 4 s (\(worker.statistics[0].map { "\($0.updates)" } ?? "none"))")
                try check(!worker.ownedPartitions.contains(1), "partition 1 is still being taken")
                Thread.sleep(forTimeInterval: max(0, 0.5 - Date().timeIntervalSince(publishedAt)))
            }
            let expected = Drive.singleProcessEvents(updates)
            try check(waitUntil(seconds: 10) { ((try? js.streamState(layout.eventStream).messages) ?? 0) >= UInt64(expected.count) },
                      "partition 0's events stored")
            try check(Set(try storedEvents(js: js, layout: layout)) == Set(expected), "exactly the single-process events")
            let stopping = Date()
            worker.stop(releasing: true)
            try check(Date().timeIntervalSince(stopping) < 3, "the stop did not wait for the hanging resume: \(Date().timeIntervalSince(stopping)) s")
        }
    }
}
