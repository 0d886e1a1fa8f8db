import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// The engine's own device table and event identifiers (the hot path's replacements for a
/// `[DeviceID: Int32]` and for ids written out per event) must behave exactly as what they replace.
@Suite("Device table and event identifiers")
struct DeviceTableTests {
    static let park = Fence(id: "park", region: Region(.circle(center: Coordinate(latitude: 0, longitude: 0), radius: 100)))

    static func update(_ device: DeviceID, _ time: Double, inside: Bool) -> LocationUpdate {
        LocationUpdate(device: device, time: Date(timeIntervalSince1970: 1_700_000_000 + time),
                       latitude: inside ? 0 : 0.01, longitude: 0)
    }

    @Test("canonically equivalent ids are one device (ASCII and not, short and long)")
    func equivalentIDsAreOneDevice() {
        let pairs: [(DeviceID, DeviceID)] = [
            ("K-7", "\u{212A}-7"),                          // Kelvin sign: canonically K
            ("caf\u{E9}", "cafe\u{301}"),                   // precomposed vs combining accent
            ("a-rather-long-device-identifier-\u{E9}", "a-rather-long-device-identifier-e\u{301}"),
        ]
        for (a, b) in pairs {
            #expect(a == b)
            #expect(DeviceTable.hash(a) == DeviceTable.hash(b))
            var engine = DetectionEngine(fences: [Self.park])
            #expect(engine.process(Self.update(a, 0, inside: true)).map(\.kind) == [.entry])
            #expect(engine.process(Self.update(b, 10, inside: true)).isEmpty)  // the same device, still inside
            #expect(engine.knownDevices.count == 1)
            #expect(engine.process(Self.update(b, 20, inside: false)).map(\.kind) == [.exit])
        }
    }

    @Test("lookups, insertions and removals agree with a dictionary through growth and forgetting")
    func agreesWithDictionary() {
        var random = SplitMix64(seed: 18)
        var engine = DetectionEngine(fences: [Self.park])
        var model: [DeviceID: Bool] = [:]  // device → inside
        var events: [GeofenceEvent] = []
        for step in 0..<6_000 {
            // Ids of varied lengths (small and heap strings), some colliding in the table's low bits.
            let n = Int(random.next() % 700)
            let device = DeviceID(n % 3 == 0 ? "device-with-a-long-name-\(n)" : "d\(n)")
            if random.next() % 10 == 0 {
                let known = engine.forget(device, into: &events)
                #expect(known == (model.removeValue(forKey: device) != nil))
                continue
            }
            let inside = random.next() % 2 == 0
            events.removeAll()
            engine.process(Self.update(device, Double(step), inside: inside), into: &events)
            let was = model[device] ?? false
            #expect(events.map(\.kind) == (was == inside ? [] : [inside ? .entry : .exit]), "step \(step), \(device)")
            model[device] = inside
        }
        #expect(Set(engine.knownDevices) == Set(model.keys))
        for (device, inside) in model {
            #expect(engine.presence(of: device).isEmpty == !inside)
        }
    }

    @Test("an event's ids read back as given, and engine ids as their 32 digits")
    func identifiersRoundTrip() {
        for text in ["e1", "", "04eb96705bf26b196807518c20f55b16", "04EB96705BF26B196807518C20F55B16",
                     "04eb96705bf26b196807518c20f55b1", "04eb96705bf26b196807518c20f55b16x"] {
            let event = GeofenceEvent(id: text, visitID: text, kind: .entry, fence: "f", device: "d",
                                      time: Date(timeIntervalSince1970: 0), coordinate: Coordinate(latitude: 0, longitude: 0))
            #expect(event.id == text)
            #expect(event.visitID == text)
        }
        var engine = DetectionEngine(fences: [Self.park])
        let entry = engine.process(Self.update("car", 0, inside: true))[0]
        let copy = GeofenceEvent(id: entry.id, visitID: entry.visitID, kind: entry.kind, fence: entry.fence,
                                 device: entry.device, time: entry.time, coordinate: entry.coordinate)
        #expect(copy == entry)
        #expect(copy.hashValue == entry.hashValue)
        var changed = entry
        changed.id = "other"
        #expect(changed != entry)
        #expect(changed.id == "other")
    }

    @Test("memory accounting: an idle device costs its state and its table share; k fences cost O(k) more")
    func memoryAccounting() {
        let fences = (0..<3).map {
            Fence(id: FenceID("c\($0)"), region: Region(.circle(center: Coordinate(latitude: 0, longitude: 0), radius: 100 + 10 * Double($0))))
        }
        var engine = DetectionEngine(fences: fences)
        for i in 0..<100 { _ = engine.process(Self.update(DeviceID("idle-\(i)"), 0, inside: false)) }
        let idle = engine.deviceMemory
        #expect(idle.devices == 100)
        #expect(idle.presenceBytes == 0)
        #expect(idle.idBytes == 0)
        #expect(idle.fixedBytes >= 100 * (MemoryLayout<DeviceRecord>.stride + MemoryLayout<UInt32>.stride))
        #expect(idle.idleDeviceBytes == Double(idle.fixedBytes) / 100)

        #expect(engine.process(Self.update("inside-three", 1, inside: true)).count == 3)
        let three = engine.deviceMemory
        let added = three.presenceBytes - idle.presenceBytes
        #expect(added >= 3 * MemoryLayout<Membership>.stride)
        #expect(added <= DetectionEngine.arrayHeaderBytes + 8 * MemoryLayout<Membership>.stride)  // O(k), not more

        _ = engine.process(Self.update("a-device-id-longer-than-fifteen-bytes", 2, inside: false))
        #expect(engine.deviceMemory.idBytes > 37)
    }

    @Test("a batch gives the events and rejections of one call per update")
    func batchEqualsSingleCalls() {
        var random = SplitMix64(seed: 7)
        let fences = (0..<20).map { i in
            Fence(id: FenceID("f\(i)"), region: Region(.circle(center: Coordinate(latitude: Double(i % 5) * 0.001, longitude: Double(i / 5) * 0.001),
                                                              radius: 80)))
        }
        let updates = (0..<3_000).map { i in
            // Mostly in time order per device; every 50th goes back in time and is rejected.
            let time = Double(i) - (i % 50 == 49 ? 100 : 0)
            return LocationUpdate(device: DeviceID("d\(random.next() % 40)"), time: Date(timeIntervalSince1970: 1_700_000_000 + time),
                                  latitude: Double(random.next() % 600) * 0.00001, longitude: Double(random.next() % 600) * 0.00001)
        }
        var single = DetectionEngine(fences: fences, configuration: .init(defaultDwellTime: 30))
        var batched = single
        var singleEvents: [GeofenceEvent] = [], batchEvents: [GeofenceEvent] = []
        var singleRejections: [Int] = []
        for (i, update) in updates.enumerated() where single.process(update, into: &singleEvents) != nil {
            singleRejections.append(i)
        }
        var batchRejections: [Int] = []
        for start in stride(from: 0, to: updates.count, by: 700) {
            let batch = Array(updates[start ..< min(start + 700, updates.count)])
            batchRejections += batched.process(contentsOf: batch, into: &batchEvents).map { start + $0.index }
        }
        #expect(!singleEvents.isEmpty)
        #expect(!singleRejections.isEmpty)
        #expect(batchEvents == singleEvents)
        #expect(batchRejections == singleRejections)
        #expect(batched.statistics == single.statistics)
    }

    @Test("a batch adds devices in order of their first accepted update, as one call per update does")
    func batchAddsDevicesInOrderOfFirstUpdates() {
        // New devices, devices whose first update is rejected (never added), equivalent spellings of one id
        // and repeats right after a first update, in batches of every size from one to all.
        var random = SplitMix64(seed: 13)
        let spellings: [[DeviceID]] = [["K-7", "\u{212A}-7"], ["caf\u{E9}", "cafe\u{301}"], ["d1"], ["d2"],
                                       ["a-device-id-longer-than-sixteen-bytes"], ["x"], ["yy"], ["zzzzzzzz"]]
        var updates: [LocationUpdate] = []
        for i in 0..<2_000 {
            let names = spellings[Int(random.next() % UInt64(spellings.count))]
            let device = names[Int(random.next() % UInt64(names.count))]
            var update = Self.update(device, Double(i), inside: random.next() % 3 != 0)
            switch random.next() % 16 {
            case 0: update.coordinate = Coordinate(latitude: .nan, longitude: 0)
            case 1: update.time = Date(timeIntervalSince1970: -5)
            case 2: update.time = Date(timeIntervalSince1970: 1_700_000_000 + Double(i) - 50)  // often out of order
            default: break
            }
            updates.append(update)
        }
        for size in [1, 2, 3, 64, 2_000] {
            var single = DetectionEngine(fences: [Self.park], configuration: .init(defaultDwellTime: 5))
            var batched = single
            var singleEvents: [GeofenceEvent] = [], batchEvents: [GeofenceEvent] = []
            var singleRejections: [Int] = [], batchRejections: [Int] = []
            for (i, update) in updates.enumerated() where single.process(update, into: &singleEvents) != nil {
                singleRejections.append(i)
            }
            for start in stride(from: 0, to: updates.count, by: size) {
                let batch = Array(updates[start ..< min(start + size, updates.count)])
                batchRejections += batched.process(contentsOf: batch, into: &batchEvents).map { start + $0.index }
            }
            #expect(batchEvents == singleEvents, "batches of \(size)")
            #expect(batchRejections == singleRejections, "batches of \(size)")
            #expect(batched.knownDevices.map(\.rawValue) == single.knownDevices.map(\.rawValue), "batches of \(size)")
            #expect(batched.statistics == single.statistics, "batches of \(size)")
        }
    }

    @Test("an id's last partial word is read with whole loads as it was byte by byte")
    func tailWordsMatchBytes() {
        var random = SplitMix64(seed: 64)
        let bytes = (0..<40).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        bytes.withUnsafeBytes { all in
            for count in 0...all.count {
                let buffer = UnsafeRawBufferPointer(rebasing: all[0 ..< count])
                for offset in 0...count where count - offset < 8 {
                    var expected: UInt64 = 0
                    for i in offset ..< count { expected |= UInt64(buffer[i]) << UInt64(8 * (i - offset)) }
                    #expect(buffer.littleEndianTail(from: offset) == expected, "\(count) bytes from \(offset)")
                }
            }
        }
    }
    /// `text` as a string with its own heap storage (never stored in the value, however short).
    static func heapString(_ text: String) -> String {
        var s = String()
        s.reserveCapacity(64)
        s += text
        return s
    }

    @Test("a short ASCII id's hash read from its words is its hash; other ids have none")
    func inlineASCIIHashIsTheHash() {
        var random = SplitMix64(seed: 1815)
        for round in 0..<2_000 {
            let count = round % 24
            let text = String((0..<count).map { _ in Character(Unicode.Scalar(UInt8(32 + random.next() % 95))) })
            for id in [DeviceID(text), DeviceID("\(text)"), DeviceID(String(Substring(text))), DeviceID(Self.heapString(text))] {
                if let quick = DeviceTable.inlineASCIIHash(id) {
                    #expect(count <= 15, "\(text)")
                    #expect(quick == DeviceTable.hash(id), "\(text)")
                }
            }
            #if _endian(little) && _pointerBitWidth(_64)
            // Where the words hold short text, the quick hash applies (else the lookups lose their speed).
            if count <= 15 { #expect(DeviceTable.inlineASCIIHash(DeviceID(text)) != nil, "\(text)") }
            #endif
            #expect(DeviceTable.inlineASCIIHash(DeviceID(Self.heapString(text))) == nil || count <= 15)
        }
        for text in ["\u{212A}-7", "caf\u{E9}", "\u{E9}", "a-rather-long-device-identifier"] {
            #expect(DeviceTable.inlineASCIIHash(DeviceID(text)) == nil, "\(text)")
        }
    }

    @Test("ids met in short and in heap form, in either order, are one device each")
    func shortAndHeapFormsAreOneDevice() {
        var random = SplitMix64(seed: 77)
        var engine = DetectionEngine(fences: [Self.park])
        var expected: [String: Int32] = [:]
        var events: [GeofenceEvent] = []
        for step in 0..<3_000 {
            let n = Int(random.next() % 400)
            let text = n % 7 == 0 ? "device-number-\(n)" : n % 11 == 0 ? "\u{E9}\(n)" : "d\(n)"
            let id = DeviceID(random.next() % 2 == 0 ? text : Self.heapString(text))
            engine.process(Self.update(id, Double(step), inside: random.next() % 2 == 0), into: &events)
            let slot = engine.slot(of: id)
            #expect(slot != nil)
            if let known = expected[text] { #expect(slot == known, "\(text)") } else { expected[text] = slot }
            #expect(engine.slot(of: DeviceID(Self.heapString(text))) == slot)
            #expect(engine.slot(of: DeviceID(String(Substring(text)))) == slot)
        }
        #expect(engine.knownDevices.count == expected.count)
        #expect(Set(engine.knownDevices.map(\.rawValue)) == Set(expected.keys))
    }
}
