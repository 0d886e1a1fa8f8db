import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// Event and visit ids are stored (SQLite event log, webhook idempotency keys) and compared across
/// restarts and versions, so their values are pinned: a change to how they are computed must fail here.
/// They derive from what an event is, not from the device's history, so re-posting, retrying or
/// replaying updates gives the same ids (docs/semantics.md, "Event and visit ids").
@Suite("Event ids: pinned, history-independent, unique")
struct EventIdentityTests {
    static let park = Fence(id: "park", region: Region(.circle(center: Coordinate(latitude: 0, longitude: 0), radius: 100)))

    static func carUpdates() -> [LocationUpdate] {
        [0.01, 0.0, 0.0, 0.01].enumerated().map { i, latitude in
            LocationUpdate(device: "car-7", time: Date(timeIntervalSince1970: 1_700_000_000 + Double(i) * 30),
                           latitude: latitude, longitude: 0)
        }
    }

    @Test func pinnedIds() {
        var engine = DetectionEngine(fences: [Self.park])
        let events = Self.carUpdates().flatMap { engine.process($0) }
        #expect(events.map(\.kind) == [.entry, .exit])
        #expect(events.map(\.id) == ["04eb96705bf26b196807518c20f55b16", "a9c845f36766a88ee330e79902027624"])
        #expect(events.map(\.visitID) == ["e97528f8eb4c726e1d0dc6b543d073eb", "e97528f8eb4c726e1d0dc6b543d073eb"])
    }

    @Test("a visit restored from a store written before ordinals keeps its old visit id")
    func legacyVisitKeepsItsID() throws {
        // The state the old engine had after the first two updates of `carUpdates` (entry at update 1),
        // whose entry carried visit id f3c699fe… (the value pinned before ids ignored history).
        var engine = DetectionEngine(fences: [Self.park])
        try engine.restore([DetectionEngine.DeviceSnapshot(
            device: "car-7", lastTime: 1_700_000_030, lastCoordinate: Coordinate(latitude: 0, longitude: 0), updateCount: 2,
            memberships: [.init(fence: "park", entryTime: 1_700_000_030, visitSequence: 1, ordinal: nil, hasDwelled: false)])])
        let events = Self.carUpdates().dropFirst(2).flatMap { engine.process($0) }
        #expect(events.map(\.kind) == [.exit])
        #expect(events.map(\.visitID) == ["f3c699fe79906f8772235bff98aace6d"])
        #expect(engine.snapshot(of: "car-7")?.memberships.isEmpty == true)
    }

    @Test("repeating an update changes no id, in the default and the options path")
    func repeatedUpdateKeepsIDs() {
        for options in [DetectionOptions(), DetectionOptions(initialTrigger: .inside, dwellEvery: 20)] {
            let fence = Fence(id: "park", region: Self.park.region, dwellTime: 30)
            var once = DetectionEngine(fences: [fence], configuration: .init(options: options))
            var twice = DetectionEngine(fences: [fence], configuration: .init(options: options))
            var a: [GeofenceEvent] = [], b: [GeofenceEvent] = []
            for update in Self.carUpdates() {
                once.process(update, into: &a)
                twice.process(update, into: &b)
                twice.process(update, into: &b)  // the same update again: accepted (equal time)
            }
            #expect(!a.isEmpty)
            if options.isOff {
                #expect(a == b)
            } else {  // each update inside reports a level event; the repeats report theirs
                #expect(Self.onlyAddsLevelEvents(a, b))
            }
            #expect(Self.idsIdentifyEvents(b))
        }
    }

    @Test("a device that leaves and re-enters at one instant makes distinct visits; a crash in between changes nothing")
    func sameInstantReentry() throws {
        let fence = Fence(id: "park", region: Self.park.region, dwellTime: 5)
        let t = 1_700_000_000.0
        let updates = [update("d", t, 0, 0), update("d", t, 0.01, 0), update("d", t, 0, 0), update("d", t, 0.01, 0),
                       update("d", t, 0, 0), update("d", t + 10, 0, 0), update("d", t + 20, 0.01, 0)]
        var engine = DetectionEngine(fences: [fence])
        let events = updates.flatMap { engine.process($0) }
        #expect(summary(events) == ["entry park @1700000000", "exit park @1700000000", "entry park @1700000000",
                                    "exit park @1700000000", "entry park @1700000000", "dwell park @1700000005",
                                    "exit park @1700000020"])
        #expect(Set(events.map(\.id)).count == events.count)
        #expect(Set(events.map(\.visitID)).count == 3)
        #expect(engine.snapshot(of: "d")?.instantVisits.isEmpty == true, "forgotten once time moved on")

        // Stop after each update, restore a fresh engine from the snapshot and go on: the same events.
        for cut in 1..<updates.count {
            var first = DetectionEngine(fences: [fence])
            var resumed = updates.prefix(cut).flatMap { first.process($0) }
            var second = DetectionEngine(fences: [fence])
            try second.restore(first.deviceSnapshots, engineState: first.engineState)
            resumed += updates.dropFirst(cut).flatMap { second.process($0) }
            #expect(resumed == events, "resumed after update \(cut)")
        }
    }

    @Test("random duplication and re-posting never change the id of an event", arguments: [
        (UInt64(1), false), (2, false), (3, false), (4, true), (5, true), (6, true),
    ])
    func duplicationAndReposting(seed: UInt64, deduplicate: Bool) {
        var rng = SplitMix64(seed: seed)
        let fences = Self.grid(dwell: 40)
        for options in [DetectionOptions(), DetectionOptions(initialTrigger: .inside, dwellEvery: 60)] {
            let configuration = DetectionEngine.Configuration(options: options, deduplicate: deduplicate)
            let updates = Self.walk(devices: ["a", "b", "c"], count: 300, rng: &rng)
            var plain = DetectionEngine(fences: fences, configuration: configuration)
            var original: [GeofenceEvent] = []
            for update in updates { plain.process(update, into: &original) }

            var perturbed = DetectionEngine(fences: fences, configuration: configuration)
            var events: [GeofenceEvent] = []
            var sent: [LocationUpdate] = []
            for update in updates {
                perturbed.process(update, into: &events)
                sent.append(update)
                switch Int.random(in: 0..<10, using: &rng) {
                case 0, 1:  // sent again at once, once or more
                    for _ in 0...Int.random(in: 0...2, using: &rng) { perturbed.process(update, into: &events) }
                case 2:  // a retried batch of this device: its earlier updates are rejected as older
                    let mine = sent.filter { $0.device == update.device }
                    let batch = mine.suffix(Int.random(in: 1...8, using: &rng))
                    let last = update.time
                    // Without duplicate suppression, an equal-time update other than the last one
                    // re-applies a position and makes genuinely new events; leave such batches out.
                    if deduplicate || batch.dropLast().allSatisfy({ $0.time < last }) {
                        for old in batch { perturbed.process(old, into: &events) }
                    }
                default: break
                }
            }
            #expect(!original.isEmpty)
            if deduplicate || options.isOff {
                #expect(events == original, "seed \(seed), options \(options.isOff ? "off" : "on")")
            } else {  // each update inside reports a level event; the repeats report theirs
                #expect(Self.onlyAddsLevelEvents(original, events), "seed \(seed)")
            }
            #expect(Self.idsIdentifyEvents(events), "seed \(seed)")
        }
    }

    @Test("ids are unique within a device's history on random walks with equal times, options off and on",
          arguments: [UInt64(11), 12, 13])
    func uniqueOnRandomWalks(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        for options in [DetectionOptions(), DetectionOptions(crossings: true, initialTrigger: .inside, dwellEvery: 30),
                        DetectionOptions(entryDelay: 20, exitDelay: 20, interpolate: true)] {
            var engine = DetectionEngine(fences: Self.grid(dwell: 25), configuration: .init(options: options))
            var events: [GeofenceEvent] = []
            for update in Self.walk(devices: ["a", "b"], count: 2000, rng: &rng, jump: true) {
                engine.process(update, into: &events)
            }
            engine.advance(to: Date(timeIntervalSince1970: 1e7), into: &events)
            #expect(events.count > 100)
            #expect(Self.idsIdentifyEvents(events), "seed \(seed)")
            // Events sharing a visit id belong to one device and one fence.
            let byVisit = Dictionary(grouping: events, by: \.visitID)
            #expect(byVisit.values.allSatisfy { Set($0.map { "\($0.device)|\($0.fence)" }).count == 1 })
        }
    }

    /// Whether `more` has every event of `events`, ids and all, and besides them only level events.
    static func onlyAddsLevelEvents(_ events: [GeofenceEvent], _ more: [GeofenceEvent]) -> Bool {
        let all = Set(events)
        return all.isSubset(of: Set(more)) && more.allSatisfy { all.contains($0) || $0.kind == .inside }
    }

    /// Whether events with the same id are the same event: the only repeats are level events an
    /// update at the same instant and position repeated (equal times are accepted).
    static func idsIdentifyEvents(_ events: [GeofenceEvent]) -> Bool {
        let groups: [String: [GeofenceEvent]] = Dictionary(grouping: events, by: { $0.id })
        for group in groups.values where group.count > 1 {
            let first: GeofenceEvent = group[0]
            guard first.kind == .inside, group.allSatisfy({ $0 == first }) else { return false }
        }
        return true
    }

    @Test("a membership stays 24 bytes; its packed flags and sequence do not disturb each other")
    func membershipLayout() {
        #expect(MemoryLayout<Membership>.stride == 24)
        #expect(MemoryLayout<DeviceRecord>.stride == 48)
        var m = Membership(slot: 7, entryTime: 12.5, visitSequence: (1 << 62) - 1, ordinal: .max, hasLegacyID: true)
        #expect(m.visitSequence == (1 << 62) - 1 && m.hasLegacyID && !m.hasDwelled && m.ordinal == .max)
        m.hasDwelled = true
        #expect(m.visitSequence == (1 << 62) - 1 && m.hasLegacyID && m.hasDwelled)
        m.hasDwelled = false
        #expect(m.visitSequence == (1 << 62) - 1 && m.hasLegacyID && !m.hasDwelled)
        let plain = Membership(slot: 0, entryTime: 0, visitSequence: 3, ordinal: 0)
        #expect(!plain.hasLegacyID && !plain.hasDwelled && plain.visitSequence == 3)
    }

    // MARK: - Input

    /// Squares of 0.01° on a 3 × 3 grid (some overlapping), the first ones with a dwell time.
    static func grid(dwell: Double) -> [Fence] {
        var fences: [Fence] = []
        for row in 0..<3 {
            for column in 0..<3 {
                fences.append(square(FenceID("f\(row)\(column)"), lat: Double(row) * 0.008, lon: Double(column) * 0.008,
                                     size: 0.01, dwell: (row + column) % 2 == 0 ? dwell : nil))
            }
        }
        return fences
    }

    /// A random walk per device over the grid, interleaved; a fifth of the steps keep the time (equal
    /// times are accepted), and with `jump` a tenth jump anywhere.
    static func walk(devices: [DeviceID], count: Int, rng: inout SplitMix64, jump: Bool = false) -> [LocationUpdate] {
        var state = devices.map { _ in (t: 1_000_000.0, lat: 0.01, lon: 0.01) }
        var updates: [LocationUpdate] = []
        for _ in 0..<count {
            let d = Int.random(in: 0..<devices.count, using: &rng)
            if Int.random(in: 0..<5, using: &rng) != 0 { state[d].t += Double(Int.random(in: 1...20, using: &rng)) }
            if jump && Int.random(in: 0..<10, using: &rng) == 0 {
                state[d].lat = Double.random(in: -0.002...0.028, using: &rng)
                state[d].lon = Double.random(in: -0.002...0.028, using: &rng)
            } else {
                state[d].lat = min(0.03, max(-0.005, state[d].lat + Double.random(in: -0.003...0.003, using: &rng)))
                state[d].lon = min(0.03, max(-0.005, state[d].lon + Double.random(in: -0.003...0.003, using: &rng)))
            }
            updates.append(update(devices[d], state[d].t, state[d].lat, state[d].lon))
        }
        return updates
    }
}
