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
}
