import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterGeometry
import PerimeterService
import Testing

/// The live batch path's shortcuts (updates read in place, one bookkeeping look-up per update) and the
/// store's presence writes (only the memberships that differ) against the plain ways.
@Suite("Ingest path: live batches and presence writes")
struct IngestPathTests {
    /// A live service on a clock after every scenario update (none is future-dated unless made so).
    static func live(store: any GeofencingStore = InMemoryGeofencingStore()) throws -> GeofencingService {
        let service = GeofencingService(store: store, clock: ManualClock(Date(timeIntervalSince1970: 1_750_010_000)),
                                        tickInterval: nil)
        try service.configure(GeofencingOptions(defaultDwellTime: 60, maximumHorizontalAccuracy: 50, maximumFutureSkew: 60))
        return service
    }

    /// The scenario's updates with every 7th made inaccurate and every 11th dated in 2100 (both refused
    /// before the engine); its late updates are rejected by the engine.
    static func updates(_ scenario: Scenario) -> [LocationUpdate] {
        scenario.updates.enumerated().map { i, update in
            var update = update
            if i % 7 == 3 { update.horizontalAccuracy = 80 }
            if i % 11 == 5 { update.time = Date(timeIntervalSince1970: 4_102_444_800) }
            return update
        }
    }

    /// A relay that keeps what it is handed, as a cluster's would store it.
    final class KeepingRelay: DetectionRelay, @unchecked Sendable {
        private let lock = NSLock()
        private var kept: [LocationUpdate] = []
        var updates: [LocationUpdate] { lock.withLock { kept } }
        func relay(_ updates: [LocationUpdate], completion: @escaping @Sendable (GeofencingError?) -> Void) {
            lock.withLock { kept += updates }
            completion(nil)
        }
        func relayFences(upserted: [GeoJSON.Feature], removed: [FenceID]) throws(GeofencingError) -> Bool { false }
    }

    @Test("a relaying service refuses before the relay exactly what a detecting one refuses before its engine")
    func relayRefusesWhatTheLiveBatchRefuses() throws {
        let scenario = Scenario(seed: 3, updates: 300)
        let updates = Self.updates(scenario)
        let detecting = try Self.live()
        try detecting.addFeatures(scenario.features)
        let relay = KeepingRelay()
        let relaying = GeofencingService(clock: ManualClock(Date(timeIntervalSince1970: 1_750_010_000)),
                                         tickInterval: nil, relay: relay)
        try relaying.configure(GeofencingOptions(defaultDwellTime: 60, maximumHorizontalAccuracy: 50, maximumFutureSkew: 60))

        let detected = try detecting.process(updates)
        let relayed = try relaying.process(updates)
        let beforeEngine: Set<GeofencingError.Code> = [.inaccurateLocation, .futureUpdate]
        let refusedByDetecting = detected.rejections.filter { beforeEngine.contains($0.error.code) }
        #expect(Set(refusedByDetecting.map(\.error.code)) == beforeEngine, "both kinds are exercised")
        #expect(relayed.rejections.map(\.index) == refusedByDetecting.map(\.index))
        #expect(relayed.rejections.map(\.error.code) == refusedByDetecting.map(\.error.code))
        #expect(relayed.rejections.map(\.error.message) == refusedByDetecting.map(\.error.message))
        #expect(relaying.timeStatistics.futureUpdates == detecting.timeStatistics.futureUpdates)
        let refused = Set(relayed.rejections.map(\.index))
        #expect(relay.updates == updates.indices.filter { !refused.contains($0) }.map { updates[$0] })
    }

    @Test("a live batch with refusals, rejections and timers gives what one call per update gives", arguments: [1 as UInt64, 2])
    func batchEqualsSingleCalls(seed: UInt64) throws {
        let scenario = Scenario(seed: seed, updates: 400)
        let updates = Self.updates(scenario)
        let batchStore = InMemoryGeofencingStore(), singleStore = InMemoryGeofencingStore()
        let batched = try Self.live(store: batchStore), single = try Self.live(store: singleStore)
        try batched.addFeatures(scenario.features)
        try single.addFeatures(scenario.features)

        var batchEvents: [GeofencingEvent] = [], batchRejections: [(Int, GeofencingError.Code)] = []
        for start in stride(from: 0, to: updates.count, by: 97) {
            let result = try batched.process(updates[start..<min(start + 97, updates.count)])
            batchEvents += result.events
            batchRejections += result.rejections.map { (start + $0.index, $0.error.code) }
        }
        var singleEvents: [GeofencingEvent] = [], singleRejections: [(Int, GeofencingError.Code)] = []
        for (i, update) in updates.enumerated() {
            let result = try single.process([update])
            singleEvents += result.events
            singleRejections += result.rejections.map { (i, $0.error.code) }
        }

        #expect(Set(batchRejections.map(\.1)) == [.inaccurateLocation, .futureUpdate, .outOfOrderUpdate], "every kind is exercised")
        #expect(!batchEvents.isEmpty)
        #expect(batchEvents == singleEvents)
        #expect(batchRejections.map(\.0) == singleRejections.map(\.0))
        #expect(batchRejections.map(\.1) == singleRejections.map(\.1))
        #expect(batched.timeStatistics.futureUpdates == single.timeStatistics.futureUpdates)
        #expect(try batchStore.load() == singleStore.load())
        for device in Set(scenario.updates.map(\.device)) {
            #expect(try batched.deviceStatus(of: device) == single.deviceStatus(of: device))
        }
    }

    @Test("the SQLite store writes only the changed presence rows and ends with the in-memory store's state, fence removals included")
    func presenceWritesMatchTheInMemoryStore() throws {
        let scenario = Scenario(seed: 9, fences: 14, devices: 5, updates: 900)
        let harness = StoreHarness(.sqlite)
        let memory = InMemoryGeofencingStore()
        var services = [try Self.live(store: harness.open()), try Self.live(store: memory)]
        for service in services { try service.addFeatures(scenario.features) }
        let removed = scenario.features[3], other = scenario.features[8]
        for (n, start) in stride(from: 0, to: scenario.updates.count, by: 50).enumerated() {
            let batch = scenario.updates[start..<min(start + 50, scenario.updates.count)]
            for service in services {
                // Fences removed and added back while devices are inside them; one removal in the same
                // commit as updates (`.everyCall` commits the removal first, then the batch).
                if n == 6 { try service.removeFeature(id: FenceID(removed.id!.description)) }
                if n == 9 { try service.addFeature(removed) }
                if n == 12 { try service.clearFeatures(); try service.addFeatures(scenario.features) }
                if n == 14 { try service.removeFeature(id: FenceID(other.id!.description)); try service.addFeature(other) }
                try service.process(batch)
            }
        }
        for service in services { try service.close() }
        let stored = try harness.open().load(), expected = try memory.load()
        #expect(stored.devices == expected.devices)
        #expect(stored.devices.contains { !$0.memberships.isEmpty }, "some device ends inside a fence")
        #expect(stored.lastEventSequence == expected.lastEventSequence)

        // And a service reopened on the file carries on as the in-memory one does.
        services = [try Self.live(store: harness.open()), try Self.live(store: memory)]
        let tail = scenario.updates.suffix(1).map {
            LocationUpdate(device: $0.device, time: $0.time.addingTimeInterval(600), latitude: 48.02, longitude: 2.02)
        }
        #expect(try services[0].process(tail).events == services[1].process(tail).events)
    }

    @Test("a store given the stored memberships deletes, inserts and updates exactly the rows that differ", arguments: StoreKind.allCases)
    func storedMembershipsDiff(kind: StoreKind) throws {
        let harness = StoreHarness(kind)
        let store = try harness.open()
        func membership(_ fence: String, dwelled: Bool = false, visit: UInt64 = 1) -> DetectionEngine.MembershipSnapshot {
            .init(fence: FenceID(fence), entryTime: 1_750_000_000 + Double(visit), visitSequence: visit, ordinal: 0, hasDwelled: dwelled)
        }
        func device(_ memberships: [DetectionEngine.MembershipSnapshot], count: UInt64) -> DetectionEngine.DeviceSnapshot {
            .init(device: "d", lastTime: 1_750_000_100, lastCoordinate: Coordinate(latitude: 48, longitude: 2),
                  updateCount: count, memberships: memberships)
        }
        var first = StoreChanges()
        first.fences = ["a", "b", "c", "d"].enumerated().map { .upsert(StoreConformanceTests.fence($1, position: Int64($0))) }
        let before = [membership("a"), membership("b"), membership("c")]
        first.devices = [DeviceChange(snapshot: device(before, count: 1), presenceChanged: true, storedMemberships: [])]
        try store.commit(first)
        // b's dwell falls due, c is left, d is entered, a is unchanged.
        let after = [membership("a"), membership("b", dwelled: true), membership("d", visit: 2)]
        var second = StoreChanges()
        second.devices = [DeviceChange(snapshot: device(after, count: 2), presenceChanged: true, storedMemberships: before)]
        try store.commit(second)
        #expect(try harness.open().load().devices == [device(after, count: 2)])
    }
}
