import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterGeoJSON
@testable import PerimeterServer
import PerimeterService
import PerimeterTestSupport
import Testing

/// The event and location-response bytes written directly equal ``JSONWriter``'s text of the ``JSONValue``
/// documents they replace.
@Suite("Event JSON written as bytes")
struct EventJSONBytesTests {
    static func event(_ random: inout SplitMix64, sequence: Int64, fence: String = "park") -> GeofencingEvent {
        func pick<T>(_ options: [T]) -> T { options[Int(random.next() % UInt64(options.count))] }
        let kind = pick([GeofenceEventKind.entry, .dwell, .exit, .cross, .inside])
        let time = pick([0, 1_700_000_000.123, 1_700_000_000.0005, -1e10, -62_200_000_000, 2e14 / 1000, 9e12, .nan,
                         Double(random.next() % 4_000_000_000) + Double(random.next() % 1000) / 1000])
        let coordinate = Coordinate(latitude: pick([0, -0.0, 44.6, -89.999999999, 1e-7, 46.486405193062134]),
                                    longitude: pick([0, -110.5, 179.99999999999997, -0.5955696970495349, 100]))
        return GeofencingEvent(sequence: sequence, event: GeofenceEvent(
            id: pick(["e-1", "ev\"il\\", "\u{1}ctl\n"]), visitID: pick(["v-1", "visit é"]), kind: kind,
            fence: FenceID(fence), device: DeviceID(pick(["van-7", "q\"uote", "tab\t", "ü😀", "\u{7f}\u{1f}"])),
            time: Date(timeIntervalSince1970: time), coordinate: coordinate,
            timeInside: pick([nil, 0, 12.5, .infinity, .nan, 1e-5, 3600]),
            observedAt: pick([nil, Date(timeIntervalSince1970: 1_700_000_001.9996)]),
            reason: pick([ExitReason.left, .timeout])))
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func eventBytesEqualTheWriterOfTheValue(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for k in 0..<400 {
            let logged = Self.event(&random, sequence: Int64(k) * 7_919 - 3)
            let name: String? = [nil, "Park", "Qu\"ote\\d \u{8}"][k % 3]
            let group: String? = [nil, "parks", "g/ro\nup"][(k / 3) % 3]
            var object = EventJSON.value(logged).objectValue ?? [:]
            if let name { object["fenceName"] = .string(name) }
            if let group { object["group"] = .string(group) }
            var expected: [UInt8] = []
            JSONWriter().write(.object(object), into: &expected)
            var written: [UInt8] = []
            EventJSON.write(logged, fenceName: name, group: group, into: &written)
            #expect(String(decoding: written, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
            #expect(EventJSON.bytes(logged) == { var plain: [UInt8] = []; JSONWriter().write(EventJSON.value(logged), into: &plain); return plain }())
        }
    }

    @Test func rfc3339BytesEqualTheString() {
        var random = SplitMix64(seed: 9)
        for seconds in [0, -0.0005, 0.0005, 1_700_000_000.9995, -1, -62_135_596_800, -2.4e11, 2.4e11, 2.6e11, .infinity, .nan]
            + (0..<500).map({ _ in Double(Int64(bitPattern: random.next()) % 200_000_000_000) / 1000 }) {
            var bytes: [UInt8] = []
            RFC3339.append(Date(timeIntervalSince1970: seconds), to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == RFC3339.string(from: Date(timeIntervalSince1970: seconds)), "\(seconds)")
        }
        for value in [Int64.min, Int64.max, 0, -1, 9, 10, -10, 123_456_789] {
            var bytes: [UInt8] = []
            JSONWriter.appendInteger(value, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == JSONWriter().string(.integer(value)))
        }
    }

    /// The whole `POST /v1/locations` answer: accepted count, events with their fence's name and group
    /// (none for a fence no longer monitored), rejections.
    @Test func locationsResponseEqualsTheWriterOfTheDocument() throws {
        let api = try T.api()
        #expect(T.call(api, "PUT", "/v1/fences/park", body: T.square(group: "pa\"rks", name: "The \\ Park")).status == 201)
        #expect(T.call(api, "PUT", "/v1/fences/plain", body: T.square()).status == 201)
        var random = SplitMix64(seed: 4)
        let events = (0..<30).map { Self.event(&random, sequence: Int64($0 + 1), fence: ["park", "plain", "gone"][$0 % 3]) }
        let rejected: [(Int, JSONValue)] = [(1, ["index": 1, "code": "invalidField", "pointer": "/1/latitude", "detail": "x"]),
                                            (4, ["index": 4, "code": "outOfOrderUpdate", "detail": "late"])]
        let expected = JSONWriter().string([
            "accepted": 28, "rejected": .array(rejected.map(\.1)),
            "events": .array(events.map { EventJSON.value($0, fence: (try? api.service.fence(id: $0.event.fence)) ?? nil) }),
        ])
        let written = api.locationsResponse(accepted: 28, events: events, rejected: rejected)
        #expect(String(decoding: written, as: UTF8.self) == expected)
        #expect(expected.contains("The \\\\ Park"), "the fence name is in the expected text")
        let empty = api.locationsResponse(accepted: 0, events: [], rejected: [])
        #expect(String(decoding: empty, as: UTF8.self) == #"{"accepted":0,"events":[],"rejected":[]}"#)
    }

    /// A single update (not an array) that is rejected is still a 422 problem with pointer and path.
    @Test func aRejectedSingleUpdateIsAProblem() throws {
        let api = try T.api()
        let response = T.call(api, "POST", "/v1/locations", body: #"{"deviceId":"a","latitude":91,"longitude":0,"time":1}"#)
        #expect(response.status == 422)
        let body = T.parse(response)
        #expect(body["type"] == "urn:perimeter:problem:location-rejected")
        #expect(body["pointer"] == "/latitude")
        #expect(body["path"] == "$.latitude")
        #expect(body["code"] == "invalidField")
        #expect(body["detail"] == "latitude 91.0 is outside -90...90")
        let ok = T.call(api, "POST", "/v1/locations", body: #"{"deviceId":"a","latitude":9,"longitude":0,"time":1}"#)
        #expect(String(decoding: ok.bodyBytes, as: UTF8.self) == #"{"accepted":1,"events":[],"rejected":[]}"#)
    }
}
