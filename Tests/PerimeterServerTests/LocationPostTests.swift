import Foundation
import PerimeterGeoJSON
import PerimeterServer
import Testing

/// `POST /v1/locations` feeds `event: location` messages to the stream clients that asked for them.
@Suite("Positions from posted updates", .serialized)
struct LocationPostTests {
    @Test func acceptedUpdatesReachTheStreamAndRejectedOnesDoNot() throws {
        let server = try FanoutTests.start()
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        try client.send("GET", "/v1/events/stream?locations=true")
        #expect(try client.readHead().0 == 200)
        let poster = try TestClient(port: server.port)
        // The second item is older than the first for the same device: rejected (out of order).
        let batch: JSONValue = [T.update("van", 10, inside: true), T.update("van", 5, inside: false),
                                T.update("bus", 10, inside: false)]
        let response = try poster.request("POST", "/v1/locations", body: Array(T.json(batch).utf8))
        #expect(T.parse(response.body)["accepted"] == 2)
        let text = try client.readStream { FanoutTests.messages($0, type: "location").count >= 2 }
        let devices = FanoutTests.messages(text, type: "location").compactMap { block in
            block.split(separator: "\n").first { $0.hasPrefix("data: ") }.map { T.parse(Array($0.dropFirst(6).utf8))["deviceId"] }
        }
        #expect(devices == ["van", "bus"])
        #expect(!text.contains("22:13:25"), "the rejected update's position was sent")
    }

    @Test("update times outside 1970…2200 are refused per item over HTTP, naming the value and the member")
    func timeRange() throws {
        let server = try FanoutTests.start()
        defer { server.stop() }
        let poster = try TestClient(port: server.port)
        let far: JSONValue = ["deviceId": "van", "latitude": 44.6, "longitude": -110.5, "time": .double(1e18)]
        let milliseconds: JSONValue = ["deviceId": "bus", "latitude": 44.6, "longitude": -110.5, "time": .integer(1_700_000_000_000)]
        let early: JSONValue = ["deviceId": "car", "latitude": 44.6, "longitude": -110.5, "time": "1969-07-20T20:17:40Z"]
        let batch: JSONValue = [T.update("van", 10, inside: true), far, milliseconds, early, T.update("bus", 10, inside: false)]
        let response = try poster.request("POST", "/v1/locations", body: Array(T.json(batch).utf8))
        #expect(response.status == 200)
        let body = T.parse(response.body)
        #expect(body["accepted"] == 2)
        #expect(body["rejected"]?[0]?["index"] == 1)
        #expect(body["rejected"]?[0]?["pointer"] == "/1/time")
        #expect(body["rejected"]?[0]?["detail"]?.stringValue?.contains("1e+18") == true, "\(response.text)")
        #expect(body["rejected"]?[1]?["pointer"] == "/2/time")
        #expect(body["rejected"]?[1]?["detail"]?.stringValue?.contains("milliseconds") == true)
        #expect(body["rejected"]?[2]?["pointer"] == "/3/time")
        #expect(body["rejected"]?[2]?["detail"]?.stringValue?.contains("1969-07-20T20:17:40.000Z") == true)

        let single = try poster.request("POST", "/v1/locations", body: Array(T.json(far).utf8))
        #expect(single.status == 422)
        let problem = T.parse(single.body)
        #expect(problem["pointer"] == "/time" && problem["detail"]?.stringValue?.contains("1e+18") == true, "\(single.text)")
        // As NDJSON.
        let lines = [T.json(T.update("car", 20, inside: true)), T.json(far)].joined(separator: "\n")
        let ndjson = try poster.request("POST", "/v1/locations", headers: ["Content-Type": "application/x-ndjson"],
                                        body: Array(lines.utf8))
        let rejected = T.parse(ndjson.body)["rejected"]?[0]
        #expect(rejected?["index"] == 1 && rejected?["detail"]?.stringValue?.contains("1e+18") == true, "\(ndjson.text)")
    }
}
