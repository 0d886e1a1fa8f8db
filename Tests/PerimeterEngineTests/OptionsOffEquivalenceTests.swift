import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// With every option off, the engine must behave exactly as the default engine: same events (ids,
/// times, order), same statistics, same presence.
@Suite("Options off = default semantics")
struct OptionsOffEquivalenceTests {
    /// Every option set explicitly to its "off" value.
    static let explicitlyOff = DetectionOptions(
        accuracy: .ignore, hysteresis: 0, maximumAccuracy: nil, entryDelay: 0, exitDelay: 0, crossings: false,
        interpolate: false, maximumGap: 120, initialTrigger: .entry, dwellEvery: 0, staleAfter: nil,
        exitOnStale: false, schedule: nil)

    enum Variant: String, CaseIterable, Sendable {
        /// Configuration and every fence spell out "off".
        case explicitOff
        /// The general (options) path forced on with every option off.
        case forcedOptionsPath
        /// The device-stream front end on with a zero window and no deduplication effect.
        case streamFrontEnd
    }

    @Test("random inputs give identical events", arguments: Variant.allCases, [11, 12, 13, 14, 15, 16] as [UInt64])
    func identical(variant: Variant, seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var fences: [Fence] = []
        for i in 0..<10 {
            let lat = Double(Int.random(in: 0...8, using: &random)), lon = Double(Int.random(in: 0...8, using: &random))
            let dwell: Double? = Bool.random(using: &random) ? Double(Int.random(in: 0...40, using: &random)) : nil
            let expires: Date? = Int.random(in: 0..<6, using: &random) == 0
                ? Date(timeIntervalSince1970: Double(Int.random(in: 50...400, using: &random))) : nil
            fences.append(square(FenceID("f\(i)"), lat: lat, lon: lon, size: Double(Int.random(in: 1...4, using: &random)),
                                 dwell: dwell, expiresAt: expires))
        }
        let defaultDwell: Double? = Bool.random(using: &random) ? 25 : nil
        var reference = DetectionEngine(fences: fences, configuration: .init(defaultDwellTime: defaultDwell))
        var subject: DetectionEngine
        switch variant {
        case .explicitOff:
            let off = fences.map { fence -> Fence in
                var copy = fence
                copy.options = Self.explicitlyOff
                return copy
            }
            subject = DetectionEngine(fences: off, configuration: .init(defaultDwellTime: defaultDwell,
                                                                        options: Self.explicitlyOff, reorderWindow: 0,
                                                                        deduplicate: false))
            #expect(!subject.usesOptions)
        case .forcedOptionsPath:
            subject = DetectionEngine(fences: fences, configuration: .init(defaultDwellTime: defaultDwell))
            subject.usesOptions = true
        case .streamFrontEnd:
            // Deduplication on, but no update repeats an identity (time strictly increases per device).
            subject = DetectionEngine(fences: fences, configuration: .init(defaultDwellTime: defaultDwell, deduplicate: true))
        }

        let devices: [DeviceID] = ["alpha", "bravo", "charlie"]
        var clock: [DeviceID: Double] = [:]
        var global = 0.0
        for step in 0..<700 {
            let roll = Int.random(in: 0..<100, using: &random)
            if roll < 6 {
                global += Double(Int.random(in: 0...30, using: &random))
                let time = Date(timeIntervalSince1970: global)
                #expect(reference.advance(to: time) == subject.advance(to: time), "advance at step \(step)")
                continue
            }
            if roll < 8 {
                let i = Int.random(in: 0..<fences.count, using: &random)
                var fence = fences[i]
                fence.dwellTime = Bool.random(using: &random) ? Double(Int.random(in: 0...30, using: &random)) : nil
                reference.upsert(fence)
                if variant == .explicitOff { fence.options = Self.explicitlyOff }
                subject.upsert(fence)
                continue
            }
            if roll < 9 {
                let id = FenceID("f\(Int.random(in: 0..<fences.count, using: &random))")
                #expect(reference.remove(id: id)?.id == subject.remove(id: id)?.id)
                continue
            }
            let device = devices.randomElement(using: &random)!
            var delta = Double(Int.random(in: -3...12, using: &random))
            if variant == .streamFrontEnd { delta = max(1, delta) }  // never a duplicate identity
            let t = max(0, (clock[device] ?? 0) + delta)
            clock[device] = max(clock[device] ?? 0, t)
            global = max(global, t)
            let u = update(device, t, Double(Int.random(in: -2...26, using: &random)) / 2,
                           Double(Int.random(in: -2...26, using: &random)) / 2)
            var a: [GeofenceEvent] = [], b: [GeofenceEvent] = []
            let ra = reference.process(u, into: &a), rb = subject.process(u, into: &b)
            #expect(ra == rb, "rejection at step \(step)")
            #expect(a == b, "events at step \(step): \(summary(a)) vs \(summary(b))")
        }
        let end = Date(timeIntervalSince1970: global + 1000)
        #expect(reference.advance(to: end) == subject.advance(to: end))
        var statistics = subject.statistics
        statistics.duplicateUpdates = 0
        #expect(reference.statistics == statistics)
        for device in devices { #expect(reference.presence(of: device) == subject.presence(of: device)) }
    }

    @Test("replays of the Yellowstone-like random drive agree, including ids, with options off")
    func replayAgrees() {
        var random = SplitMix64(seed: 99)
        let fences = (0..<6).map { i in square(FenceID("z\(i)"), lat: Double(i), lon: Double(i), size: 2, dwell: 5) }
        var updates: [LocationUpdate] = []
        for i in 0..<300 {
            let device: DeviceID = i % 2 == 0 ? "even" : "odd"
            updates.append(update(device, Double(i), Double.random(in: -1...8, using: &random),
                                  Double.random(in: -1...8, using: &random)))
        }
        var reference = DetectionEngine(fences: fences)
        var subject = DetectionEngine(fences: fences, configuration: .init(options: Self.explicitlyOff))
        subject.usesOptions = true
        #expect(reference.replay(updates).events == subject.replay(updates).events)
    }
}
