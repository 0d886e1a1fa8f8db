import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// The engine's query buffer (``DetectionEngine/scratch``) under copies of the engine: copies share it
/// until one queries, which then writes memory of its own, so each copy gets the events it would get
/// alone — one after the other or at the same time on two threads.
@Suite struct ScratchCopyTests {
    /// Overlapping squares (some with a dwell time) and circles over a 2° × 2° area, no fence options (the
    /// engine's default path), and two scripts of updates of a few devices moving through it.
    static func setting(seed: UInt64) -> (fences: [Fence], scripts: [[LocationUpdate]]) {
        var rng = SplitMix64(seed: seed)
        var fences: [Fence] = []
        for k in 0..<40 {
            let lat = Double.random(in: 0...1.5, using: &rng), lon = Double.random(in: 0...1.5, using: &rng)
            if k % 3 == 0 {
                fences.append(Fence(id: FenceID("c\(k)"), region: Region(.circle(
                    center: Coordinate(latitude: lat, longitude: lon), radius: Double.random(in: 2_000...40_000, using: &rng)))))
            } else {
                fences.append(square(FenceID("s\(k)"), lat: lat, lon: lon, size: Double.random(in: 0.05...0.6, using: &rng),
                                     dwell: k % 4 == 1 ? 30 : nil, events: [.entry, .exit, .dwell]))
            }
        }
        let scripts = (0..<2).map { _ in
            (0..<6_000).map { i in
                update(DeviceID("d\(Int.random(in: 0..<8, using: &rng))"), Double(100 + i),
                       Double.random(in: -0.1...2, using: &rng), Double.random(in: -0.1...2, using: &rng))
            }
        }
        return (fences, scripts)
    }

    /// An engine that has queried (a written buffer for its copies to share): the positions of
    /// `script`'s first 50 updates, sent at time 10, before the scripts' times.
    static func warmed(_ fences: [Fence], _ script: [LocationUpdate]) -> DetectionEngine {
        var engine = DetectionEngine(fences: fences)
        var warm: [GeofenceEvent] = []
        for u in script.prefix(50) { _ = engine.process(update(u.device, 10, u.coordinate.latitude, u.coordinate.longitude), into: &warm) }
        return engine
    }

    /// Events of `engine` (a copy) fed `script` one update at a time.
    static func events(_ engine: DetectionEngine, _ script: [LocationUpdate]) -> [GeofenceEvent] {
        var engine = engine
        var events: [GeofenceEvent] = []
        for u in script { _ = engine.process(u, into: &events) }
        return events
    }

    @Test(arguments: [61 as UInt64, 62])
    func copiesTakingTurnsGetTheirOwnEvents(seed: UInt64) {
        let (fences, scripts) = Self.setting(seed: seed)
        let original = Self.warmed(fences, scripts[0])
        let alone = scripts.map { Self.events(original, $0) }
        #expect(alone[0].count > 500 && alone[1].count > 500)
        #expect(alone[0] != alone[1])
        var copies = [original, original]
        var together: [[GeofenceEvent]] = [[], []]
        for i in 0..<scripts[0].count {
            for k in 0..<2 { _ = copies[k].process(scripts[k][i], into: &together[k]) }
            if i == 0 {
                // After one query each, no two of the three engines write the same memory.
                let bases = [original.scratch, copies[0].scratch, copies[1].scratch].map {
                    $0.withUnsafeBufferPointer { $0.baseAddress }
                }
                #expect(Set(bases).count == 3)
            }
        }
        #expect(together == alone)
    }

    /// Two copies on two threads at once (a shared buffer would be written by both).
    @Test(arguments: [71 as UInt64])
    func copiesOnTwoThreadsGetTheirOwnEvents(seed: UInt64) {
        let (fences, scripts) = Self.setting(seed: seed)
        let original = Self.warmed(fences, scripts[1])
        let alone = scripts.map { Self.events(original, $0) }
        let results = UnsafeMutableBufferPointer<[GeofenceEvent]>.allocate(capacity: 2)
        _ = results.initialize(from: [[], []])
        defer { results.deallocate() }
        let shared = UncheckedResults(results)
        for _ in 0..<3 {
            DispatchQueue.concurrentPerform(iterations: 2) { k in
                shared.buffer[k] = Self.events(original, scripts[k])
            }
            #expect(Array(results) == alone)
        }
    }
}

/// The results of the two threads, each writing its own element.
private struct UncheckedResults: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<[GeofenceEvent]>
    init(_ buffer: UnsafeMutableBufferPointer<[GeofenceEvent]>) { self.buffer = buffer }
}
