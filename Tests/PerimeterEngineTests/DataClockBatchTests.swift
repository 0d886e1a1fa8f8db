import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// `processOnDataClock` (one call for a run of updates, each preceded by every device's timers due by its
/// time) against the loop it stands for: one `devicesWithDwellsDue`/`advance(to:)` and one `process` call
/// per update. Same events (ids and order), rejections, changed devices, state and pending timers.
@Suite("Data clock batches equal one call per update")
struct DataClockBatchTests {
    /// The loop `processOnDataClock` is documented to equal.
    static func reference(_ batch: [LocationUpdate], clockOnly: Set<Int>, on engine: inout DetectionEngine)
        -> (events: [GeofenceEvent], rejections: [String], changed: [DeviceID]) {
        var events: [GeofenceEvent] = [], rejections: [String] = [], changed: [DeviceID] = []
        for (i, update) in batch.enumerated() {
            let due = engine.devicesWithDwellsDue(by: update.time)
            if !due.isEmpty {
                changed += due
                engine.advance(to: update.time, into: &events)
            }
            if clockOnly.contains(i) { continue }
            if let rejection = engine.process(update, into: &events) {
                rejections.append("\(i): \(rejection)")
            } else {
                changed.append(update.device)
            }
        }
        return (events, rejections, changed)
    }

    /// The devices in order of first appearance: what marking them changed one after another records.
    static func firstTouches(_ devices: [DeviceID]) -> [DeviceID] {
        var seen = Set<DeviceID>()
        return devices.filter { seen.insert($0).inserted }
    }

    /// Random batches of `devices` walking over a few squares, with out-of-order updates (rejected), bad
    /// latitudes (rejected), equal times, and some positions given as clock-only.
    static func batches(seed: UInt64, devices count: Int, batches: Int) -> [(updates: [LocationUpdate], clockOnly: [Int])] {
        var random = SplitMix64(seed: seed)
        let devices = (0..<count).map { DeviceID("device-\($0)") } + [DeviceID("é-\(seed)"), DeviceID("e\u{301}-\(seed)")]
        var clock = 0.0
        var last = [DeviceID: Double]()
        return (0..<batches).map { _ in
            let size = [1, 7, 60, 400].randomElement(using: &random)!
            var clockOnly: [Int] = []
            let updates = (0..<size).map { i -> LocationUpdate in
                let device = devices.randomElement(using: &random)!
                clock += Double(Int.random(in: 0...3, using: &random))
                var t = max(clock, last[device] ?? 0)
                if Int.random(in: 0..<40, using: &random) == 0 { t -= 25 }  // out of order for its device: rejected
                last[device] = max(last[device] ?? 0, t)
                if Int.random(in: 0..<25, using: &random) == 0 { clockOnly.append(i) }
                let lat = Int.random(in: 0..<80, using: &random) == 0 ? 95 : Double(Int.random(in: -2...20, using: &random)) / 2
                return update(device, t, lat, Double(Int.random(in: -2...20, using: &random)) / 2)
            }
            return (updates, clockOnly)
        }
    }

    static func fences(seed: UInt64, options: DetectionOptions = DetectionOptions()) -> [Fence] {
        var random = SplitMix64(seed: seed &+ 1)
        return (0..<8).map { i in
            var fence = square(FenceID("f\(i)"), lat: Double(Int.random(in: 0...6, using: &random)),
                               lon: Double(Int.random(in: 0...6, using: &random)), size: Double(Int.random(in: 1...4, using: &random)),
                               dwell: i % 3 == 0 ? nil : Double(Int.random(in: 5...60, using: &random)))
            if i % 2 == 0 { fence.options = options }
            return fence
        }
    }

    /// Runs `batches` through a plain engine one call per update and through `processOnDataClock` on
    /// `engines` (plain or sharded), with a fence change every few batches, and compares everything.
    static func compare(_ batches: [(updates: [LocationUpdate], clockOnly: [Int])], fences: [Fence],
                        configuration: DetectionEngine.Configuration, shardCounts: [Int], exactOrder: Bool = true) {
        var plain = DetectionEngine(fences: fences, configuration: configuration)
        var batched = DetectionEngine(fences: fences, configuration: configuration)
        var sharded = shardCounts.map { ShardedEngine(fences: fences, configuration: configuration, shards: $0) }
        var events = 0, timerEvents = 0
        for (k, batch) in batches.enumerated() {
            if k % 9 == 8 {
                // A fence change between batches: a fence moved (its dwell rescheduled), or removed.
                if k % 2 == 0 {
                    let moved = square(fences[1].id, lat: Double(k % 5), lon: 2, size: 3, dwell: 12)
                    plain.upsert(moved); batched.upsert(moved)
                    for s in sharded.indices { sharded[s].upsert(moved) }
                } else {
                    let id = fences[k % fences.count].id
                    plain.remove(id: id); batched.remove(id: id)
                    for s in sharded.indices { sharded[s].remove(id: id) }
                }
            }
            let expected = reference(batch.updates, clockOnly: Set(batch.clockOnly), on: &plain)
            events += expected.events.count
            timerEvents += expected.events.filter { $0.kind == .dwell }.count
            var outputs = [batch.updates.withUnsafeBufferPointer { batched.processOnDataClock($0, clockOnly: batch.clockOnly) }]
            for s in sharded.indices {
                outputs.append(batch.updates.withUnsafeBufferPointer { sharded[s].processOnDataClock($0, clockOnly: batch.clockOnly) })
            }
            for (o, output) in outputs.enumerated() {
                let single = o == 0 || shardCounts[o - 1] == 1
                let engine = o == 0 ? "one engine" : "\(shardCounts[o - 1]) shards"
                if single {
                    #expect(output.events == expected.events, "batch \(k), \(engine): events")
                } else {
                    // Several shards merge what the clock fires by device (docs/semantics.md, "Shards"):
                    // each device's events are one engine's, in its order.
                    #expect(Dictionary(grouping: output.events, by: \.device) == Dictionary(grouping: expected.events, by: \.device),
                            "batch \(k), \(engine): each device's events")
                }
                #expect(output.rejections.map { "\($0.index): \($0.rejection)" } == expected.rejections, "batch \(k), \(engine): rejections")
                if single, exactOrder {
                    #expect(firstTouches(output.changedDevices) == firstTouches(expected.changed), "batch \(k), \(engine): changed devices")
                } else {
                    // With options, the order in which `devicesWithDwellsDue` names devices depends on how its
                    // heaps lie, which is not the same in two engines given the same calls (their option
                    // timers are rescheduled in the order of a `Set`); several shards name them shard by
                    // shard. The same devices either way.
                    #expect(Set(output.changedDevices) == Set(expected.changed), "batch \(k), \(engine): changed devices")
                }
            }
        }
        #expect(events > 100, "the batches cause events (\(events))")
        #expect(timerEvents > 0 || configuration.defaultDwellTime == nil, "some dwells fire from the clock")
        // Same state and the same pending timers: a clock far ahead fires the same events.
        #expect(batched.deviceSnapshots == plain.deviceSnapshots)
        #expect(batched.statistics == plain.statistics)
        for s in sharded.indices {
            #expect(Set(sharded[s].deviceSnapshots.map(\.device)) == Set(plain.deviceSnapshots.map(\.device)))
            // Presence and position (the shards number option and stream state on scales of their own).
            func presence(_ snapshot: DetectionEngine.DeviceSnapshot?) -> DetectionEngine.DeviceSnapshot? {
                var snapshot = snapshot
                snapshot?.options = nil
                snapshot?.stream = nil
                return snapshot
            }
            for snapshot in plain.deviceSnapshots {
                #expect(presence(sharded[s].snapshot(of: snapshot.device)) == presence(snapshot))
            }
            #expect(sharded[s].statistics == plain.statistics)
        }
        let end = Date(timeIntervalSince1970: 1e6)
        let last = plain.advance(to: end)
        #expect(batched.advance(to: end) == last)
        for s in sharded.indices { #expect(sharded[s].advance(to: end) == last) }
    }

    @Test("default semantics with dwells, 50 devices: one engine and 1 and 3 shards", arguments: [31, 32] as [UInt64])
    func defaultSemantics(seed: UInt64) {
        Self.compare(Self.batches(seed: seed, devices: 50, batches: 40), fences: Self.fences(seed: seed),
                     configuration: .init(defaultDwellTime: 20), shardCounts: [1, 3])
    }

    @Test("detection options (debounce, repeated dwell, staleness) on some fences", arguments: [41] as [UInt64])
    func withOptions(seed: UInt64) {
        let options = DetectionOptions(entryDelay: 4, exitDelay: 3, dwellEvery: 30, staleAfter: 40, exitOnStale: true)
        Self.compare(Self.batches(seed: seed, devices: 30, batches: 30), fences: Self.fences(seed: seed, options: options),
                     configuration: .init(defaultDwellTime: 15), shardCounts: [1, 2], exactOrder: false)
    }

    @Test("a reorder window and duplicate suppression", arguments: [51] as [UInt64])
    func withStreamOptions(seed: UInt64) {
        Self.compare(Self.batches(seed: seed, devices: 30, batches: 30), fences: Self.fences(seed: seed),
                     configuration: .init(defaultDwellTime: 10, reorderWindow: 8, deduplicate: true), shardCounts: [1, 2],
                     exactOrder: false)
    }

    @Test("a device accepted many times in a batch is listed once; an empty batch does nothing")
    func changedDevicesOnce() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0, size: 2)])
        let batch = [update("x", 1, 1, 1), update("y", 2, 5, 5), update("x", 3, 5, 5), update("x", 0, 1, 1), update("z", 4, 1, 1)]
        let output = batch.withUnsafeBufferPointer { engine.processOnDataClock($0, clockOnly: [4]) }
        #expect(output.changedDevices == ["x", "y"])
        #expect(output.rejections.map(\.index) == [3])
        #expect(summaryWithDevice(output.events) == ["entry x a @1", "exit x a @3"])
        #expect(engine.knownDevices == ["x", "y"])
        let none = [LocationUpdate]().withUnsafeBufferPointer { engine.processOnDataClock($0) }
        #expect(none.events.isEmpty && none.rejections.isEmpty && none.changedDevices.isEmpty)
    }
}
