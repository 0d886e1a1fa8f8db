import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterTestSupport
import Testing

/// Per-device time (what the live service builds on): advancing one device, holding devices back, and
/// forgetting one — each checked against the engine's own global clock.
@Suite("Per-device clocks")
struct DeviceClockTests {
    /// Fences with dwell (and some with options), and random walks of several devices.
    static func scenario(seed: UInt64, options: DetectionOptions = DetectionOptions())
        -> (fences: [Fence], updates: [LocationUpdate]) {
        var rng = SplitMix64(seed: seed)
        var fences: [Fence] = []
        for i in 0..<12 {
            var fence = square(FenceID("f\(i)"), lat: Double.random(in: 0...0.9, using: &rng), lon: Double.random(in: 0...0.9, using: &rng),
                               size: Double.random(in: 0.05...0.3, using: &rng), dwell: Double.random(in: 5...60, using: &rng))
            if i % 3 == 0 { fence.options = options }
            fences.append(fence)
        }
        var updates: [LocationUpdate] = []
        var positions = (0..<5).map { _ in (Double.random(in: 0...1, using: &rng), Double.random(in: 0...1, using: &rng)) }
        var time = 1_000_000.0
        for _ in 0..<600 {
            time += Double.random(in: 0...4, using: &rng)
            let d = Int.random(in: 0..<5, using: &rng)
            positions[d].0 += Double.random(in: -0.03...0.03, using: &rng)
            positions[d].1 += Double.random(in: -0.03...0.03, using: &rng)
            updates.append(update(DeviceID("dev\(d)"), time, positions[d].0, positions[d].1))
        }
        return (fences, updates)
    }

    static func describe(_ e: GeofenceEvent) -> String {
        "\(e.kind.rawValue) \(e.fence) @\(e.time.timeIntervalSince1970) obs \(e.observedAt.timeIntervalSince1970) (\(e.coordinate.latitude),\(e.coordinate.longitude)) \(e.id.prefix(6))"
    }

    /// Each device's events, in order.
    static func byDevice(_ events: [GeofenceEvent]) -> [DeviceID: [GeofenceEvent]] {
        Dictionary(grouping: events, by: \.device)
    }

    @Test("advancing each device alone before its updates gives every device the events of the global clock",
          arguments: [(1 as UInt64, false), (2, false), (3, true), (4, true)])
    func perDeviceEqualsGlobal(seed: UInt64, withOptions: Bool) {
        let options = withOptions ? DetectionOptions(entryDelay: 6, exitDelay: 4, dwellEvery: 20) : DetectionOptions()
        let (fences, updates) = Self.scenario(seed: seed, options: options)
        var global = DetectionEngine(fences: fences)
        var expected = global.replay(updates).events
        let end = updates.last!.time.addingTimeInterval(500)
        global.advance(to: end, into: &expected)

        var local = DetectionEngine(fences: fences)
        var events: [GeofenceEvent] = []
        for update in updates {
            local.advance(update.device, to: update.time, into: &events)
            local.process(update, into: &events)
        }
        for device in Set(updates.map(\.device)) { local.advance(device, to: end, into: &events) }
        // Without options the order is the same too. With options, an entry confirmed by an update may
        // be dated before a dwell the global clock fired just before that update; fired per device, the
        // two come out in time order instead. The events themselves are the same.
        var mine = Self.byDevice(events), theirs = Self.byDevice(expected)
        if withOptions {
            mine = mine.mapValues { $0.sorted { $0.id < $1.id } }
            theirs = theirs.mapValues { $0.sorted { $0.id < $1.id } }
        }
        for device in Set(mine.keys).union(theirs.keys) where mine[device] != theirs[device] {
            let a = mine[device] ?? [], b = theirs[device] ?? []
            let first = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
            Issue.record("\(device): first difference at \(first): \(a.dropFirst(first).prefix(2).map(Self.describe)) vs \(b.dropFirst(first).prefix(2).map(Self.describe))")
        }
        #expect(events.count == expected.count && events.contains { $0.kind == .dwell })
    }

    @Test("held devices keep their timers until an advance that does not hold them")
    func holdingKeepsTimers() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0, dwell: 10)])
        _ = engine.process(update("x", 0, 0.5, 0.5))
        _ = engine.process(update("y", 0, 0.5, 0.5))
        var events: [GeofenceEvent] = []
        engine.advance(to: Date(timeIntervalSince1970: 20), holding: ["y"], into: &events)
        #expect(summaryWithDevice(events) == ["dwell x a @10"])
        events = []
        engine.advance(to: Date(timeIntervalSince1970: 20), holding: [], into: &events)
        #expect(summaryWithDevice(events) == ["dwell y a @10"])
    }

    @Test("forget: exits with reason reset on request, no timer fires later, the next update is a new device")
    func forget() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0, dwell: 10), square("b", lat: 0, lon: 0.5, dwell: 10)])
        _ = engine.process(update("x", 0, 0.5, 0.7))
        var events: [GeofenceEvent] = []
        #expect(engine.forget("x", exitsAt: Date(timeIntervalSince1970: 5), into: &events))
        #expect(summaryWithDevice(events) == ["exit x a @5", "exit x b @5"])
        #expect(events.allSatisfy { $0.reason == .reset && $0.timeInside == 5 })
        #expect(!engine.forget("x", into: &events))
        #expect(engine.presence(of: "x").isEmpty && engine.lastUpdateTime(of: "x") == nil)
        #expect(engine.knownDevices.isEmpty && engine.deviceSnapshots.isEmpty)
        #expect(engine.advance(to: Date(timeIntervalSince1970: 100)).isEmpty, "its dwell timers fire nothing")
        #expect(summary(engine.process(update("x", 200, 0.5, 0.7))) == ["entry a @200", "entry b @200"])
    }
}
