import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// ``DeviceHandle`` is a hint: processing with handles — right, unresolved, stale after a forget, swapped
/// between devices, or from another engine — must give exactly what processing by id gives.
@Suite("Device handles")
struct DeviceHandleTests {
    static let fences: [Fence] = (0..<12).map { (i: Int) -> Fence in
        let center = Coordinate(latitude: Double(i % 4) * 0.001, longitude: Double(i / 4) * 0.001)
        let dwell: Double? = i % 3 == 0 ? 30 : nil
        return Fence(id: FenceID("f\(i)"), region: Region(.circle(center: center, radius: 90)), dwellTime: dwell)
    }

    /// Ids for device number `n`: some short, some long (heap strings), one pair canonically equivalent.
    static func id(_ n: Int, variant: Bool) -> DeviceID {
        switch n {
        case 0: variant ? "cafe\u{301}" : "caf\u{E9}"
        case 1: "a-device-id-longer-than-fifteen-bytes"
        default: DeviceID("d\(n)")
        }
    }

    static let configurations: [DetectionEngine.Configuration] = [
        .init(),
        .init(defaultDwellTime: 20),
        .init(options: DetectionOptions(entryDelay: 5, exitDelay: 3, dwellEvery: 40)),
        .init(reorderWindow: 15, deduplicate: true),
    ]

    @Test("handles give the events, rejections and state of processing by id", arguments: [1, 2, 3, 4] as [UInt64])
    func sameAsByID(seed: UInt64) {
        for configuration in Self.configurations {
            var random = SplitMix64(seed: seed)
            var byID = DetectionEngine(fences: Self.fences, configuration: configuration)
            var byHandle = DetectionEngine(fences: Self.fences, configuration: configuration)
            var other = DetectionEngine(fences: Self.fences)  // hands out handles that are foreign to `byHandle`
            var handles = Array(repeating: DeviceHandle(), count: 8)
            var eventsByID: [GeofenceEvent] = [], eventsByHandle: [GeofenceEvent] = [], scrap: [GeofenceEvent] = []
            var time = 1_700_000_000.0
            for step in 0..<3_000 {
                let n = Int(random.next() % 8)
                let device = Self.id(n, variant: random.next() % 2 == 0)
                switch random.next() % 40 {
                case 0:  // forget: the handle goes stale, and the device may come back in a new slot
                    let exitsAt = random.next() % 2 == 0 ? Date(timeIntervalSince1970: time) : nil
                    #expect(byID.forget(device, exitsAt: exitsAt, into: &eventsByID)
                            == byHandle.forget(device, exitsAt: exitsAt, into: &eventsByHandle))
                    continue
                case 1:  // a wrong handle: another device's
                    handles[n] = handles[Int(random.next() % 8)]
                case 2:  // a foreign handle: another engine's slot for the same id
                    var foreign = DeviceHandle()
                    other.process(update(device, time, 0, 0), handle: &foreign, into: &scrap)
                    handles[n] = foreign
                default: break
                }
                // Mostly forward in time; some late (out of order, or inside the reorder window), some invalid.
                time += Double(random.next() % 7)
                let late = random.next() % 25 == 0 ? Double(random.next() % 30) : 0
                let lat = random.next() % 60 == 0 ? 95 : Double(random.next() % 50) * 0.0001 - 0.001
                let lon = Double(random.next() % 120) * 0.0001 - 0.001
                let u = update(device, time - late, lat, lon)
                let a = byID.process(u, into: &eventsByID)
                let b = byHandle.process(u, handle: &handles[n], into: &eventsByHandle)
                #expect(a == b, "step \(step)")
                #expect(handles[n].isResolved)
                if step % 500 == 0 {
                    let now = Date(timeIntervalSince1970: time + 10)
                    byID.advance(to: now, into: &eventsByID)
                    byHandle.advance(to: now, into: &eventsByHandle)
                }
            }
            #expect(eventsByID == eventsByHandle)
            #expect(!eventsByID.isEmpty)
            #expect(byID.statistics == byHandle.statistics)
            #expect(byID.knownDevices == byHandle.knownDevices)
            for device in byID.knownDevices {
                #expect(byID.presence(of: device) == byHandle.presence(of: device))
            }
        }
    }

    @Test("an unresolved handle resolves on the first update; a forgotten device's handle is corrected")
    func resolvesAndCorrects() {
        var engine = DetectionEngine(fences: Self.fences)
        var handle = DeviceHandle()
        #expect(!handle.isResolved)
        var events: [GeofenceEvent] = []
        #expect(engine.process(update("car", 0, 0, 0), handle: &handle, into: &events) == nil)
        #expect(handle.isResolved)
        let first = handle
        #expect(engine.process(update("car", 1, 0, 0), handle: &handle, into: &events) == nil)
        #expect(handle == first)

        // Rejected updates keep a right handle.
        #expect(engine.process(update("car", 0.5, 0, 0), handle: &handle, into: &events) != nil)
        #expect(handle == first)

        // After a forget the old slot is dead: the same id starts afresh in a new slot, with an entry.
        engine.forget("car", into: &events)
        events.removeAll()
        #expect(engine.process(update("car", 2, 0, 0), handle: &handle, into: &events) == nil)
        #expect(handle.isResolved && handle != first)
        #expect(events.map(\.kind).contains(.entry))
        #expect(engine.knownDevices == ["car"])
    }
}
