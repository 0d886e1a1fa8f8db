import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// Seeded random properties of the options, each against an independent computation.
@Suite("Options: properties on random input")
struct OptionsPropertyTests {
    static func randomFences(_ random: inout SplitMix64) -> [Fence] {
        (0..<8).map { i in
            square(FenceID("f\(i)"), lat: Double(Int.random(in: 0...6, using: &random)),
                   lon: Double(Int.random(in: 0...6, using: &random)), size: Double(Int.random(in: 1...3, using: &random)),
                   dwell: Bool.random(using: &random) ? Double(Int.random(in: 0...30, using: &random)) : nil)
        }
    }

    static func randomDrive(_ random: inout SplitMix64, devices: [DeviceID], count: Int) -> [LocationUpdate] {
        var clock: [DeviceID: Double] = [:]
        return (0..<count).map { _ in
            let device = devices.randomElement(using: &random)!
            let t = (clock[device] ?? 0) + Double(Int.random(in: 1...9, using: &random))
            clock[device] = t
            return update(device, t, Double(Int.random(in: -2...20, using: &random)) / 2,
                          Double(Int.random(in: -2...20, using: &random)) / 2)
        }
    }

    @Test("updates delayed by less than the reorder window give the events of the sorted stream", arguments: [1, 2, 3, 4] as [UInt64])
    func reorderEqualsSorted(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let fences = Self.randomFences(&random)
        let devices: [DeviceID] = ["p", "q"]
        let sorted = Self.randomDrive(&random, devices: devices, count: 300)
        let window = 20.0
        // Each update arrives up to (not including) `window` seconds late.
        let arrival = sorted.map { $0.time.timeIntervalSince1970 + Double.random(in: 0..<window, using: &random) }
        let shuffled = sorted.indices.sorted { (arrival[$0], $0) < (arrival[$1], $1) }.map { sorted[$0] }

        var reference = DetectionEngine(fences: fences)
        var expected: [GeofenceEvent] = []
        for u in sorted { #expect(reference.process(u, into: &expected) == nil) }
        var engine = DetectionEngine(fences: fences, configuration: .init(reorderWindow: window))
        var events: [GeofenceEvent] = []
        for u in shuffled { #expect(engine.process(u, into: &events) == nil, "\(u) was rejected") }
        engine.flush(into: &events)
        for device in devices {
            #expect(events.filter { $0.device == device } == expected.filter { $0.device == device })
        }
    }

    @Test("with duplicate suppression, re-sent and re-uploaded updates never add events", arguments: [5, 6, 7] as [UInt64])
    func duplicatesAreIdempotent(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let fences = Self.randomFences(&random).map {
            with($0, .init(initialTrigger: Bool.random(using: &random) ? .inside : .entry,
                           dwellEvery: Bool.random(using: &random) ? 7 : nil))
        }
        let updates = Self.randomDrive(&random, devices: ["p", "q", "r"], count: 250)
        var once = DetectionEngine(fences: fences, configuration: .init(deduplicate: true))
        let expected = once.replay(updates).events
        // Every update sent one to three times in a row.
        let repeated = updates.flatMap { u in Array(repeating: u, count: Int.random(in: 1...3, using: &random)) }
        var engine = DetectionEngine(fences: fences, configuration: .init(deduplicate: true))
        #expect(engine.replay(repeated).events == expected)
        #expect(engine.statistics.duplicateUpdates == repeated.count - updates.count)
        #expect(engine.replay(updates).events.isEmpty, "a whole re-upload adds nothing")
        #expect(Set(expected.map(\.id)).count == expected.count, "ids are unique, new kinds included")
    }

    @Test("hysteresis matches a brute-force band model on a random walk across a boundary", arguments: [8, 9, 10] as [UInt64])
    func hysteresisModel(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let h = Double(Int.random(in: 5...40, using: &random))
        // The fence's east edge is the meridian 0 near the equator; x is metres east of it.
        let fence = with(square("w", lat: -5, lon: -10, size: 10), .init(hysteresis: h))
        var engine = DetectionEngine(fences: [fence])
        var member = false
        var x = Double.random(in: -60...60, using: &random)
        var rawTransitions = 0, rawInside: Bool?
        for step in 0..<500 {
            x += Double.random(in: -15...15, using: &random)
            if abs(abs(x) - h) < 0.01 { x += 0.05 }  // stay clear of the band's edge (rounding)
            let events = engine.process(update(Double(step), 0, degrees(metres: x)))
            // The model: inside beyond h west of the edge, outside beyond h east of it, else no change.
            var expected: [String] = []
            if !member && x < -h { member = true; expected = ["entry w @\(step)"] }
            else if member && x > h { member = false; expected = ["exit w @\(step)"] }
            #expect(summary(events) == expected, "step \(step), x = \(x) m, h = \(h) m")
            if let previous = rawInside, previous != (x <= 0) { rawTransitions += 1 }
            rawInside = x <= 0
        }
        #expect(engine.statistics.entries + engine.statistics.exits <= rawTransitions + 1)
    }
}
