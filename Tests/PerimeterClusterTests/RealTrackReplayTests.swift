import Foundation
import PerimeterCluster
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterNATS
import PerimeterTestSupport
import PerimeterTracks
import Testing

/// Real data through the cluster: the Mapbox Yellowstone tutorial's fences and its GPS track of the
/// Grand Loop Road, driven by several devices at once so that they spread over partitions and two workers.
@Suite("Real tracks through the cluster", .enabled(if: Fixtures.available),
       .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct RealTrackReplayTests {
    /// The cluster's events stream holds exactly the single-process engine's events for the same
    /// updates: every event by id and content, and each device's events in the same order.
    @Test func theYellowstoneDriveGivesTheSingleProcessEvents() async throws {
        try await offThePool {
            let loaded = FenceLoader().load(GeoJSONReader().read(
                Array(try Data(contentsOf: Fixtures.url("yellowstone/yellowstone.geojson")))))
            try check(loaded.problems.isEmpty && loaded.fences.count > 1, "the tutorial's fences load: \(loaded.problems)")
            let track = try TrackReader().read(try Data(contentsOf: Fixtures.url("yellowstone/yellowstone_grand_loop_road.gpx")),
                                               source: "yellowstone_grand_loop_road.gpx").updates
            try check(track.count > 20, "the tutorial's track reads: \(track.count) points")
            // Eight devices drive the same road, each starting a minute after the one before; interleaved
            // by time as a fleet's updates arrive.
            let updates = (0..<8).flatMap { device in
                track.map { point in
                    var update = point
                    update.device = DeviceID("yellowstone-\(device)")
                    update.time = point.time.addingTimeInterval(Double(device) * 60)
                    return update
                }
            }.sorted { ($0.time, $0.device.rawValue) < ($1.time, $1.device.rawValue) }

            var engine = DetectionEngine(fences: loaded.fences)
            var expected: [GeofenceEvent] = []
            for update in updates { _ = engine.process(update, into: &expected) }
            try check(expected.contains { $0.kind == .entry } && expected.contains { $0.kind == .exit },
                      "the drive enters and leaves fences in one process")

            let js = try SharedServer.jetStream()
            let layout = ClusterLayout(prefix: "y\(UUID().uuidString.prefix(8).lowercased())",
                                       partitioning: DevicePartitioning(count: 8)!)
            let resources = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(5))
            let devicesPartitions = Set(updates.map { layout.partitioning.partition(of: $0.device) })
            try check(devicesPartitions.count > 2, "the devices spread over partitions: \(devicesPartitions.sorted())")
            // The workers' clocks stand before the drive, so only updates make events, as in the reference.
            let before = updates[0].time.addingTimeInterval(-1000)
            let workers = ["worker-1", "worker-2"].map { id in
                ClusterWorker(jetStream: js, layout: layout, leases: resources.leases, snapshots: resources.snapshots,
                              configuration: ClusterWorker.Configuration(id: id, leaseDuration: .seconds(5), maxPartitions: 8, batchSize: 200,
                                                                         snapshotEvery: 500, membershipInterval: .milliseconds(250),
                                                                         fences: loaded.fences),
                              clock: { before })
            }
            defer { for worker in workers { worker.stop(releasing: true) } }
            for worker in workers { worker.start() }
            try publishInput(updates, js: js, layout: layout)

            let published = waitUntil(seconds: 60) {
                ((try? js.streamState(layout.eventStream).messages) ?? 0) >= UInt64(expected.count)
            }
            try check(published, "every event published")
            usleep(500_000)   // anything doubled would show up now
            let stored = try storedEvents(js: js, layout: layout)
            try check(stored.count == expected.count && Set(stored) == Set(expected),
                      "the cluster's events are the single process's: \(stored.count) of \(expected.count)")
            try check(perDevice(stored) == perDevice(expected), "each device's events in the same order")
        }
    }
}
