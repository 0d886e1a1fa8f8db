import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterGeometry
import PerimeterService
import PerimeterTestSupport
import Testing

/// The one JSON form of an event (``GeofencingEvent/writeJSON(into:properties:)``), which the REST API,
/// the SSE stream, webhook bodies and `perimeter replay` print: its bytes equal ``JSONWriter``'s text of
/// the document the JSON shape describes, built here member by member from the event's fields.
@Suite("Event JSON")
struct EventJSONTests {
    static func event(_ random: inout SplitMix64, sequence: Int64) -> GeofencingEvent {
        func pick<T>(_ options: [T]) -> T { options[Int(random.next() % UInt64(options.count))] }
        let kind = pick([GeofenceEventKind.entry, .dwell, .exit, .cross, .inside])
        let time = pick([0, 1_700_000_000.123, 1_700_000_000.0005, -1e10, -62_200_000_000, 2e14 / 1000, 9e12, .nan,
                         Double(random.next() % 4_000_000_000) + Double(random.next() % 1000) / 1000])
        let coordinate = Coordinate(latitude: pick([0, -0.0, 44.6, -89.999999999, 1e-7, 46.486405193062134]),
                                    longitude: pick([0, -110.5, 179.99999999999997, -0.5955696970495349, 100]))
        let event = GeofenceEvent(
            id: pick(["e-1", "ev\"il\\", "\u{1}ctl\n"]), visitID: pick(["v-1", "visit é"]), kind: kind,
            fence: FenceID(pick(["park", "q\"uote", "ü"])), device: DeviceID(pick(["van-7", "q\"uote", "tab\t", "ü😀", "\u{7f}\u{1f}"])),
            time: Date(timeIntervalSince1970: time), coordinate: coordinate,
            timeInside: pick([nil, 0, 12.5, .infinity, .nan, 1e-5, 3600]),
            observedAt: pick([nil, Date(timeIntervalSince1970: 1_700_000_001.9996)]),
            reason: pick([ExitReason.left, .timeout]))
        let properties: [String: JSONValue] = pick([
            [:], ["name": "Park"], ["b": [1, 2.5, nil, true], "a": ["nested": "x\"y"], "é": -0.0, "Z": .integer(-7)],
        ])
        return GeofencingEvent(sequence: sequence, event: event, fenceName: pick([nil, "Park", "Qu\"ote\\d \u{8}"]),
                               group: pick([nil, "parks", "g/ro\nup"]), properties: properties,
                               message: pick([nil, "", "Entered Park at 10:00:00", "ctl\u{0}"]))
    }

    /// The event's document as docs/server.md describes it, built as a ``JSONValue``.
    static func document(_ logged: GeofencingEvent, properties: Bool) -> JSONValue {
        let event = logged.event
        var object: [String: JSONValue] = [
            "sequence": .integer(logged.sequence), "id": .string(event.id), "visitId": .string(event.visitID),
            "type": .string(event.kind.rawValue), "fenceId": .string(event.fence.rawValue),
            "deviceId": .string(event.device.rawValue), "time": .string(RFC3339.string(from: event.time)),
            "observedAt": .string(RFC3339.string(from: event.observedAt)),
            "latitude": .double(event.coordinate.latitude), "longitude": .double(event.coordinate.longitude),
        ]
        if let timeInside = event.timeInside, timeInside.isFinite { object["timeInside"] = .double(timeInside) }
        if event.kind == .exit { object["reason"] = .string(event.reason.rawValue) }
        if let name = logged.fenceName { object["fenceName"] = .string(name) }
        if let group = logged.group { object["group"] = .string(group) }
        if let message = logged.message { object["message"] = .string(message) }
        if properties { object["properties"] = .object(logged.properties) }
        return .object(object)
    }

    @Test("the bytes equal JSONWriter's text of the event's document, with and without properties", arguments: [1, 2, 3] as [UInt64])
    func bytesEqualTheWriterOfTheDocument(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for k in 0..<400 {
            let logged = Self.event(&random, sequence: Int64(k) * 7_919 - 3)
            for properties in [true, false] {
                let written = logged.json(properties: properties)
                let expected = JSONWriter().string(Self.document(logged, properties: properties))
                #expect(String(decoding: written, as: UTF8.self) == expected)
                var appended: [UInt8] = [0x5b]
                logged.writeJSON(into: &appended, properties: properties)
                #expect(appended == [0x5b] + written, "appends without touching what is there")
            }
        }
    }

    @Test("message is left out when there is none; properties is {} for a fence without any")
    func optionalMembers() throws {
        let event = GeofenceEvent(id: "e", visitID: "v", kind: .entry, fence: "f", device: "d",
                                  time: Date(timeIntervalSince1970: 0), coordinate: Coordinate(latitude: 1, longitude: 2))
        let plain = try JSONParser().parse(GeofencingEvent(sequence: 1, event: event).json())
        #expect(plain["message"] == nil && plain["fenceName"] == nil && plain["group"] == nil && plain["reason"] == nil)
        #expect(plain["properties"] == .object([:]))
        let without = try JSONParser().parse(GeofencingEvent(sequence: 1, event: event, properties: ["a": 1]).json(properties: false))
        #expect(without["properties"] == nil && without["fenceId"] == "f")
    }

    @Test("an event made from its fence carries the name, group, properties and rendered message")
    func fromFence() throws {
        let fence = Fence(id: "meadow", region: Region(.circle(center: Coordinate(latitude: 0, longitude: 0), radius: 10)),
                          name: "Meadow Section", group: "park",
                          message: MessageTemplate("{name} {event} by {device} at {time} ({timestamp}); colour {colour}, rank {rank}{missing}"),
                          properties: ["name": "Meadow Section", "colour": "green", "rank": 2, "perimeter:group": "park"])
        let event = GeofenceEvent(id: "e", visitID: "v", kind: .exit, fence: "meadow", device: "van-7",
                                  time: Date(timeIntervalSince1970: 3_723.5), coordinate: Coordinate(latitude: 0, longitude: 0))
        let logged = GeofencingEvent(sequence: 4, event: event, fence: fence)
        #expect(logged.fenceName == "Meadow Section" && logged.group == "park")
        #expect(logged.properties == fence.properties)
        #expect(logged.message == "Meadow Section exit by van-7 at 01:02:03 (1970-01-01T01:02:03.500Z); colour green, rank 2")
        #expect(logged.feature.properties == fence.properties)
        let none = GeofencingEvent(sequence: 5, event: event, fence: nil)
        #expect(none.fenceName == nil && none.message == nil && none.properties.isEmpty)
        var silent = fence
        silent.message = nil
        #expect(GeofencingEvent(sequence: 6, event: event, fence: silent).message == nil)
    }
}
