import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterService
import Testing
import PerimeterTestSupport

/// Detection options survive restarts: a service reopened at random points mid-stream logs exactly the
/// events of an uninterrupted run, for every option that keeps state, on both stores.
@Suite("Restart resumes exactly, with detection options")
struct ServiceOptionsRestartTests {
    /// One option that keeps state: feature properties, service options, how the stream is disturbed,
    /// and what the log must show for the test to mean anything.
    struct Setup: Sendable, CustomStringConvertible {
        var description: String
        var properties: [String: JSONValue] = [:]
        /// The data clock: these runs are compared with the bare engine's replay.
        var options = GeofencingOptions(defaultDwellTime: 30, timeModel: .data)
        var step = 0.002
        var shuffleWithin = 0.0
        var repeats = false
        var shows: @Sendable ([GeofenceEvent]) -> Bool

        static let all: [Setup] = [
            Setup(description: "debounce", properties: ["perimeter:entry-delay": 12, "perimeter:exit-delay": 9],
                  shows: { $0.contains { $0.kind == .entry } && $0.contains { $0.kind == .exit } }),
            Setup(description: "dwell every", properties: ["perimeter:dwell-every": 7],
                  shows: { events in Dictionary(grouping: events.filter { $0.kind == .dwell }, by: \.visitID).values.contains { $0.count > 2 } }),
            Setup(description: "staleness",
                  options: GeofencingOptions(defaultDwellTime: 30, timeModel: .data,
                                             detectionOptions: DetectionOptions(staleAfter: 25, exitOnStale: true)),
                  shows: { $0.contains { $0.reason == .timeout } }),
            Setup(description: "reorder window", options: GeofencingOptions(defaultDwellTime: 30, timeModel: .data, reorderWindow: 20),
                  shuffleWithin: 20, shows: { $0.count > 20 }),
            Setup(description: "duplicate safety",
                  properties: ["perimeter:initial": "inside"],
                  options: GeofencingOptions(defaultDwellTime: 30, timeModel: .data, deduplicate: true), repeats: true,
                  shows: { $0.contains { $0.kind == .inside } }),
            Setup(description: "crossings",
                  options: GeofencingOptions(defaultDwellTime: 30, timeModel: .data,
                                             detectionOptions: DetectionOptions(crossings: true, interpolate: true)),
                  step: 0.012, shows: { $0.contains { $0.kind == .cross } }),
        ]
    }

    /// The scenario's fences with the setup's properties, and its stream disturbed as the setup says.
    static func inputs(_ setup: Setup, seed: UInt64) -> (features: [GeoJSON.Feature], late: GeoJSON.Feature, updates: [LocationUpdate]) {
        var rng = SplitMix64(seed: seed)
        let base = Scenario(seed: seed, fences: 10, devices: 4, updates: 0)
        let features = base.features.map { feature -> GeoJSON.Feature in
            var copy = feature
            copy.properties.merge(setup.properties) { $1 }
            return copy
        }
        var late = circle("late", latitude: 48.025, longitude: 2.025, radius: 1200, dwell: 20)
        late.properties.merge(setup.properties) { $1 }
        var positions = (0..<4).map { _ in (48.0 + Double.random(in: 0...0.05, using: &rng), 2.0 + Double.random(in: 0...0.05, using: &rng)) }
        var time = 1_750_000_000.0
        var updates: [LocationUpdate] = []
        for _ in 0..<360 {
            let d = Int.random(in: 0..<4, using: &rng)
            positions[d].0 = min(48.06, max(47.99, positions[d].0 + Double.random(in: -setup.step...setup.step, using: &rng)))
            positions[d].1 = min(2.06, max(1.99, positions[d].1 + Double.random(in: -setup.step...setup.step, using: &rng)))
            time += Double(Int.random(in: 0...12, using: &rng))
            updates.append(LocationUpdate(device: DeviceID("dev\(d)"), time: Date(timeIntervalSince1970: time),
                                          latitude: positions[d].0, longitude: positions[d].1))
        }
        if setup.shuffleWithin > 0 {
            let arrival = updates.map { $0.time.timeIntervalSince1970 + Double.random(in: 0..<setup.shuffleWithin, using: &rng) }
            updates = updates.indices.sorted { (arrival[$0], $0) < (arrival[$1], $1) }.map { updates[$0] }
        }
        if setup.repeats {
            updates = updates.flatMap { u in Array(repeating: u, count: Int.random(in: 1...2, using: &rng)) }
            updates += updates[40..<70]  // a re-upload
        }
        return (features, late, updates)
    }

    /// Streams the updates in random batches, adding `late` a third of the way; restarts the service
    /// before a batch with probability `restartChance`. Returns the whole log. Without restarts
    /// (`restartChance` 0) the log is also checked against the bare engine driven the same way.
    /// `shards`: the engine shard counts of the service's successive starts (cycled).
    static func run(_ setup: Setup, seed: UInt64, kind: StoreKind, restartChance: Int, shards: [Int] = [1]) throws -> [GeofencingEvent] {
        let (features, late, updates) = inputs(setup, seed: seed)
        var rng = SplitMix64(seed: seed &* 31)
        let harness = StoreHarness(kind)
        var starts = 0
        func options() -> GeofencingOptions {
            var options = setup.options
            options.shards = shards[starts % shards.count]
            starts += 1
            return options
        }
        var service = try harness.service(options())
        try service.addFeatures(features)
        let o = setup.options
        var engine = DetectionEngine(fences: FenceLoaderHelper.fences(features),
                                     configuration: .init(defaultDwellTime: o.defaultDwellTime, options: o.detectionOptions,
                                                          reorderWindow: o.reorderWindow, deduplicate: o.deduplicate))
        var oracle: [GeofenceEvent] = []
        var position = 0
        var lateAdded = false
        while position < updates.count {
            if restartChance > 0, Int.random(in: 0..<restartChance, using: &rng) == 0 {
                service = try harness.service(options())
                #expect(service.processedUpdateCount == UInt64(position))
            }
            if !lateAdded, position >= updates.count / 3 {
                try service.addFeature(late)
                engine.upsert(contentsOf: FenceLoaderHelper.fences([late]))
                lateAdded = true
            }
            let end = min(updates.count, position + Int.random(in: 1...25, using: &rng))
            try service.process(updates[position..<end])
            for u in updates[position..<end] {
                engine.advance(to: u.time, into: &oracle)
                engine.process(u, into: &oracle)
            }
            position = end
        }
        if restartChance > 0 { service = try harness.service(options()) }
        let end = (updates.map(\.time).max() ?? Date()).addingTimeInterval(300)  // dwell-every keeps firing
        try service.advance(to: end)
        engine.advance(to: end, into: &oracle)
        let log = try service.loggedEvents(after: 0, limit: 100_000)
        if restartChance == 0, shards == [1] { #expect(log.map(\.event) == oracle, "the service logs the bare engine's events") }
        return log
    }

    @Test("with engine shards, restarted with other shard counts, the service logs each device's events of one engine",
          arguments: Setup.all, StoreKind.allCases)
    func shardedRestartEquivalence(setup: Setup, kind: StoreKind) throws {
        let expected = try Self.run(setup, seed: 5, kind: kind, restartChance: 0).map(\.event)
        let actual = try Self.run(setup, seed: 5, kind: kind, restartChance: 3, shards: [3, 1, 2, 5]).map(\.event)
        #expect(actual.count == expected.count)
        #expect(Dictionary(grouping: actual, by: \.device) == Dictionary(grouping: expected, by: \.device))
        if setup.options.reorderWindow == 0 {
            // Without reorder releases, the clock's events of several devices come by time, then device, as one engine's.
            #expect(actual == expected)
        }
    }

    @Test("a service reopened mid-stream logs the events of an uninterrupted run",
          arguments: Setup.all, StoreKind.allCases)
    func restartEquivalence(setup: Setup, kind: StoreKind) throws {
        let expected = try Self.run(setup, seed: 5, kind: kind, restartChance: 0)
        #expect(setup.shows(expected.map(\.event)), "the scenario must exercise \(setup)")
        let actual = try Self.run(setup, seed: 5, kind: kind, restartChance: 3)
        #expect(actual.count == expected.count)
        #expect(actual == expected)
    }

    @Test("reconfiguring keeps option state; turning the reorder window off processes what waits")
    func reconfigure() throws {
        let service = GeofencingService()
        try service.configure(GeofencingOptions(reorderWindow: 60))
        try service.addFeature(circle("zone", latitude: 48, longitude: 2, radius: 500,
                                      extra: ["perimeter:entry-delay": 10]))
        try service.process([LocationUpdate(device: "d", time: date(0), latitude: 48, longitude: 2),
                             LocationUpdate(device: "d", time: date(30), latitude: 48, longitude: 2)])
        #expect(service.lastEventSequence == 0, "both updates wait in the reorder window")
        try service.configure(GeofencingOptions(reorderWindow: 0))
        let log = try service.loggedEvents(after: 0)
        #expect(log.map(\.event.kind) == [.entry])
        #expect(log.first?.event.time == date(0))
        #expect(log.first?.event.observedAt == date(0))
    }

    @Test("cross and inside events reach the observers' new callbacks")
    func observers() throws {
        final class Kinds: ExtendedGeofencingObserver, @unchecked Sendable {
            let lock = NSLock()
            var kinds: [String] = []
            func onEntry(event: GeofencingEvent) { lock.withLock { kinds.append("entry") } }
            func onDwell(event: GeofencingEvent) { lock.withLock { kinds.append("dwell") } }
            func onExit(event: GeofencingEvent) { lock.withLock { kinds.append("exit") } }
            func onCross(event: GeofencingEvent) { lock.withLock { kinds.append("cross") } }
            func onInside(event: GeofencingEvent) { lock.withLock { kinds.append("inside") } }
            func onError(error: GeofencingError) {}
            func onUserConsentChanged(isConsentGiven: Bool) {}
            func onUserConsentChanged(device: DeviceID, isConsentGiven: Bool) {}
        }
        let service = GeofencingService()
        try service.configure(GeofencingOptions())
        try service.addFeatures([circle("pass", latitude: 48, longitude: 2.01, radius: 300, extra: ["perimeter:crossings": true]),
                                 circle("stay", latitude: 48, longitude: 2.03, radius: 300, extra: ["perimeter:initial": "inside"])])
        let observer = Kinds()
        service.addObserver(observer)
        try service.process([LocationUpdate(device: "a", time: date(0), latitude: 48, longitude: 2.0),
                             LocationUpdate(device: "a", time: date(20), latitude: 48, longitude: 2.02),
                             LocationUpdate(device: "b", time: date(30), latitude: 48, longitude: 2.03),
                             LocationUpdate(device: "b", time: date(40), latitude: 48, longitude: 2.03)])
        #expect(observer.lock.withLock { observer.kinds } == ["cross", "inside", "inside"])
    }

    @Test("engine-wide detection options are validated")
    func badOptions() {
        let service = GeofencingService()
        for options in [GeofencingOptions(reorderWindow: -1), GeofencingOptions(reorderWindow: .infinity),
                        GeofencingOptions(detectionOptions: DetectionOptions(entryDelay: -5)),
                        GeofencingOptions(detectionOptions: DetectionOptions(staleAfter: .nan))] {
            do {
                try service.configure(options)
                Issue.record("expected \(options) to be refused")
            } catch {
                #expect(error.code == .invalidArgument)
                #expect(error.message.contains("reorderWindow") || error.message.contains("detectionOptions."))
            }
        }
        #expect(service.options == nil)
    }
}
