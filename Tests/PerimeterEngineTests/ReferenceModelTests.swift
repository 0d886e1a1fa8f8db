import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import Testing
import PerimeterTestSupport

/// The engine against a deliberately naive model of the same contract, on seeded random inputs.
@Suite("Engine vs reference model")
struct ReferenceModelTests {
    /// The contract, written as plainly as possible: every fence tested directly, dictionaries everywhere.
    struct ReferenceModel {
        struct Visit { var entry: Double; var dwelled: Bool }
        let fences: [Fence]
        var last: [DeviceID: Double] = [:]
        var inside: [DeviceID: [FenceID: Visit]] = [:]

        mutating func process(_ u: LocationUpdate) -> [String] {
            let t = u.time.timeIntervalSince1970
            if let previous = last[u.device], t < previous { return [] }
            last[u.device] = t
            var visits = inside[u.device] ?? [:]
            var out: [(Double, String, String)] = []
            for fence in fences.sorted(by: { $0.id < $1.id }) {
                guard var visit = visits[fence.id], !visit.dwelled, let dwell = fence.dwellTime,
                      visit.entry + dwell <= t else { continue }
                visit.dwelled = true
                visits[fence.id] = visit
                out.append((visit.entry + dwell, fence.id.rawValue, "dwell \(fence.id) @\(Int(visit.entry + dwell))"))
            }
            out.sort { ($0.0, $0.1) < ($1.0, $1.1) }
            var lines = out.map(\.2)
            let containing = Set(fences.filter { $0.region.contains(u.coordinate) }.map(\.id))
            for id in visits.keys.sorted() where !containing.contains(id) {
                visits[id] = nil
                lines.append("exit \(id) @\(Int(t))")
            }
            for id in containing.sorted() where visits[id] == nil {
                visits[id] = Visit(entry: t, dwelled: false)
                lines.append("entry \(id) @\(Int(t))")
            }
            inside[u.device] = visits
            return lines
        }
    }

    @Test("same events as the reference model", arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func randomRuns(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var fences: [Fence] = []
        for i in 0..<12 {
            let lat = Double(Int.random(in: 0...8, using: &random)), lon = Double(Int.random(in: 0...8, using: &random))
            let dwell: Double? = Bool.random(using: &random) ? Double(Int.random(in: 0...40, using: &random)) : nil
            fences.append(square(FenceID("f\(i)"), lat: lat, lon: lon, size: Double(Int.random(in: 1...4, using: &random)), dwell: dwell))
        }
        var engine = DetectionEngine(fences: fences)
        var model = ReferenceModel(fences: fences)
        let devices: [DeviceID] = ["alpha", "bravo", "charlie"]
        var clock: [DeviceID: Double] = [:]
        for _ in 0..<600 {
            let device = devices.randomElement(using: &random)!
            // Mostly forward in time, sometimes equal, sometimes backwards (rejected).
            let step = Double(Int.random(in: -3...12, using: &random))
            let t = max(0, (clock[device] ?? 0) + step)
            clock[device] = max(clock[device] ?? 0, t)
            // Positions on a half-degree lattice hit edges and corners often.
            let lat = Double(Int.random(in: -2...26, using: &random)) / 2
            let lon = Double(Int.random(in: -2...26, using: &random)) / 2
            let u = update(device, t, lat, lon)
            #expect(summary(engine.process(u)) == model.process(u), "update \(u)")
        }
    }
}
