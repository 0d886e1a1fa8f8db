import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// A changed update looks for due dwells only when some fence sets a dwell time or the engine has a
/// default (``FenceSet/containsDwellTimes``): fences gaining and losing dwell times must keep the
/// events those of the reference model.
@Suite("Dwell times gained and lost")
struct DwellTimeChangeTests {
    @Test("containsDwellTimes follows upserts, replacements, removals and removeAll", arguments: [UInt64(61), 62])
    func countFollowsChanges(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var set = FenceSet()
        var held: [FenceID: Fence] = [:]
        for step in 0..<400 {
            let id = FenceID("f\(Int.random(in: 0..<8, using: &random))")
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                let dwell: Double? = Bool.random(using: &random) ? Double(Int.random(in: 0...30, using: &random)) : nil
                let fence = square(id, lat: 0, lon: 0, dwell: dwell)
                set.upsert(fence)
                held[id] = fence
            case 6..<9:
                set.remove(id: id)
                held[id] = nil
            default:
                if step % 3 == 0 {
                    set.removeAll()
                    held = [:]
                }
            }
            #expect(set.containsDwellTimes == held.values.contains { $0.dwellTime != nil }, "step \(step)")
        }
    }

    @Test("fences that gain or lose a dwell time mid-visit: the reference model's events",
          arguments: [UInt64(71), 72, 73, 74])
    func gainedAndLostDwellTimes(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var fences: [Fence] = (0..<10).map { i in
            square(FenceID("f\(i)"), lat: Double(Int.random(in: 0...8, using: &random)),
                   lon: Double(Int.random(in: 0...8, using: &random)), size: Double(Int.random(in: 1...4, using: &random)))
        }
        var engine = DetectionEngine(fences: fences)
        var model = ReferenceModelTests.ReferenceModel(fences: fences)
        let devices: [DeviceID] = ["alpha", "bravo", "charlie"]
        var clock: [DeviceID: Double] = [:]
        var dwellEvents = 0
        for n in 0..<900 {
            if n % 40 == 39 {  // one fence gains a dwell time, or loses it (most of the time none has one)
                let i = Int.random(in: 0..<fences.count, using: &random)
                let dwell: Double? = fences[i].dwellTime == nil && Int.random(in: 0..<3, using: &random) == 0
                    ? Double(Int.random(in: 0...30, using: &random)) : nil
                fences[i] = Fence(id: fences[i].id, region: fences[i].region, dwellTime: dwell)
                engine.upsert(fences[i])
                var changed = ReferenceModelTests.ReferenceModel(fences: fences)
                changed.last = model.last
                changed.inside = model.inside
                model = changed
                #expect(engine.fenceSet.containsDwellTimes == fences.contains { $0.dwellTime != nil })
            }
            let device = devices.randomElement(using: &random)!
            let t = max(0, (clock[device] ?? 0) + Double(Int.random(in: -2...12, using: &random)))
            clock[device] = max(clock[device] ?? 0, t)
            let u = update(device, t, Double(Int.random(in: -2...26, using: &random)) / 2,
                           Double(Int.random(in: -2...26, using: &random)) / 2)
            let expected = model.process(u)
            dwellEvents += expected.filter { $0.hasPrefix("dwell") }.count
            #expect(summary(engine.process(u)) == expected, "update \(n): \(u)")
        }
        #expect(dwellEvents > 0, "the run has dwells to compare")
    }
}
