import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// Sharding changes where devices live, never what they get: N shards give exactly one shard's events
/// (docs/semantics.md, "Shards"), and each device gets exactly what one plain engine gives it.
@Suite("Sharded engine")
struct ShardedEngineTests {
    /// What a random script may do to an engine.
    enum Step {
        case batch([LocationUpdate], advancingDevices: Bool)
        case advance(Double)
        case advanceHolding(Double, Set<DeviceID>)
        case advanceDevice(DeviceID, Double)
        case forget(DeviceID, exitsAt: Double?)
        case upsert(Fence)
        case remove(FenceID)
        case flush
    }

    /// Which options the script's fences carry.
    enum Flavour: CaseIterable {
        case plain, debounced, options, reorder
    }

    static let devices: [DeviceID] = (0..<23).map { DeviceID("dev-\($0)") } + ["é-café", "e\u{301}-cafe\u{301}", "Ω"]

    static func fences(_ random: inout SplitMix64, flavour: Flavour, count: Int, prefix: String = "f") -> [Fence] {
        (0..<count).map { i in
            var fence = square(FenceID("\(prefix)\(i)"), lat: Double(Int.random(in: 0...6, using: &random)),
                               lon: Double(Int.random(in: 0...6, using: &random)), size: Double(Int.random(in: 1...3, using: &random)),
                               dwell: Bool.random(using: &random) ? Double(Int.random(in: 0...30, using: &random)) : nil)
            switch flavour {
            case .plain, .reorder: break
            case .debounced:
                fence = with(fence, .init(entryDelay: Double(Int.random(in: 0...8, using: &random)),
                                          exitDelay: Double(Int.random(in: 0...8, using: &random))))
            case .options:
                fence = with(fence, .init(entryDelay: Bool.random(using: &random) ? 4 : nil,
                                          crossings: Bool.random(using: &random), interpolate: Bool.random(using: &random),
                                          initialTrigger: Bool.random(using: &random) ? .inside : .entry,
                                          dwellEvery: Bool.random(using: &random) ? 7 : nil,
                                          staleAfter: Bool.random(using: &random) ? 25 : nil,
                                          exitOnStale: Bool.random(using: &random)))
            }
            return fence
        }
    }

    /// A random script: batches of updates (some late, some invalid), the clock in its forms, fence
    /// changes, forgotten devices.
    static func script(_ random: inout SplitMix64, flavour: Flavour) -> (fences: [Fence], steps: [Step]) {
        let fences = fences(&random, flavour: flavour, count: 8)
        var clock: [DeviceID: Double] = [:]
        var now = 0.0
        var steps: [Step] = []
        var added = 0
        for _ in 0..<60 {
            switch Int.random(in: 0..<20, using: &random) {
            case 0..<11:
                let batch = (0..<Int.random(in: 1...40, using: &random)).map { _ -> LocationUpdate in
                    let device = devices.randomElement(using: &random)!
                    var t = (clock[device] ?? now) + Double(Int.random(in: 0...9, using: &random))
                    if Int.random(in: 0..<25, using: &random) == 0 { t -= 15 }  // late: rejected (or reordered)
                    clock[device] = max(clock[device] ?? 0, t)
                    now = max(now, t)
                    let lat = Int.random(in: 0..<60, using: &random) == 0 ? 95 : Double(Int.random(in: -2...20, using: &random)) / 2
                    return update(device, t, lat, Double(Int.random(in: -2...20, using: &random)) / 2)
                }
                steps.append(.batch(batch, advancingDevices: Bool.random(using: &random)))
            case 11..<14:
                now += Double(Int.random(in: 0...20, using: &random))
                steps.append(.advance(now))
            case 14:
                now += Double(Int.random(in: 0...20, using: &random))
                steps.append(.advanceHolding(now, Set((0..<5).map { _ in devices.randomElement(using: &random)! })))
            case 15, 16:
                let device = devices.randomElement(using: &random)!
                steps.append(.advanceDevice(device, (clock[device] ?? now) + Double(Int.random(in: 0...30, using: &random))))
            case 17:
                steps.append(.forget(devices.randomElement(using: &random)!,
                                     exitsAt: Bool.random(using: &random) ? now : nil))
            case 18:
                added += 1
                steps.append(.upsert(Self.fences(&random, flavour: flavour, count: 1, prefix: "new\(added)-")[0]))
            default:
                steps.append(Bool.random(using: &random) ? .remove(fences.randomElement(using: &random)!.id) : .flush)
            }
        }
        steps.append(.flush)
        return (fences, steps)
    }

    /// The outputs of one step: events, and rejections with their batch positions.
    struct Output: Equatable {
        var events: [GeofenceEvent]
        var rejections: [String]
    }

    static func run(_ step: Step, on engine: inout ShardedEngine) -> Output {
        var events: [GeofenceEvent] = []
        switch step {
        case let .batch(updates, advancing):
            let output = engine.process(updates, advancingDevices: advancing)
            return Output(events: output.events, rejections: output.rejections.map { "\($0.index): \($0.rejection)" })
        case let .advance(t): engine.advance(to: Date(timeIntervalSince1970: t), into: &events)
        case let .advanceHolding(t, held): engine.advance(to: Date(timeIntervalSince1970: t), holding: held, into: &events)
        case let .advanceDevice(device, t): engine.advance(device, to: Date(timeIntervalSince1970: t), into: &events)
        case let .forget(device, t): engine.forget(device, exitsAt: t.map { Date(timeIntervalSince1970: $0) }, into: &events)
        case let .upsert(fence): engine.upsert(fence)
        case let .remove(id): engine.remove(id: id)
        case .flush: engine.flush(into: &events)
        }
        return Output(events: events, rejections: [])
    }

    static func run(_ step: Step, on engine: inout DetectionEngine) -> Output {
        var events: [GeofenceEvent] = []
        var rejections: [String] = []
        switch step {
        case let .batch(updates, advancing):
            for (i, u) in updates.enumerated() {
                if advancing { engine.advance(u.device, to: u.time, into: &events) }
                if let r = engine.process(u, into: &events) { rejections.append("\(i): \(r)") }
            }
        case let .advance(t): engine.advance(to: Date(timeIntervalSince1970: t), into: &events)
        case let .advanceHolding(t, held): engine.advance(to: Date(timeIntervalSince1970: t), holding: held, into: &events)
        case let .advanceDevice(device, t): engine.advance(device, to: Date(timeIntervalSince1970: t), into: &events)
        case let .forget(device, t): engine.forget(device, exitsAt: t.map { Date(timeIntervalSince1970: $0) }, into: &events)
        case let .upsert(fence): engine.upsert(fence)
        case let .remove(id): engine.remove(id: id)
        case .flush: engine.flush(into: &events)
        }
        return Output(events: events, rejections: rejections)
    }

    static func configuration(_ flavour: Flavour) -> DetectionEngine.Configuration {
        flavour == .reorder ? .init(defaultDwellTime: 12, reorderWindow: 10, deduplicate: true) : .init(defaultDwellTime: 12)
    }

    static func perDevice(_ events: [GeofenceEvent]) -> [DeviceID: [GeofenceEvent]] {
        Dictionary(grouping: events, by: \.device)
    }

    static func line(_ e: GeofenceEvent) -> String {
        "\(e.kind) \(e.fence) \(e.device) @\(e.time.timeIntervalSince1970) obs \(e.observedAt.timeIntervalSince1970) \(e.id.prefix(8))"
    }

    /// `nil` when equal, else where the lists first differ (short enough to read in a test log).
    static func difference(_ got: [GeofenceEvent], _ expected: [GeofenceEvent]) -> String? {
        guard got != expected else { return nil }
        let i = (0..<min(got.count, expected.count)).first { got[$0] != expected[$0] } ?? min(got.count, expected.count)
        let window = { (list: [GeofenceEvent]) in list[max(0, i - 2)..<min(list.count, i + 3)].map(line).joined(separator: " | ") }
        return "\(got.count) vs \(expected.count) events, first difference at \(i): got [\(window(got))] expected [\(window(expected))]"
    }

    /// `nil` when every device got the same events, else the first device that did not.
    static func deviceDifference(_ got: [GeofenceEvent], _ expected: [GeofenceEvent]) -> String? {
        let a = perDevice(got), b = perDevice(expected)
        for device in Set(a.keys).union(b.keys).sorted() {
            if let d = difference(a[device] ?? [], b[device] ?? []) { return "device \(device): \(d)" }
        }
        return nil
    }

    @Test("N shards give exactly one shard's events, in the same order; each device gets one plain engine's",
          arguments: Flavour.allCases, [1, 2, 3, 4, 5, 6] as [UInt64])
    func shardsEqualOneShard(flavour: Flavour, seed: UInt64) {
        var random = SplitMix64(seed: seed &* 7919 &+ UInt64(Flavour.allCases.firstIndex(of: flavour)!))
        let (fences, steps) = Self.script(&random, flavour: flavour)
        let configuration = Self.configuration(flavour)
        var plain = DetectionEngine(fences: fences, configuration: configuration)
        var one = ShardedEngine(fences: fences, configuration: configuration, shards: 1)
        var many = [2, 3, 7].map { count in
            var engine = ShardedEngine(fences: fences, configuration: configuration, shards: count)
            engine.parallelThreshold = count == 3 ? 1 : 256  // 3 shards: every batch on the pool's threads
            return engine
        }
        var total = 0
        for (n, step) in steps.enumerated() {
            let expected = Self.run(step, on: &one)
            let reference = Self.run(step, on: &plain)
            total += expected.events.count
            if case .batch = step {
                #expect(Self.difference(expected.events, reference.events) == nil, "step \(n): a batch's events are one engine's, in its order")
                #expect(expected.rejections == reference.rejections)
            } else {
                #expect(Self.deviceDifference(expected.events, reference.events) == nil, "step \(n)")
            }
            for k in many.indices {
                let got = Self.run(step, on: &many[k])
                #expect(Self.difference(got.events, expected.events) == nil, "step \(n) with \(many[k].shardCount) shards")
                #expect(got.rejections == expected.rejections, "step \(n) with \(many[k].shardCount) shards")
            }
        }
        for engine in many {
            #expect(engine.statistics == one.statistics)
            #expect(Set(engine.knownDevices) == Set(one.knownDevices))
            for device in Self.devices {
                #expect(engine.presence(of: device) == plain.presence(of: device))
                #expect(engine.lastUpdateTime(of: device) == plain.lastUpdateTime(of: device))
            }
        }
        #expect(total > 20, "the script produced events")
    }

    @Test("replay on N shards gives one shard's replay; each device gets DetectionEngine.replay's events",
          arguments: Flavour.allCases, [11, 12, 13] as [UInt64])
    func replayEqualsOneShard(flavour: Flavour, seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let (fences, steps) = Self.script(&random, flavour: flavour)
        let updates = steps.flatMap { step -> [LocationUpdate] in
            if case let .batch(updates, _) = step { return updates } else { return [] }
        }
        let configuration = Self.configuration(flavour)
        var plain = DetectionEngine(fences: fences, configuration: configuration)
        let reference = plain.replay(updates)
        var one = ShardedEngine(fences: fences, configuration: configuration, shards: 1)
        let expected = one.replay(updates)
        #expect(Self.deviceDifference(expected.events, reference.events) == nil)
        #expect(expected.rejections == reference.rejections)
        for count in [2, 3, 7] {
            var engine = ShardedEngine(fences: fences, configuration: configuration, shards: count)
            let got = engine.replay(updates)
            #expect(Self.difference(got.events, expected.events) == nil, "\(count) shards")
            #expect(got.rejections == expected.rejections, "\(count) shards")
            #expect(engine.statistics == one.statistics)
        }
        // The merge rule: by time, then device (each device's own events are in time order without options).
        if flavour == .plain {
            for (a, b) in zip(expected.events, expected.events.dropFirst()) where a.device != b.device {
                #expect(a.time < b.time || (a.time == b.time && a.device < b.device), "\(a.device) before \(b.device)")
            }
        }
    }

    @Test("a sharded engine's snapshots restore into any number of shards and continue as one engine would",
          arguments: [Flavour.plain, .options, .reorder], [21, 22] as [UInt64])
    func snapshotsMoveBetweenShardCounts(flavour: Flavour, seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let (fences, steps) = Self.script(&random, flavour: flavour)
        let configuration = Self.configuration(flavour)
        let half = steps.count / 2
        var plain = DetectionEngine(fences: fences, configuration: configuration)
        var sharded = ShardedEngine(fences: fences, configuration: configuration, shards: 3)
        for step in steps[..<half] {
            _ = Self.run(step, on: &plain)
            _ = Self.run(step, on: &sharded)
        }
        #expect(sharded.acceptedUpdateSequence == plain.acceptedUpdateSequence)
        for target in [1, 2, 5] {
            var restored = ShardedEngine(fences: sharded.fenceSet.fences, configuration: configuration, shards: target)
            try restored.restore(sharded.deviceSnapshots, engineState: sharded.engineState)
            var continued = plain
            for (n, step) in steps[half...].enumerated() {
                let expected = Self.run(step, on: &continued)
                let got = Self.run(step, on: &restored)
                #expect(Self.deviceDifference(got.events, expected.events) == nil, "step \(half + n) into \(target) shards")
            }
        }
    }

    @Test("the partition is FNV-1a-32 of the id's UTF-8 (NFC) modulo the count, and canonical equivalents agree")
    func partition() {
        // FNV-1a-32 reference values: "" → 0x811c9dc5, "a" → 0xe40c292c, "foobar" → 0xbf9cf968.
        #expect(ShardedEngine.shard(of: "a", among: 1 << 16) == 0xE40C_292C % (1 << 16))
        #expect(ShardedEngine.shard(of: "foobar", among: 7) == Int(UInt32(0xBF9C_F968) % 7))
        #expect(ShardedEngine.shard(of: "", among: 5) == Int(UInt32(0x811C_9DC5) % 5))
        for count in 1...9 {
            #expect(ShardedEngine.shard(of: "\u{E9}t\u{E9}", among: count) == ShardedEngine.shard(of: "e\u{301}te\u{301}", among: count))
            #expect(ShardedEngine.shard(of: "x", among: count) < count)
        }
        #expect(ShardedEngine.shard(of: "anything", among: 1) == 0)
        // Roughly even over many ids.
        var counts = [Int](repeating: 0, count: 4)
        for i in 0..<4000 { counts[ShardedEngine.shard(of: DeviceID("device-\(i)"), among: 4)] += 1 }
        #expect(counts.allSatisfy { (850...1150).contains($0) }, "\(counts)")
    }
}
