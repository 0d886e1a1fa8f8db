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
            let consumers = try js.streamState(fenceStream).consumers
            try check(consumers == 1, "one consumer on the fences stream: \(consumers)")
            try check(worker.fenceFeed?.consumersCreated == 1, "one consumer created: \(worker.fenceFeed?.consumersCreated ?? 0)")

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

            let updates = Drive.updatesStartingNow(devices: 24, seed: 19)
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

@Suite("A fence feed's readers (NATS on loopback)", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct FenceFeedReaderTests {
    static func describe(_ changes: [FenceFeed.Change]) -> [String] {
        changes.map { change in
            switch change {
            case .upsert(let fence): "+\(fence.id.rawValue)/\(fence.dwellTime.map { "\(Int($0))" } ?? "-")"
            case .remove(let id): "-\(id.rawValue)"
            case .invalid(let id, _): "!\(id.rawValue)"
            }
        }
    }

    /// Readers at different revisions each get every change after their own, in revision order; the
    /// feed keeps what the one furthest behind still needs, and once every reader passed a change that
    /// a later revision of its key replaced, it lets it go — a reader that starts then gets what a
    /// bucket with a history of 1 holds (the key's latest revision), as a consumer of its own would.
    @Test func eachReaderGetsTheChangesAfterItsRevisionAndTheFeedKeepsWhatTheyNeed() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let bucket = try js.createKeyValue(KeyValueConfiguration(bucket: "fences_\(UUID().uuidString.prefix(8).lowercased())", history: 1))
            defer { try? js.deleteKeyValue(bucket.name) }
            func put(_ id: String, dwell: Int?) throws -> UInt64 {
                try bucket.put(FenceFeed.key(of: FenceID(id)), WorkerProcessTests.square(id, longitude: 0, half: 0.001, dwell: dwell))
            }
            let depot1 = try put("depot", dwell: 10)
            let yard = try put("yard", dwell: nil)
            let feed = try FenceFeed(bucket: bucket)
            let ahead = feed.reader(after: 0)
            try check(Self.describe(try ahead.take(through: yard)) == ["+depot/10", "+yard/-"], "both fences")
            let behind = feed.reader(after: depot1)   // a partition resumed from a snapshot at the first revision
            // Each received before the next replaces it: the bucket keeps one revision per key.
            let depot2 = try put("depot", dwell: 20)
            try feed.poll(wait: .milliseconds(500))
            let depot3 = try put("depot", dwell: 30)
            try feed.poll(wait: .milliseconds(500))
            try check(feed.receivedRevision == depot3, "both replacements received: \(feed.receivedRevision)")
            let first = Self.describe(try ahead.take(through: depot2))
            try check(first == ["+depot/20"], "the first replacement: \(first)")
            try check(feed.keptChanges == 3, "kept: the yard and both replacements, which the reader behind needs (\(feed.keptChanges))")
            try check(Self.describe(try behind.take(through: depot3)) == ["+yard/-", "+depot/20", "+depot/30"], "every change after its revision")
            try check(Self.describe(try ahead.take(through: depot3)) == ["+depot/30"], "the second replacement")
            try check(feed.keptChanges == 2, "every reader passed them: a key's latest only (\(feed.keptChanges))")
            try bucket.delete(FenceFeed.key(of: "yard"))
            let removed = try bucket.get(FenceFeed.key(of: "depot"))!.revision + 1
            try feed.poll(wait: .milliseconds(500))
            try check(feed.receivedRevision == removed, "the removal received: \(feed.receivedRevision)")
            let late = feed.reader(after: 0)   // a partition with no snapshot, taken after the removal arrived
            try check(Self.describe(try late.take(through: removed)) == ["+depot/30", "-yard"], "a late reader: the bucket's latest revisions")
            try check(Self.describe(try behind.take(through: removed)) == ["-yard"], "the removal")
            try check(feed.consumersCreated == 1, "one consumer for all readers")
            do {
                _ = try late.take(through: removed + 5, timeout: .milliseconds(300))
                throw Failed("a revision that never comes is waited for")
            } catch let error as NATSError {
                try check(error.reason == .timeout, "a timeout naming the revision: \(error)")
            }
            feed.close()
            let closing = ContinuousClock.now
            do {
                _ = try late.take(through: removed + 5, timeout: .seconds(5))
                throw Failed("a closed feed is waited on")
            } catch let error as NATSError {
                try check(error.reason != .timeout && ContinuousClock.now - closing < .seconds(1), "a closed feed answers at once: \(error)")
            }
        }
    }
}
