import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import Testing

/// What a device costs the engine: an idle device (inside no fence, short id) at most 64 bytes with its
/// share of the device table, whatever the number of devices; a device inside k fences O(k) more.
/// These fail if someone grows the per-device record or loosens the table's load.
@Suite("Device memory")
struct DeviceMemoryTests {
    static func idleUpdate(_ i: Int) -> LocationUpdate {
        LocationUpdate(device: DeviceID("idle-\(i)"), time: Date(timeIntervalSince1970: 1_700_000_000),
                       latitude: -40, longitude: -40)
    }

    @Test("the per-device record is 56 bytes and an idle device costs at most 64 with its table share")
    func idleDeviceRecordSize() {
        #expect(MemoryLayout<DeviceRecord>.stride == 56)
        var engine = DetectionEngine(fences: [square("far", lat: 10, lon: 10)])
        var events: [GeofenceEvent] = []
        var worst = 0.0
        for i in 0..<20_000 {
            engine.process(Self.idleUpdate(i), into: &events)
            let devices = i + 1
            guard devices >= 12 else { continue }  // the table's first 16 buckets
            let tableShare = Double(engine.deviceTable.bucketBytes) / Double(devices)
            worst = max(worst, tableShare)
            if Double(MemoryLayout<DeviceRecord>.stride) + tableShare > 64 {
                Issue.record("\(devices) devices: record \(MemoryLayout<DeviceRecord>.stride) B + table \(tableShare) B > 64 B")
                break
            }
        }
        #expect(events.isEmpty)
        #expect(worst <= 8)
        let memory = engine.deviceMemory
        #expect(memory.devices == 20_000)
        #expect(memory.presenceBytes == 0 && memory.idBytes == 0)  // nothing on the heap per idle device
        #expect(memory.fixedBytes == engine.devices.capacity * 56 + engine.deviceTable.bucketBytes)
        #expect(memory.tableBytes == engine.deviceTable.bucketBytes)
        #expect(memory.recordBytes <= 64)
    }

    /// `k` fences nested around the point (0.5, 0.5).
    static func nested(_ k: Int) -> [Fence] {
        (0..<k).map { j in
            let pad = Double(j) * 0.01
            return square(FenceID("n\(j)"), lat: -pad, lon: -pad, size: 1 + 2 * pad)
        }
    }

    @Test("a device inside k fences costs O(k) more than an idle one", arguments: [1, 2, 5, 16, 40])
    func presenceIsLinear(k: Int) {
        var events: [GeofenceEvent] = []
        func memory(inside: Bool) -> DetectionEngine.DeviceMemory {
            var engine = DetectionEngine(fences: Self.nested(k))
            for i in 0..<100 { engine.process(Self.idleUpdate(i), into: &events) }
            engine.process(update("walker", 1_700_000_000, inside ? 0.5 : 30, 0.5), into: &events)
            return engine.deviceMemory
        }
        let idle = memory(inside: false), busy = memory(inside: true)
        #expect(busy.fixedBytes == idle.fixedBytes)
        let extra = busy.totalBytes - idle.totalBytes
        // One fence list: its array header and 24 bytes per membership, with at most doubled capacity.
        #expect(extra >= DetectionEngine.arrayHeaderBytes + 24 * k)
        #expect(extra <= DetectionEngine.arrayHeaderBytes + 2 * 24 * k)
    }

    @Test("instant visits live beside the records and are dropped with the device")
    func instantVisitsBesideTheRecords() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0)])
        var events: [GeofenceEvent] = []
        engine.process(update("d", 100, 0.5, 0.5), into: &events)
        engine.process(update("d", 100, 5, 5), into: &events)    // out at the same instant: an instant visit
        engine.process(update("d", 100, 0.5, 0.5), into: &events)  // in again at that instant: the second visit
        #expect(events.map(\.kind) == [.entry, .exit, .entry])
        #expect(events[0].visitID != events[2].visitID)
        #expect(engine.instantVisits.count == 1)
        #expect(engine.deviceMemory.presenceBytes > 0)
        engine.forget("d", into: &events)
        #expect(engine.instantVisits.isEmpty)
    }
}
