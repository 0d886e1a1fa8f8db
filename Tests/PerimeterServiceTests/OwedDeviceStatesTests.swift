import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
@testable import PerimeterService
import PerimeterTestSupport
import Testing

/// The in-memory store's device states left *owed* by the service that committed them
/// (`ServiceCore.owedStates`: the engine holds them until someone may read them) read exactly as if every
/// commit had copied them: two services get the same seeded random calls, one on an
/// `InMemoryGeofencingStore` (owed states), one on the same kind of store behind a forwarding store (the
/// protocol's path, every state copied at its commit). At random moments — with changes pending or not —
/// both stores are read, a second service is configured on each and asked about devices, the services
/// are closed and reopened, or dropped without closing and new ones configured; the reads must agree.
@Suite("Device states owed to the in-memory store read as if copied")
struct OwedDeviceStatesTests {
    static func check(seed: UInt64, options start: GeofencingOptions) throws {
        let scenario = Scenario(seed: seed, fences: 12, devices: 14, updates: 6_000)
        let direct = InMemoryGeofencingStore(), forwarding = InPlaceCommitTests.ForwardingStore()
        var services = [GeofencingService(store: direct, tickInterval: nil),
                        GeofencingService(store: forwarding, tickInterval: nil)]
        var options = start
        for service in services {
            try service.configure(options)
            try service.addFeatures(scenario.features)
        }
        var rng = SplitMix64(seed: seed &* 6_151)
        var position = 0, steps = 0, reads = 0, readsOwed = 0, seconds = 0, drops = 0, reopens = 0
        var statesSeen = 0
        /// Runs `call` on both services and checks that both give the same result.
        func both<T: Equatable>(_ what: String, _ call: (GeofencingService) throws -> T) throws {
            try expectAlike(services, "step \(steps) (\(what))", call)
        }
        /// ``both(_:_:)`` for a call that returns nothing.
        func both(_ what: String, _ call: (GeofencingService) throws -> Void) throws {
            try expectAlike(services, "step \(steps) (\(what))", call)
        }
        /// How many states the first service owes its store now (read without paying them).
        func owed() -> Int { services[0].core.withLockAsIs { $0.owedStates.count } }
        /// Both stores read: equal.
        func read() throws -> Bool {
            if owed() > 0 { readsOwed += 1 }
            reads += 1
            let a = try direct.load(), b = try forwarding.load()
            #expect(a == b, "step \(steps): stored state")
            statesSeen += a.devices.count
            return a == b
        }
        while position < scenario.updates.count {
            steps += 1
            switch Int.random(in: 0..<40, using: &rng) {
            case 0..<24:
                let count = Int.random(in: 1...40, using: &rng)
                let batch = Array(scenario.updates[position..<min(position + count, scenario.updates.count)])
                position += batch.count
                try both("batch") { try $0.process(batch).events }
            case 24:
                let device = DeviceID("dev\(Int.random(in: 0..<14, using: &rng))")
                let exits = Bool.random(using: &rng)
                try both("forget") { try $0.forget(device: device, emittingExits: exits) }
            case 25:
                var feature = scenario.features.randomElement(using: &rng)!
                if Bool.random(using: &rng) { feature.properties["name"] = .string("renamed \(steps)") }
                try both("replace") { try $0.addFeature(feature) }
            case 26:
                let feature = scenario.features.randomElement(using: &rng)!
                try both("remove") { try $0.removeFeature(id: FenceID(feature.id!.description)) }
            case 27:
                let missing = scenario.features.shuffled(using: &rng).prefix(4)
                try both("add back") { try $0.addFeatures(Array(missing)) }
            case 28:
                options.defaultDwellTime = options.defaultDwellTime == 40 ? 55 : 40
                try both("configure") { try $0.configure(options) }
            case 29:
                let time = scenario.updates[max(0, position - 1)].time.addingTimeInterval(Double.random(in: 0...120, using: &rng))
                try both("advance") { try $0.advance(to: time) }
            case 30:
                try both("flush") { try $0.flush() }
            case 31..<36:
                guard try read() else { break }
            case 36:
                // A second service on each store, configured while the first goes on: it loads what was
                // committed; asked about devices, both agree. Dropped unchanged.
                seconds += 1
                let readers = [GeofencingService(store: direct, tickInterval: nil),
                               GeofencingService(store: forwarding, tickInterval: nil)]
                for reader in readers { try reader.configure(options) }
                for d in 0..<14 {
                    let statuses = readers.map { try? $0.deviceStatus(of: DeviceID("dev\(d)")) }
                    #expect(statuses[0] == statuses[1], "step \(steps): a second service's status of dev\(d)")
                }
                #expect(readers[0].processedUpdateCount == readers[1].processedUpdateCount)
            case 37:
                // Dropped without closing (what is pending is lost on both), then reopened.
                drops += 1
                services = []
                services = [GeofencingService(store: direct, tickInterval: nil),
                            GeofencingService(store: forwarding, tickInterval: nil)]
                for service in services { try service.configure(options) }
            default:
                reopens += 1
                for service in services { try service.close() }
                guard try read() else { break }
                services = [GeofencingService(store: direct, tickInterval: nil),
                            GeofencingService(store: forwarding, tickInterval: nil)]
                for service in services { try service.configure(options) }
            }
        }
        _ = try read()
        let a = try direct.events(after: 0, limit: .max), b = try forwarding.events(after: 0, limit: .max)
        #expect(a == b && !a.isEmpty, "the event logs (\(a.count) and \(b.count) events)")
        #expect(readsOwed > 10 && seconds > 3 && drops > 3 && reopens > 3 && statesSeen > 500,
                "the scenario did what it is for (\(reads) reads, \(readsOwed) with states owed, \(seconds) second services, \(drops) drops, \(reopens) reopens)")
        for service in services { try service.close() }
    }

    @Test("durability per call and deferred; one and three shards",
          arguments: [(1, UInt64(61), 0), (3, 62, 0), (1, 63, 30), (2, 64, 30)])
    func randomCalls(shards: Int, seed: UInt64, every: Int) throws {
        try Self.check(seed: seed, options: GeofencingOptions(
            defaultDwellTime: 40, timeModel: .data, durability: every == 0 ? .everyCall : .everyUpdates(every),
            shards: shards))
    }

    @Test("detection and stream options", arguments: [UInt64(65)])
    func detectionOptions(seed: UInt64) throws {
        try Self.check(seed: seed, options: GeofencingOptions(
            defaultDwellTime: 30, timeModel: .data, durability: .everyCall,
            detectionOptions: DetectionOptions(entryDelay: 4, exitDelay: 3, dwellEvery: 30, staleAfter: 40, exitOnStale: true),
            reorderWindow: 5, deduplicate: true))
    }

    /// What the reader thread of ``concurrentReader()`` shares with the test.
    final class ReaderLog: @unchecked Sendable {
        // @unchecked: every `var` is only touched with `lock` held.
        private let lock = NSLock()
        private var states: [StoredState] = []
        private var stop = false
        var stopped: Bool { lock.withLock { stop } }
        func finish() { lock.withLock { stop = true } }
        func append(_ state: StoredState) { lock.withLock { states.append(state) } }
        var read: [StoredState] { lock.withLock { states } }
    }

    /// A reader on another thread loads the store while the service processes and commits (owing the
    /// states): every state it reads is one the service committed — the one a twin service on the
    /// protocol's path stored after the same call (found by its processed-update count).
    @Test("a concurrent reader reads committed states only")
    func concurrentReader() throws {
        let scenario = Scenario(seed: 66, fences: 12, devices: 14, updates: 4_000)
        let store = InMemoryGeofencingStore(), twinStore = InPlaceCommitTests.ForwardingStore()
        let service = GeofencingService(store: store, tickInterval: nil)
        let twin = GeofencingService(store: twinStore, tickInterval: nil)
        for s in [service, twin] {
            try s.configure(GeofencingOptions(defaultDwellTime: 40, timeModel: .data))
            try s.addFeatures(scenario.features)
        }
        var committed: [UInt64: StoredState] = [:]
        let log = ReaderLog()
        let reader = Thread {
            while !log.stopped {
                if let state = try? store.load() { log.append(state) }
            }
        }
        reader.start()
        var position = 0, call = 0, owedAtCalls = 0
        while position < scenario.updates.count {
            call += 1
            let count = 1 + (call * 7) % 30
            let batch = Array(scenario.updates[position..<min(position + count, scenario.updates.count)])
            position += batch.count
            _ = try service.process(batch)
            _ = try twin.process(batch)
            if service.core.withLockAsIs({ $0.owedStates.count }) > 0 { owedAtCalls += 1 }
            let state = try twinStore.load()
            committed[state.processedUpdates] = state
        }
        log.finish()
        while !reader.isFinished { usleep(1_000) }
        let reads = log.read
        var matched = 0
        for state in reads {
            guard let expected = committed[state.processedUpdates] else { continue }  // before the first call
            #expect(state == expected, "a concurrent read at \(state.processedUpdates) updates")
            matched += 1
        }
        #expect(try store.load() == twinStore.load(), "the last state")
        #expect(matched > 10 && owedAtCalls > 10,
                "the reader read while the service ran (\(reads.count) reads, \(matched) compared, states owed after \(owedAtCalls) calls)")
    }
}
