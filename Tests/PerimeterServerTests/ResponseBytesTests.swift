import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterGeoJSON
@testable import PerimeterServer
import PerimeterService
import PerimeterTestSupport
import Testing

/// Responses written directly as bytes equal ``JSONWriter``'s text of the documents they stand for.
@Suite("Response bytes")
struct ResponseBytesTests {
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

    /// The whole `POST /v1/locations` answer: accepted count, events as they were logged (their own
    /// fence name, group, properties and message), rejections; with and without properties.
    @Test(arguments: [true, false])
    func locationsResponseEqualsTheWriterOfTheDocument(properties: Bool) throws {
        let api = try T.api()
        func logged(_ k: Int) -> GeofencingEvent {
            let named = k % 3 == 0
            let event = GeofenceEvent(
                id: "e\(k)", visitID: "v\(k / 2)", kind: k % 2 == 0 ? .entry : .exit, fence: FenceID(["park", "plain", "gone"][k % 3]),
                device: "van\"7", time: Date(timeIntervalSince1970: 1_700_000_000 + Double(k)),
                coordinate: Coordinate(latitude: 44.6, longitude: -110.5), timeInside: k % 2 == 0 ? nil : 12.5)
            let properties: [String: JSONValue] = named ? ["name": "The \\ Park", "perimeter:group": "pa\"rks"] : [:]
            return GeofencingEvent(sequence: Int64(k + 1), event: event, fenceName: named ? "The \\ Park" : nil,
                                   group: named ? "pa\"rks" : nil, properties: properties, message: k % 6 == 0 ? "hello" : nil)
        }
        let events = (0..<30).map(logged)
        let rejected: [(Int, JSONValue)] = [(1, ["index": 1, "code": "invalidField", "pointer": "/1/latitude", "detail": "x"]),
                                            (4, ["index": 4, "code": "outOfOrderUpdate", "detail": "late"])]
        let written = api.locationsResponse(accepted: 28, events: events, rejected: rejected, properties: properties)
        let document = try JSONParser().parse(written)
        let expected = JSONWriter().string([
            "accepted": 28, "rejected": .array(rejected.map(\.1)),
            "events": .array(try events.map { try JSONParser().parse($0.json(properties: properties)) }),
        ])
        #expect(String(decoding: written, as: UTF8.self) == expected)
        #expect(document["events"]?[0]?["fenceName"] == "The \\ Park" && document["events"]?[0]?["message"] == "hello")
        #expect((document["events"]?[0]?["properties"] != nil) == properties)
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
