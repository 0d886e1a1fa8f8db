import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterService
import PerimeterTestSupport
import Testing

/// A logged event carries its fence's name, group, properties and rendered message as the fence is when
/// the event is logged. The service finds them by the fence slot the engine recorded in the event, from
/// labels it keeps per slot; whatever happens to the fences between batches — replaced with new
/// properties, removed, added again (a new slot), all removed, a reconfiguration that numbers the slots
/// anew — each event must carry exactly what the fence with its id gives at that moment.
@Suite("Event fence labels: logged events name their fence as it is")
struct EventFenceLabelTests {
    /// A circle fence with a name, a group and properties that differ by `version`, and (for some
    /// versions) a message template.
    static func fence(_ i: Int, version: Int, latitude: Double, longitude: Double) -> GeoJSON.Feature {
        var extra: [String: JSONValue] = ["name": .string("fence \(i) v\(version)"), "version": .integer(Int64(version))]
        if version % 3 != 0 { extra["perimeter:message"] = .string("{device} {event} {name} v{version}") }
        return circle("f\(i)", latitude: latitude, longitude: longitude, radius: 900, dwell: version % 2 == 0 ? 30 : nil,
                      group: version % 2 == 0 ? "even" : "odd", extra: extra)
    }

    /// `events` as the service must log them: each with the fence that has its id now.
    static func expected(_ events: [GeofencingEvent], _ service: GeofencingService) throws -> [GeofencingEvent] {
        try events.map { GeofencingEvent(sequence: $0.sequence, event: $0.event, fence: try service.fence(id: $0.event.fence)) }
    }

    @Test("random fence edits between batches", arguments: [(1, UInt64(11)), (1, 12), (2, 13), (3, 14)])
    func eventsNameTheCurrentFence(shards: Int, seed: UInt64) throws {
        let scenario = Scenario(seed: seed, fences: 1, devices: 10, updates: 1_500)
        var rng = SplitMix64(seed: seed &* 104_729)
        let centres = (0..<10).map { _ in
            (48.0 + Double.random(in: 0...0.05, using: &rng), 2.0 + Double.random(in: 0...0.05, using: &rng))
        }
        var versions = Array(repeating: 0, count: centres.count)
        var present = Array(repeating: true, count: centres.count)
        let store = InMemoryGeofencingStore()
        let service = GeofencingService(store: store, tickInterval: nil)
        var options = GeofencingOptions(timeModel: .data, shards: shards)
        try service.configure(options)
        try service.addFeatures(centres.indices.map { Self.fence($0, version: 0, latitude: centres[$0].0, longitude: centres[$0].1) })
        var logged: [GeofencingEvent] = []
        var edits = 0, named = 0, rendered = 0
        for (k, start) in stride(from: 0, to: scenario.updates.count, by: 50).enumerated() {
            let batch = scenario.updates[start..<min(start + 50, scenario.updates.count)]
            let result = try service.process(batch)
            #expect(result.events == (try Self.expected(result.events, service)), "batch \(k)")
            logged += result.events
            named += result.events.filter { $0.fenceName != nil }.count
            rendered += result.events.filter { $0.message != nil }.count
            // Dwells fired by the clock and exits of a forgotten device are logged the same way.
            let dwells = try service.advance(to: batch.last!.time.addingTimeInterval(20))
            #expect(dwells == (try Self.expected(dwells, service)), "batch \(k): dwells")
            logged += dwells
            if Int.random(in: 0..<5, using: &rng) == 0, let device = batch.randomElement(using: &rng)?.device,
               try service.deviceStatus(of: device).lastUpdateTime != nil {
                let exits = try service.forget(device: device, emittingExits: true)
                #expect(exits == (try Self.expected(exits, service)), "batch \(k): exits of a forgotten device")
                logged += exits
            }
            // Edit some fences: replace (new name, group, properties, message), remove, add again.
            for _ in 0..<Int.random(in: 0...2, using: &rng) {
                let i = Int.random(in: 0..<centres.count, using: &rng)
                edits += 1
                if present[i], Int.random(in: 0..<3, using: &rng) == 0 {
                    try service.removeFeature(id: FenceID("f\(i)"))
                    present[i] = false
                } else {
                    versions[i] += 1
                    try service.addFeatures([Self.fence(i, version: versions[i], latitude: centres[i].0, longitude: centres[i].1)])
                    present[i] = true
                }
            }
            if k % 9 == 8 {
                // A new engine: fences numbered anew, in position order (removed fences leave no gap).
                options.defaultDwellTime = options.defaultDwellTime == nil ? 45 : nil
                try service.configure(options)
            }
            if k == 20 {
                try service.clearFeatures()
                present = present.map { _ in false }
            }
        }
        #expect(edits > 20 && named > 50 && rendered > 20,
                "the scenario exercised edits (\(edits)), named events (\(named)) and messages (\(rendered))")
        // The log the store holds is the events as returned.
        try service.flush()
        #expect(try store.events(after: 0, limit: .max) == logged)
        try service.close()
    }
}
