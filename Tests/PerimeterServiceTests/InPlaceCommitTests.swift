import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
@testable import PerimeterService
import PerimeterTestSupport
import Testing

/// The in-memory store's commit, made in place (`ServiceCore.commitInPlace`: the engine writes each
/// changed device's state straight into the store's), stores exactly what the protocol's commit stores
/// (`StoreChanges` with a `DeviceChange` per device, copied by the store): two services get the same
/// random calls — batches, forgets, fences added, replaced, removed and all removed, reconfigurations,
/// dwells fired by `advance`, close and reopen — one on an `InMemoryGeofencingStore` (the in-place
/// path), one on the same kind of store behind a forwarding store (the protocol's path, which the service
/// cannot see through); after every call both stores hold equal `StoredState`s and equal event logs.
@Suite("In-memory commit in place equals the protocol's commit")
struct InPlaceCommitTests {
    /// Forwards to an in-memory store through ``GeofencingStore``: the service commits to it by the
    /// protocol's path.
    final class ForwardingStore: GeofencingStore {
        let inner = InMemoryGeofencingStore()
        func load() throws -> StoredState { try inner.load() }
        func commit(_ changes: StoreChanges) throws { try inner.commit(changes) }
        func events(after sequence: Int64, limit: Int) throws -> [GeofencingEvent] {
            try inner.events(after: sequence, limit: limit)
        }
    }

    static func check(seed: UInt64, options start: GeofencingOptions) throws {
        let scenario = Scenario(seed: seed, fences: 12, devices: 14, updates: 6_000)
        let direct = InMemoryGeofencingStore(), forwarding = ForwardingStore()
        var services = [GeofencingService(store: direct, tickInterval: nil),
                        GeofencingService(store: forwarding, tickInterval: nil)]
        var options = start
        for service in services {
            try service.configure(options)
            try service.addFeatures(scenario.features)
        }
        var rng = SplitMix64(seed: seed &* 7_919)
        var position = 0, steps = 0, forgets = 0, removals = 0, reopens = 0, statesSeen = 0
        /// Runs `call` on both services and checks that both give the same result.
        func both<T: Equatable>(_ what: String, _ call: (GeofencingService) throws -> T) throws {
            try expectAlike(services, "step \(steps) (\(what))", call)
        }
        /// ``both(_:_:)`` for a call that returns nothing.
        func both(_ what: String, _ call: (GeofencingService) throws -> Void) throws {
            try expectAlike(services, "step \(steps) (\(what))", call)
        }
        while position < scenario.updates.count {
            steps += 1
            switch Int.random(in: 0..<20, using: &rng) {
            case 0..<11:
                let count = Int.random(in: 1...40, using: &rng)
                let batch = Array(scenario.updates[position..<min(position + count, scenario.updates.count)])
                position += batch.count
                try both("batch") { try $0.process(batch).events }
            case 11, 12:
                let device = DeviceID("dev\(Int.random(in: 0..<14, using: &rng))")
                let exits = Bool.random(using: &rng)
                forgets += 1
                try both("forget") { try $0.forget(device: device, emittingExits: exits) }
            case 13:
                // A fence replaced: the same feature again, or moved a little (new name).
                var feature = scenario.features.randomElement(using: &rng)!
                if Bool.random(using: &rng) { feature.properties["name"] = .string("renamed \(steps)") }
                try both("replace") { try $0.addFeature(feature) }
            case 14, 15:
                let feature = scenario.features.randomElement(using: &rng)!
                removals += 1
                try both("remove") { try $0.removeFeature(id: FenceID(feature.id!.description)) }
            case 16:
                let missing = scenario.features.shuffled(using: &rng).prefix(4)
                try both("add back") { try $0.addFeatures(Array(missing)) }
            case 17:
                if Int.random(in: 0..<4, using: &rng) == 0 {
                    try both("remove all") { try $0.clearFeatures() }
                    try both("add all") { try $0.addFeatures(scenario.features) }
                } else {
                    options.defaultDwellTime = options.defaultDwellTime == 40 ? 55 : 40
                    try both("configure") { try $0.configure(options) }
                }
            case 18:
                let time = scenario.updates[max(0, position - 1)].time.addingTimeInterval(Double.random(in: 0...120, using: &rng))
                try both("advance") { try $0.advance(to: time) }
            default:
                // Close and reopen on the same store: the reopened service loads what was committed.
                reopens += 1
                for service in services { try service.close() }
                services = [GeofencingService(store: direct, tickInterval: nil),
                            GeofencingService(store: forwarding, tickInterval: nil)]
                for service in services { try service.configure(options) }
            }
            for service in services { try service.flush() }
            let a = try direct.load(), b = try forwarding.load()
            #expect(a == b, "step \(steps): stored state")
            statesSeen += a.devices.count
            if a != b { break }
        }
        let a = try direct.events(after: 0, limit: .max), b = try forwarding.events(after: 0, limit: .max)
        #expect(a == b && !a.isEmpty, "the event logs (\(a.count) and \(b.count) events)")
        #expect(forgets > 10 && removals > 10 && reopens > 3 && statesSeen > 1_000,
                "the scenario did what it is for (\(forgets) forgets, \(removals) removals, \(reopens) reopens)")
        for service in services { try service.close() }
    }

    @Test("default semantics with dwells, durability per call and deferred: one and three shards",
          arguments: [(1, UInt64(31), 0), (3, 32, 0), (1, 33, 250), (2, 34, 250)])
    func defaultSemantics(shards: Int, seed: UInt64, every: Int) throws {
        try Self.check(seed: seed, options: GeofencingOptions(
            defaultDwellTime: 40, timeModel: .data, durability: every == 0 ? .everyCall : .everyUpdates(every),
            shards: shards))
    }

    @Test("detection and stream options: one and two shards", arguments: [(1, UInt64(35)), (2, 36)])
    func options(shards: Int, seed: UInt64) throws {
        try Self.check(seed: seed, options: GeofencingOptions(
            defaultDwellTime: 30, timeModel: .data, durability: .everyUpdates(120),
            detectionOptions: DetectionOptions(entryDelay: 4, exitDelay: 3, dwellEvery: 30, staleAfter: 40, exitOnStale: true),
            reorderWindow: 5, deduplicate: true, shards: shards))
    }

    /// The in-place commit is atomic: when the store's log has moved on (another service committed
    /// events to it), the commit stores nothing — no device state, no event, no counter — and the
    /// changes stay pending.
    @Test("a commit whose events do not continue the store's log stores nothing")
    func failedCommitStoresNothing() throws {
        let store = InMemoryGeofencingStore()
        let options = GeofencingOptions(timeModel: .data, durability: .everyUpdates(1_000))
        let first = GeofencingService(store: store, tickInterval: nil)
        try first.configure(options)
        try first.addFeature(circle("z", latitude: 0, longitude: 0, radius: 100))
        let second = GeofencingService(store: store, tickInterval: nil)
        try second.configure(options)  // loads the store as it is: no event yet
        _ = try first.process([LocationUpdate(device: "a", time: date(0), latitude: 0, longitude: 0)])
        try first.flush()  // event 1 and device a stored
        _ = try second.process([LocationUpdate(device: "b", time: date(0), latitude: 0, longitude: 0),
                                LocationUpdate(device: "a", time: date(5), latitude: 1, longitude: 1)])
        let before = try store.load()
        #expect(throws: GeofencingError.self) { try second.flush() }
        #expect(try store.load() == before, "nothing of the failed commit is stored")
        #expect(before.devices.map(\.device) == ["a"] && before.devices[0].updateCount == 1)
        #expect(throws: GeofencingError.self) { try second.close() }  // still pending, still refused
    }
}
