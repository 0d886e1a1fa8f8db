import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// The default path's changed updates — dwells marked in the presence pool, the old fence list read where
/// it lies there, the new one written back — against the general (options) path with every option off,
/// which takes each device's state out as a `DeviceState` and stores it back: same events (ids included,
/// in order), rejections, statistics, presence and snapshots.
@Suite("Changed updates in place")
struct ChangedUpdateTests {
    enum Dwell: String, CaseIterable, Sendable {
        /// No fence sets a dwell time and the engine has no default: dwells never fire.
        case off
        /// Some fences set a dwell time.
        case fences
        /// Some fences set one, and the engine's default covers the rest.
        case fencesAndDefault
    }

    /// Many devices inside many overlapping fences (lists of 0 to about a dozen, so blocks of the pool
    /// grow, shrink, are freed and handed out again), equal times (instant visits and their ordinals),
    /// fences changed, removed and expiring, devices forgotten, and the clock advanced for all devices or
    /// one; updates one at a time and in batches.
    @Test("same as the options path with every option off", arguments: Dwell.allCases, [21, 22, 23, 24] as [UInt64])
    func agreesWithOptionsPath(dwell: Dwell, seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var fences: [Fence] = []
        for i in 0..<24 {
            let lat = Double(Int.random(in: 0...8, using: &random)), lon = Double(Int.random(in: 0...8, using: &random))
            let time: Double? = dwell != .off && Bool.random(using: &random) ? Double(Int.random(in: 0...30, using: &random)) : nil
            let expires: Date? = Int.random(in: 0..<8, using: &random) == 0
                ? Date(timeIntervalSince1970: Double(Int.random(in: 100...900, using: &random))) : nil
            let events: GeofenceEventKinds = Int.random(in: 0..<6, using: &random) == 0 ? [.entry] : .all
            fences.append(square(FenceID("f\(i)"), lat: lat, lon: lon, size: Double(Int.random(in: 1...6, using: &random)),
                                 dwell: time, events: events, expiresAt: expires))
        }
        let configuration = DetectionEngine.Configuration(defaultDwellTime: dwell == .fencesAndDefault ? 12 : nil)
        var subject = DetectionEngine(fences: fences, configuration: configuration)
        var reference = DetectionEngine(fences: fences, configuration: configuration)
        reference.usesOptions = true
        #expect(!subject.usesOptions)

        let devices = (0..<40).map { DeviceID("device-\($0)") }
        var clock: [DeviceID: Double] = [:]
        var global = 0.0
        var changed = 0
        func randomUpdate() -> LocationUpdate {
            let device = devices.randomElement(using: &random)!
            // Mostly forward, often equal (instant visits), sometimes backwards (rejected).
            let t = max(0, (clock[device] ?? 0) + Double(Int.random(in: -2...10, using: &random)))
            clock[device] = max(clock[device] ?? 0, t)
            global = max(global, t)
            return update(device, t, Double(Int.random(in: -2...28, using: &random)) / 2,
                          Double(Int.random(in: -2...28, using: &random)) / 2)
        }
        for step in 0..<3000 {
            let roll = Int.random(in: 0..<200, using: &random)
            switch roll {
            case 0..<4:
                global += Double(Int.random(in: 0...20, using: &random))
                let time = Date(timeIntervalSince1970: global)
                #expect(subject.advance(to: time) == reference.advance(to: time), "advance at step \(step)")
            case 4..<10:
                let device = devices.randomElement(using: &random)!
                let time = Date(timeIntervalSince1970: (clock[device] ?? 0) + Double(Int.random(in: 0...40, using: &random)))
                var a: [GeofenceEvent] = [], b: [GeofenceEvent] = []
                subject.advance(device, to: time, into: &a)
                reference.advance(device, to: time, into: &b)
                #expect(a == b, "advance of \(device) at step \(step)")
            case 10..<13:
                var fence = fences[Int.random(in: 0..<fences.count, using: &random)]
                fence.dwellTime = dwell != .off && Bool.random(using: &random)
                    ? Double(Int.random(in: 0...30, using: &random)) : nil
                subject.upsert(fence)
                reference.upsert(fence)
            case 13:
                let id = FenceID("f\(Int.random(in: 0..<fences.count, using: &random))")
                #expect(subject.remove(id: id)?.id == reference.remove(id: id)?.id)
            case 14:
                let device = devices.randomElement(using: &random)!
                let time: Date? = Bool.random(using: &random) ? Date(timeIntervalSince1970: clock[device] ?? 0) : nil
                var a: [GeofenceEvent] = [], b: [GeofenceEvent] = []
                #expect(subject.forget(device, exitsAt: time, into: &a) == reference.forget(device, exitsAt: time, into: &b))
                #expect(a == b, "forget of \(device) at step \(step)")
                clock[device] = nil
            case 15..<25:
                let batch = (0..<Int.random(in: 1...30, using: &random)).map { _ in randomUpdate() }
                var a: [GeofenceEvent] = [], b: [GeofenceEvent] = []
                let ra = subject.process(contentsOf: batch, into: &a), rb = reference.process(contentsOf: batch, into: &b)
                #expect(ra.map(\.index) == rb.map(\.index) && ra.map(\.rejection) == rb.map(\.rejection),
                        "batch rejections at step \(step)")
                #expect(a == b, "batch at step \(step): \(summary(a)) vs \(summary(b))")
                if !a.isEmpty { changed += 1 }
            default:
                let u = randomUpdate()
                var a: [GeofenceEvent] = [], b: [GeofenceEvent] = []
                let ra = subject.process(u, into: &a), rb = reference.process(u, into: &b)
                #expect(ra == rb, "rejection at step \(step)")
                #expect(a == b, "events at step \(step): \(summary(a)) vs \(summary(b))")
                if !a.isEmpty { changed += 1 }
            }
            if step % 250 == 249 {
                Self.expectSameSnapshots(subject, reference, "at step \(step)")
            }
        }
        let end = Date(timeIntervalSince1970: global + 1000)
        #expect(subject.advance(to: end) == reference.advance(to: end))
        #expect(subject.statistics == reference.statistics)
        Self.expectSameSnapshots(subject, reference, "at the end")
        for device in devices { #expect(subject.presence(of: device) == reference.presence(of: device)) }
        // The run exercised what it is about: many changed updates, and dwells when they are on.
        #expect(changed > 500)
        #expect(dwell == .off ? subject.statistics.dwells == 0 : subject.statistics.dwells > 50)
    }

    /// Expects the snapshots of `subject` (default path) to equal those of `reference` (options path)
    /// without the options path's own per-device state, which the default path does not keep, and
    /// without instant visits that began before the device's last update: no visit can begin that early
    /// any more, and the two paths forget them at different moments (the default path at its changed
    /// updates, on main as on this branch).
    static func expectSameSnapshots(_ subject: DetectionEngine, _ reference: DetectionEngine, _ when: String) {
        func comparable(_ snapshot: DetectionEngine.DeviceSnapshot) -> DetectionEngine.DeviceSnapshot {
            var copy = snapshot
            copy.options = nil
            copy.instantVisits.removeAll { $0.entryTime < copy.lastTime }
            return copy
        }
        let a = subject.deviceSnapshots.map(comparable)
        let b = reference.deviceSnapshots.map(comparable)
        #expect(a.count == b.count, "snapshot count \(when)")
        for (x, y) in zip(a, b) { #expect(x == y, "snapshot \(when)") }
    }
}
