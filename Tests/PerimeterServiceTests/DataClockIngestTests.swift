import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterService
import Testing

/// The data clock's batch path (one engine call for the batch, the changed devices marked once each)
/// against the loop it replaces: the bare engine driven one update at a time, and the same service fed
/// one update per call.
@Suite("Ingest path: data clock batches")
struct DataClockIngestTests {
    static let options = GeofencingOptions(defaultDwellTime: 60, maximumHorizontalAccuracy: 50, timeModel: .data)

    static func service(_ store: any GeofencingStore) throws -> GeofencingService {
        let service = GeofencingService(store: store, tickInterval: nil)
        try service.configure(options)
        return service
    }

    @Test("a data clock batch with refusals, rejections and dwells gives the bare engine's loop and the state of one call per update",
          arguments: [StoreKind.memory, .sqlite], [4 as UInt64, 5])
    func batchEqualsTheLoop(kind: StoreKind, seed: UInt64) throws {
        let scenario = Scenario(seed: seed, updates: 500)
        // Every 7th update too inaccurate: refused by the service, but the clock still moves to its time.
        let updates = scenario.updates.enumerated().map { i, update in
            var update = update
            if i % 7 == 3 { update.horizontalAccuracy = 80 }
            return update
        }

        // The oracle: the bare engine, one update at a time, as docs/service.md describes the data clock.
        var engine = DetectionEngine(fences: FenceLoaderHelper.fences(scenario.features),
                                     configuration: .init(defaultDwellTime: 60))
        var expected: [GeofenceEvent] = [], expectedRejections: [(Int, GeofencingError.Code)] = []
        for (i, update) in updates.enumerated() {
            if !engine.devicesWithDwellsDue(by: update.time).isEmpty { engine.advance(to: update.time, into: &expected) }
            if i % 7 == 3 { expectedRejections.append((i, .inaccurateLocation)); continue }
            if engine.process(update, into: &expected) != nil { expectedRejections.append((i, .outOfOrderUpdate)) }
        }

        let harness = StoreHarness(kind)
        let batchStore = try harness.open(), singleStore = InMemoryGeofencingStore()
        let batched = try Self.service(batchStore), single = try Self.service(singleStore)
        try batched.addFeatures(scenario.features)
        try single.addFeatures(scenario.features)
        var events: [GeofencingEvent] = [], rejections: [(Int, GeofencingError.Code)] = []
        for start in stride(from: 0, to: updates.count, by: 89) {
            let result = try batched.process(updates[start..<min(start + 89, updates.count)])
            events += result.events
            rejections += result.rejections.map { (start + $0.index, $0.error.code) }
        }
        for update in updates { _ = try single.process([update]) }

        #expect(expected.contains { $0.kind == .dwell } && expectedRejections.contains { $0.1 == .outOfOrderUpdate },
                "dwells and engine rejections are exercised")
        #expect(events.map(\.event) == expected)
        #expect(events.map(\.sequence) == Array(1...Int64(expected.count)))
        #expect(rejections.map(\.0) == expectedRejections.map(\.0))
        #expect(rejections.map(\.1) == expectedRejections.map(\.1))
        try batched.close()
        try single.close()
        let stored = try harness.open().load(), reference = try singleStore.load()
        #expect(stored.devices == reference.devices)
        #expect(stored.processedUpdates == reference.processedUpdates)
        #expect(stored.lastEventSequence == reference.lastEventSequence)
        #expect(stored.acceptedSequence == reference.acceptedSequence)
        #expect(try harness.open().events(after: 0, limit: 10_000) == singleStore.events(after: 0, limit: 10_000))
    }
}
