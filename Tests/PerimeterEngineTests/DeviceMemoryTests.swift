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

    @Test("the per-device record is 48 bytes and an idle device costs at most 64 with its table share and the records' spare capacity")
    func idleDeviceRecordSize() {
        #expect(MemoryLayout<DeviceRecord>.stride == 48)
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
            // What the bench reports: the records' array with its spare capacity, plus the table.
            let idle = Double(engine.devices.capacity * MemoryLayout<DeviceRecord>.stride + engine.deviceTable.bucketBytes)
                / Double(devices)
            if devices >= 256, idle > 64 {
                Issue.record("\(devices) devices: \(idle) B per idle device > 64 B (records' capacity \(engine.devices.capacity))")
                break
            }
        }
        #expect(events.isEmpty)
        #expect(worst <= 8)
        let memory = engine.deviceMemory
        #expect(memory.devices == 20_000)
        #expect(memory.presenceBytes == 0 && memory.idBytes == 0)  // nothing on the heap per idle device
        #expect(memory.fixedBytes == engine.devices.capacity * 48 + engine.deviceTable.bucketBytes)
        #expect(memory.tableBytes == engine.deviceTable.bucketBytes)
        #expect(memory.recordBytes <= 56)
        #expect(memory.idleDeviceBytes <= 64)
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
        // One block in the pool (header and room for fewer than 2k memberships) after its unused
        // entry 0, the pool's array at most doubled by its growth.
        #expect(idle.presenceBytes == 0)
        #expect(extra >= 24 * (k + 2))
        #expect(extra <= 2 * 24 * (2 * k + 2))
    }

    @Test("devices inside k fences hold one block each of fewer than 2k + 2 entries", arguments: [1, 2, 3, 5, 16, 40])
    func blocksAreLinear(k: Int) {
        var engine = DetectionEngine(fences: Self.nested(k))
        var events: [GeofenceEvent] = []
        for i in 0..<50 { engine.process(update(DeviceID("in-\(i)"), 100, 0.5, 0.5), into: &events) }
        for i in 0..<50 { engine.process(Self.idleUpdate(i), into: &events) }
        #expect(events.count == 50 * k)
        let block = PresencePool.blockSize(PresencePool.sizeClass(of: k))
        #expect(block >= k + 1 && block < 2 * k + 2)
        #expect(engine.presencePool.entries.count == 1 + 50 * block)
        #expect(engine.presencePool.freeEntries == 0)
        #expect(engine.deviceMemory.presenceBytes <= 2 * 24 * (1 + 50 * block))
        for i in 0..<50 { #expect(engine.presence(of: DeviceID("in-\(i)")).count == k) }
    }

    /// An update of `device` at `t` inside the `k - m` outermost of ``nested(_:)``'s fences.
    static func inside(_ device: DeviceID, _ t: Double, allBut m: Int) -> LocationUpdate {
        update(device, t, 1 + 0.01 * Double(m) - 0.005, 0.5)
    }

    @Test("devices leaving fences give their blocks to devices entering them")
    func leavingReusesBlocks() {
        var engine = DetectionEngine(fences: Self.nested(5))
        var events: [GeofenceEvent] = []
        for i in 0..<100 { engine.process(update(DeviceID("a\(i)"), 100, 0.5, 0.5), into: &events) }
        let used = engine.presencePool.entries.count
        let bytes = engine.deviceMemory.presenceBytes
        for i in 0..<100 { engine.process(update(DeviceID("a\(i)"), 101, 30, 0.5), into: &events) }
        #expect(engine.presencePool.freeEntries == used - 1)  // all but entry 0
        #expect(engine.deviceMemory.presenceBytes == bytes)
        for i in 0..<100 { engine.process(update(DeviceID("b\(i)"), 102, 0.5, 0.5), into: &events) }
        #expect(engine.presencePool.entries.count == used)
        #expect(engine.presencePool.freeEntries == 0)
        #expect(engine.deviceMemory.presenceBytes == bytes)
        #expect(events.filter { $0.kind == .entry }.count == 1_000)
        #expect(events.filter { $0.kind == .exit }.count == 500)
        // Forgetting gives the block back too.
        engine.forget("b0", into: &events)
        #expect(engine.presencePool.freeEntries == PresencePool.blockSize(PresencePool.sizeClass(of: 5)))
    }

    @Test("a list that grows or shrinks moves to a block of its size, keeping its visits")
    func listsMoveBetweenSizeClasses() {
        let k = 40
        var engine = DetectionEngine(fences: Self.nested(k))
        var events: [GeofenceEvent] = []
        engine.process(Self.inside("d", 100, allBut: k - 1), into: &events)  // inside n39 only
        engine.process(Self.inside("other", 100, allBut: k - 2), into: &events)  // n38, n39
        #expect(engine.presence(of: "d").map(\.fence) == ["n39"])
        let first = engine.presence(of: "d")[0]
        var t = 100.0
        for m in stride(from: k - 2, through: 0, by: -1) {  // walks in: one fence more each update
            t += 1
            engine.process(Self.inside("d", t, allBut: m), into: &events)
            let presence = engine.presence(of: "d")
            #expect(presence.count == k - m)
            #expect(presence.first { $0.fence == "n39" } == first, "the first visit is kept as the list moves")
        }
        #expect(engine.presencePool.freeEntries > 0)
        for m in 1..<k {  // and out again
            t += 1
            engine.process(Self.inside("d", t, allBut: m), into: &events)
            #expect(engine.presence(of: "d").count == k - m)
        }
        #expect(engine.presence(of: "d") == [first])
        #expect(engine.presence(of: "other").map(\.fence) == ["n38", "n39"])
        // What is left in use: entry 0, the two devices' blocks (of classes 0 and 1).
        let live = 1 + PresencePool.blockSize(0) + PresencePool.blockSize(1)
        #expect(engine.presencePool.entries.count - engine.presencePool.freeEntries == live)
        #expect(events.filter { $0.kind == .entry }.count == k + 2)
        #expect(events.filter { $0.kind == .exit }.count == k - 1)
    }

    @Test("an update count past 2^32 - 2 is kept whole beside the record")
    func largeUpdateCounts() throws {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0)])
        var events: [GeofenceEvent] = []
        let start = UInt64(UInt32.max) - 3
        try engine.restore([
            .init(device: "d", lastTime: 100, lastCoordinate: Coordinate(latitude: 5, longitude: 5), updateCount: start,
                  memberships: []),
            .init(device: "huge", lastTime: 100, lastCoordinate: Coordinate(latitude: 5, longitude: 5),
                  updateCount: 1 << 40, memberships: []),
        ])
        #expect(engine.largeUpdateCounts == [1: 1 << 40])
        for i in 1...6 {  // 2^32 - 3, - 2, - 1 (kept elsewhere from here), 2^32, ...
            engine.process(update("d", 100 + Double(i), i == 4 ? 0.5 : 5, 0.5), into: &events)
            #expect(engine.snapshot(of: "d")?.updateCount == start + UInt64(i))
            if i == 4 {  // the visit carries the count of the moment it began
                #expect(engine.snapshot(of: "d")?.memberships.map(\.visitSequence) == [start + 3])
            }
        }
        #expect(engine.devices[0].smallUpdateCount == UInt32.max)
        #expect(engine.largeUpdateCounts[0] == start + 6)
        #expect(events.map(\.kind) == [.entry, .exit])
        engine.process(update("huge", 101, 0.5, 0.5), into: &events)
        let snapshot = try #require(engine.snapshot(of: "huge"))
        #expect(snapshot.updateCount == (1 << 40) + 1)
        #expect(snapshot.memberships.map(\.visitSequence) == [1 << 40])
        engine.forget("huge", into: &events)
        engine.forget("d", into: &events)
        #expect(engine.largeUpdateCounts.isEmpty)
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
