import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// The batch path of `ShardedEngine` (partition, per-shard buffers kept between batches, the merge by
/// update) against one plain engine fed the same updates one by one, on many devices; and the one
/// fence index the shards share.
@Suite("Sharded engine: batches and the shared fence index")
struct ShardedEngineBatchTests {
    /// One plain engine's answer to a batch: events in batch order, rejections and the positions before
    /// which a device's own timers fired, as `ShardedEngine.BatchOutput` states them.
    static func reference(_ batch: [LocationUpdate], advancingDevices: Bool,
                          on engine: inout DetectionEngine) -> (events: [GeofenceEvent], rejections: [String], timers: [Int]) {
        var events: [GeofenceEvent] = [], rejections: [String] = [], timers: [Int] = []
        for (i, update) in batch.enumerated() {
            if advancingDevices {
                let before = events.count
                engine.advance(update.device, to: update.time, into: &events)
                if events.count > before { timers.append(i) }
            }
            if let rejection = engine.process(update, into: &events) { rejections.append("\(i): \(rejection)") }
        }
        return (events, rejections, timers)
    }

    @Test("batches of up to 3,000 updates of 600 devices, with fence changes and dwells, give one engine's output on 1, 2, 3 and 5 shards",
          arguments: [21, 22, 23] as [UInt64])
    func manyDevicesEqualOneEngine(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let devices: [DeviceID] = (0..<600).map { DeviceID("device-\($0)") } + [DeviceID("é-\(seed)"), DeviceID("e\u{301}-\(seed)")]
        var fences = (0..<12).map { i in
            square(FenceID("f\(i)"), lat: Double(Int.random(in: 0...8, using: &random)), lon: Double(Int.random(in: 0...8, using: &random)),
                   size: Double(Int.random(in: 1...4, using: &random)), dwell: i % 3 == 0 ? Double(Int.random(in: 5...40, using: &random)) : nil)
        }
        let configuration = DetectionEngine.Configuration(defaultDwellTime: 15)
        var plain = DetectionEngine(fences: fences, configuration: configuration)
        var engines = [1, 2, 3, 5].map { count in
            var engine = ShardedEngine(fences: fences, configuration: configuration, shards: count)
            engine.parallelThreshold = count == 3 ? 1 : 256
            return engine
        }
        var clock = [DeviceID: Double]()
        var events = 0, batches = 0
        for step in 0..<40 {
            if step % 7 == 6 {
                // A fence change between batches: a new fence, a moved one, or a removal.
                switch Int.random(in: 0..<3, using: &random) {
                case 0:
                    let fence = square(FenceID("new\(step)"), lat: 2, lon: 2, size: 5, dwell: 10)
                    fences.append(fence)
                    plain.upsert(fence)
                    for k in engines.indices { engines[k].upsert(fence) }
                case 1:
                    let moved = square(fences[0].id, lat: Double(Int.random(in: 0...6, using: &random)), lon: 3, size: 3, dwell: 20)
                    plain.upsert(moved)
                    for k in engines.indices { engines[k].upsert(moved) }
                default:
                    let id = fences.randomElement(using: &random)!.id
                    plain.remove(id: id)
                    for k in engines.indices { engines[k].remove(id: id) }
                }
            }
            let size = [1, 40, 255, 256, 1_000, 3_000].randomElement(using: &random)!
            let batch = (0..<size).map { _ -> LocationUpdate in
                let device = devices.randomElement(using: &random)!
                var t = (clock[device] ?? 0) + Double(Int.random(in: 0...12, using: &random))
                if Int.random(in: 0..<50, using: &random) == 0 { t -= 30 }  // out of order: rejected
                clock[device] = max(clock[device] ?? 0, t)
                let lat = Int.random(in: 0..<100, using: &random) == 0 ? 95 : Double(Int.random(in: -2...24, using: &random)) / 2
                return update(device, t, lat, Double(Int.random(in: -2...24, using: &random)) / 2)
            }
            let advancing = Bool.random(using: &random)
            let expected = Self.reference(batch, advancingDevices: advancing, on: &plain)
            events += expected.events.count
            batches += 1
            for k in engines.indices {
                // Half the batches as a slice (read in place), half as a non-contiguous collection (copied once).
                let output = step % 2 == 0 ? engines[k].process(batch[...], advancingDevices: advancing)
                                           : engines[k].process(batch.lazy.map { $0 }, advancingDevices: advancing)
                #expect(ShardedEngineTests.difference(output.events, expected.events) == nil,
                        "batch \(step) (\(size) updates) on \(engines[k].shardCount) shards")
                #expect(output.rejections.map { "\($0.index): \($0.rejection)" } == expected.rejections,
                        "batch \(step) on \(engines[k].shardCount) shards")
                #expect(output.timerEventIndices == expected.timers, "batch \(step) on \(engines[k].shardCount) shards")
            }
        }
        for engine in engines {
            #expect(engine.statistics == plain.statistics)
            for device in devices.prefix(50) { #expect(engine.presence(of: device) == plain.presence(of: device)) }
        }
        #expect(events > 500, "the batches caused events")
        #expect(batches == 40)
    }

    /// A batch of `size` updates of `devices`, each device moving on a little from its last position.
    static func walk(_ devices: [DeviceID], size: Int, from clock: inout [DeviceID: Double],
                     _ random: inout SplitMix64) -> [LocationUpdate] {
        (0..<size).map { _ in
            let device = devices.randomElement(using: &random)!
            let t = (clock[device] ?? 0) + Double(Int.random(in: 1...9, using: &random))
            clock[device] = t
            return update(device, t, Double(Int.random(in: 0...16, using: &random)) / 2, Double(Int.random(in: 0...16, using: &random)) / 2)
        }
    }

    @Test("device ids kept in heap storage survive their batch: the shards' copies of updates own nothing, the engine's copies do")
    func longDeviceIDsOutliveTheirBatch() {
        var random = SplitMix64(seed: 31)
        let fences = (0..<9).map { i in square(FenceID("f\(i)"), lat: Double(i % 3) * 3, lon: Double(i / 3) * 3, size: 2) }
        var plain = DetectionEngine(fences: fences)
        var sharded = ShardedEngine(fences: fences, shards: 2)
        sharded.parallelThreshold = 1
        // Ids of more than 15 UTF-8 bytes live on the heap: made afresh for every batch, so that
        // only the engine's own references keep them alive once the batch is gone.
        func ids() -> [DeviceID] { (0..<300).map { DeviceID("a device id long enough for the heap, number \($0)") } }
        var clock: [DeviceID: Double] = [:]
        var expected: [GeofenceEvent] = [], got: [GeofenceEvent] = []
        for _ in 0..<12 {
            do {
                let batch = Self.walk(ids(), size: 2_000, from: &clock, &random)
                expected += Self.reference(batch, advancingDevices: false, on: &plain).events
                got += sharded.process(batch).events
            }
        }
        #expect(got.count > 100, "the walk caused events")
        #expect(ShardedEngineTests.difference(got, expected) == nil)
        #expect(sharded.statistics == plain.statistics)
        for device in ids() { #expect(sharded.presence(of: device) == plain.presence(of: device), "\(device)") }
        #expect(Set(got.map(\.device.rawValue)).allSatisfy { $0.hasPrefix("a device id long enough") })
    }

    @Test("two copies of one sharded engine, fed different batches at the same time on two threads, each give one engine's output")
    func copiesKeepBuffersOfTheirOwn() {
        let fences = (0..<9).map { i in square(FenceID("f\(i)"), lat: Double(i % 3) * 3, lon: Double(i / 3) * 3, size: 2, dwell: 20) }
        var original = ShardedEngine(fences: fences, configuration: .init(defaultDwellTime: 30), shards: 3)
        original.parallelThreshold = 1
        let devices = (0..<120).map { DeviceID("device-\($0)") }
        var random = SplitMix64(seed: 41)
        var clock: [DeviceID: Double] = [:]
        _ = original.process(Self.walk(devices, size: 500, from: &clock, &random))  // the buffers exist now
        let plans: [[[LocationUpdate]]] = (0..<2).map { _ in
            var c = clock
            return (0..<8).map { _ in Self.walk(devices, size: 1_500, from: &c, &random) }
        }
        // What one engine gives for each plan, from the same start.
        var expected: [[GeofenceEvent]] = []
        for plan in plans {
            var plain = DetectionEngine(fences: fences, configuration: .init(defaultDwellTime: 30))
            var c = [DeviceID: Double]()
            var replay = SplitMix64(seed: 41)
            _ = Self.reference(Self.walk(devices, size: 500, from: &c, &replay), advancingDevices: false, on: &plain)
            expected.append(plan.flatMap { Self.reference($0, advancingDevices: true, on: &plain).events })
        }
        let copies = UnsafeMutableBufferPointer<ShardedEngine>.allocate(capacity: 2)
        defer { copies.deinitialize().deallocate() }
        copies.initialize(repeating: original)
        let results = UnsafeMutableBufferPointer<[GeofenceEvent]>.allocate(capacity: 2)
        defer { results.deinitialize().deallocate() }
        results.initialize(repeating: [])
        let shared = SendableBuffers(copies: copies, results: results, plans: plans)
        DispatchQueue.concurrentPerform(iterations: 2) { k in
            for batch in shared.plans[k] { shared.results[k] += shared.copies[k].process(batch, advancingDevices: true).events }
        }
        for k in 0..<2 {
            #expect(results[k].count > 50, "plan \(k) caused events")
            #expect(ShardedEngineTests.difference(results[k], expected[k]) == nil, "copy \(k)")
        }
    }

    /// The address of the fence index's cell table in `fences`: the same address in two sets means one
    /// index in memory (read through reflection: the index is private to its module).
    static func indexStorage(_ fences: FenceSet) -> UInt {
        guard let cells = Mirror(reflecting: fences).descendant("index", "cellStart") as? [UInt32], !cells.isEmpty else { return 0 }
        return cells.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }

    @Test("every shard uses one fence index, built once, before and after fence changes; every shard sees each change")
    func shardsShareOneIndex() throws {
        let fences = (0..<20).map { square(FenceID("f\($0)"), lat: Double($0 % 5) * 3, lon: Double($0 / 5) * 3, size: 2) }
        var engine = ShardedEngine(fences: fences, shards: 4)
        func storages() -> [UInt] { engine.shards.map { Self.indexStorage($0.fenceSet) } }
        let initial = storages()
        #expect(initial[0] != 0)
        #expect(Set(initial).count == 1, "one index for 4 shards at the start")

        // Devices on every shard, outside the fence to come.
        let devices = (0..<40).map { DeviceID("d\($0)") }
        #expect(Set(devices.map(engine.shard(of:))).count == 4)
        _ = engine.process(devices.map { update($0, 1, 50, 50) })

        engine.upsert(square("late", lat: 50, lon: 50, size: 1))
        _ = engine.process([LocationUpdate]())  // an empty batch shares the index too
        let afterUpsert = storages()
        #expect(afterUpsert[0] != 0 && afterUpsert[0] != initial[0], "the index was rebuilt")
        #expect(Set(afterUpsert).count == 1, "and is shared again")

        // Every shard sees the new fence: each device entering it gets an entry.
        let output = engine.process(devices.map { update($0, 2, 50.2, 50.2) })
        #expect(output.events.filter { $0.kind == .entry && $0.fence == "late" }.map(\.device) == devices)

        // A removal: rebuilt once, shared, seen everywhere (no exit events, presence dropped).
        engine.remove(id: "late")
        engine.prepareIndex()
        let afterRemove = storages()
        #expect(Set(afterRemove).count == 1)
        for device in devices { #expect(engine.presence(of: device).isEmpty) }

        // Single updates, the clock and replay also share (never a shard's own rebuild).
        engine.upsert(square("again", lat: 50, lon: 50, size: 1))
        var events: [GeofenceEvent] = []
        engine.process(update(devices[0], 3, 50.2, 50.2), into: &events)
        #expect(events.map(\.fence) == ["again"])
        #expect(Set(storages()).count == 1)
    }
}

/// The two copies' engines, results and inputs, each touched by one thread only.
private struct SendableBuffers: @unchecked Sendable {
    let copies: UnsafeMutableBufferPointer<ShardedEngine>
    let results: UnsafeMutableBufferPointer<[GeofenceEvent]>
    let plans: [[[LocationUpdate]]]
}
