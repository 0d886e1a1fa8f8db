import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// The shortcuts of an update's default path — hex digits made a word at a time, the device table's
/// tags — checked against the plain computations they replace.
@Suite("Update hot path")
struct HotPathTests {
    /// The digits the plain way: `String(value, radix: 16)`, padded to eight, as a little-endian word.
    static func plainHexWord(_ value: UInt32) -> UInt64 {
        let text = String(repeating: "0", count: 8 - String(value, radix: 16).count) + String(value, radix: 16)
        var word: UInt64 = 0
        for (i, byte) in text.utf8.enumerated() { word |= UInt64(byte) << UInt64(8 * i) }
        return word
    }

    @Test("eight hex digits made at once equal the digits written one by one")
    func hexWordMatchesDigits() {
        var values: [UInt32] = [0, 1, 9, 10, 15, 16, 0x9999_9999, 0xAAAA_AAAA, 0xFFFF_FFFF, 0x0123_4567, 0x89AB_CDEF]
        for position in 0..<8 {  // every digit value at every position
            for digit in 0..<16 { values.append(UInt32(digit) << UInt32(4 * position)) }
        }
        var random = SplitMix64(seed: 16)
        for _ in 0..<20_000 { values.append(UInt32(truncatingIfNeeded: random.next())) }
        for value in values {
            #expect(StableHash.hexWord(value) == Self.plainHexWord(value), "\(String(value, radix: 16))")
        }
        let (high, low) = StableHash.hexWords(0x0123_4567_89AB_CDEF)
        #expect(high == Self.plainHexWord(0x0123_4567) && low == Self.plainHexWord(0x89AB_CDEF))
    }

    @Test("lookups stay right when forgotten devices' slots outnumber the buckets (the tags' bits shrink)")
    func slotsBeyondBuckets() {
        // A few live devices, forgotten and added again over and over: every return takes a new slot,
        // so slot numbers pass the bucket count many times over and the table makes room for them.
        var random = SplitMix64(seed: 1_618)
        var engine = DetectionEngine(fences: [DeviceTableTests.park])
        var model: [DeviceID: (slot: Int32, inside: Bool)] = [:]
        var events: [GeofenceEvent] = []
        for step in 0..<30_000 {
            let n = Int(random.next() % 40)
            let device = DeviceID(n % 4 == 0 ? "a-device-with-a-long-id-\(n)" : "d\(n)")
            if random.next() % 3 == 0 {
                #expect(engine.forget(device, into: &events) == (model.removeValue(forKey: device) != nil))
                continue
            }
            let inside = random.next() % 2 == 0
            events.removeAll()
            engine.process(DeviceTableTests.update(device, Double(step), inside: inside), into: &events)
            let before = model[device]
            let expected: [GeofenceEventKind] = (before?.inside ?? false) == inside ? [] : [inside ? .entry : .exit]
            #expect(events.map(\.kind) == expected, "step \(step), \(device)")
            let slot = before?.slot ?? Int32(engine.devices.count - 1)  // a new device takes the next slot
            #expect(engine.slot(of: device) == slot, "step \(step), \(device)")
            model[device] = (slot, inside)
        }
        #expect(engine.devices.count > 5_000)  // slots far beyond the buckets of ≤ 40 live devices
        for (device, entry) in model {
            #expect(engine.slot(of: device) == entry.slot)
            #expect(engine.presence(of: device).isEmpty == !entry.inside)
        }
        for n in 40..<80 { #expect(engine.slot(of: DeviceID("d\(n)")) == nil) }
        #expect(Set(engine.knownDevices) == Set(model.keys))
    }

    @Test("exits, then entries, each by fence id, when one update leaves and enters several fences")
    func exitsThenEntriesInOrder() {
        // Rings of fences around two centres far apart; jumping between them leaves every fence of one
        // and enters every fence of the other. Fence ids are shuffled against slot order.
        var random = SplitMix64(seed: 99)
        var ids = (0..<12).map { "f\($0)" }
        ids.shuffle(using: &random)
        let fences = ids.enumerated().map { i, id in
            Fence(id: FenceID(id), region: Region(.circle(center: Coordinate(latitude: 0, longitude: i % 2 == 0 ? 0 : 1),
                                                          radius: 100 + 50 * Double(i))))
        }
        var engine = DetectionEngine(fences: fences)
        var events: [GeofenceEvent] = []
        for step in 0..<6 {
            events.removeAll()
            engine.process(LocationUpdate(device: "car", time: Date(timeIntervalSince1970: Double(step)),
                                          latitude: 0, longitude: step % 2 == 0 ? 0 : 1), into: &events)
            let exits = events.prefix { $0.kind == .exit }, entries = events.dropFirst(exits.count)
            #expect(entries.allSatisfy { $0.kind == .entry })
            #expect(entries.count == 6)
            #expect(exits.count == (step == 0 ? 0 : 6))
            #expect(exits.map(\.fence) == exits.map(\.fence).sorted())
            #expect(entries.map(\.fence) == entries.map(\.fence).sorted())
        }
    }
    @Test("an update's events are put in order as the standard sort puts them, from any start, few or many")
    func sortEventsAgreesWithSort() {
        var random = SplitMix64(seed: 1818)
        let exitFirst: (GeofenceEvent, GeofenceEvent) -> Bool = { a, b in
            (a.kind == .entry) == (b.kind == .entry) ? a.fence < b.fence : b.kind == .entry
        }
        let byTime: (GeofenceEvent, GeofenceEvent) -> Bool = { ($0.time, $0.fence) < ($1.time, $1.fence) }
        for round in 0..<600 {
            let prefix = Int(random.next() % 3), count = round % 14
            // Distinct (kind, fence) pairs and distinct (time, fence) pairs: both orders are total.
            var keys = Set<String>()
            var events: [GeofenceEvent] = []
            while events.count < prefix + count {
                let fence = "f\(random.next() % 40)", kind: GeofenceEventKind = random.next() % 2 == 0 ? .entry : .exit
                guard keys.insert(fence).inserted else { continue }
                events.append(GeofenceEvent(id: "e\(events.count)", visitID: "v", kind: kind, fence: FenceID(fence),
                                            device: "d", time: Date(timeIntervalSince1970: Double(random.next() % 4)),
                                            coordinate: Coordinate(latitude: 0, longitude: 0)))
            }
            for precedes in [exitFirst, byTime] {
                var sorted = events, expected = events
                DetectionEngine.sortEvents(&sorted, from: prefix, by: precedes)
                expected[prefix...].sort(by: precedes)
                #expect(sorted == expected, "\(count) events after \(prefix)")
                #expect(sorted.map(\.id) == expected.map(\.id))
            }
        }
    }

    @Test("longitudes of ±180° and beyond are taken as their equal in [-180°, 180°), as the plain wrap gives")
    func longitudesWrapped() {
        // Fences touching the antimeridian from both sides, so that a wrong wrap changes events.
        let fences = [square("east", lat: 0, lon: 179, size: 1), square("west", lat: 0, lon: -180, size: 1),
                      square("middle", lat: 0, lon: -1, size: 2)]
        var random = SplitMix64(seed: 77)
        var wrapped = DetectionEngine(fences: fences)
        var plain = DetectionEngine(fences: fences)
        for step in 0..<2000 {
            let t = Double(step)
            let lat = Double(Int.random(in: -2...4, using: &random)) / 2
            // Exactly on the meridians often: ±180, 0 and their multiples of 360.
            let base = [-180.0, 180, 0, -0.5, 179.5, -179.5, 0.5].randomElement(using: &random)!
            let turns = Double(Int.random(in: -3...3, using: &random))
            let lon = base + 360 * turns
            // The plain computation: the remainder of a division by 360 into [-180, 180).
            var expected = lon.truncatingRemainder(dividingBy: 360)
            if expected >= 180 { expected -= 360 } else if expected < -180 { expected += 360 }
            let a = wrapped.process(update("d", t, lat, lon))
            let b = plain.process(update("d", t, lat, expected))
            #expect(a == b, "events at step \(step), longitude \(lon)")
            #expect(wrapped.snapshot(of: "d")?.lastCoordinate == Coordinate(latitude: lat, longitude: expected),
                    "stored position at step \(step), longitude \(lon)")
        }
        #expect(wrapped.statistics.entries > 100)
    }
}
