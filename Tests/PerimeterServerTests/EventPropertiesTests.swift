import Foundation
import PerimeterGeoJSON
import PerimeterServer
import PerimeterService
import PerimeterTestSupport
import Testing

/// Events carry their fence's name, group, properties and message through every way out of the server —
/// the `/v1/locations` answer, `/v1/events`, the SSE stream and webhook bodies — over real sockets, keep
/// them after the fence is deleted and the server restarted, and leave the properties out on request.
@Suite("Event properties and message over a real socket", .serialized)
struct EventPropertiesTests {
    static let fence = #"""
    {"type":"Feature","properties":{"name":"Box","perimeter:group":"depots","perimeter:message":"{device} {event} {name} ({colour})",
     "colour":"red","dock":{"doors":[1,2],"covered":true}},
     "geometry":{"type":"Polygon","coordinates":[[[-110.6,44.5],[-110.4,44.5],[-110.4,44.7],[-110.6,44.7],[-110.6,44.5]]]}}
    """#
    static let properties: JSONValue = ["name": "Box", "perimeter:group": "depots", "perimeter:message": "{device} {event} {name} ({colour})",
                                        "colour": "red", "dock": ["doors": [1, 2], "covered": true]]
    static let json = ["Content-Type": "application/json"]

    static func configuration(_ path: String?, eventProperties: Bool = true) -> ServerConfiguration {
        ServerConfiguration(databasePath: path, port: 0, threads: 2,
                            api: APIConfiguration(heartbeatInterval: 60, eventProperties: eventProperties),
                            drainTimeout: 5, allowPrivateWebhookTargets: true)
    }

    /// The `data:` of the first SSE message of type `type` in `text`.
    static func data(_ text: String, type: String) throws -> JSONValue {
        let message = try #require(FanoutTests.messages(text, type: type).first, "no \(type) message in \(text)")
        let line = try #require(message.split(separator: "\n").first { $0.hasPrefix("data: ") })
        return try JSONParser().parse(String(line.dropFirst(6)))
    }

    static func post(_ client: TestClient, _ path: String, _ updates: [JSONValue]) throws -> JSONValue {
        let response = try client.request("POST", path, headers: json, body: Array(T.json(.array(updates)).utf8))
        guard response.status == 200 else { throw TestClient.Failure.malformed(response.text) }
        return T.parse(response.body)
    }

    @Test func restSSEAndWebhooksCarryPropertiesAndMessage() async throws {
        let path = SocketTests.temporaryDatabase()
        defer { SocketTests.remove(path) }
        let receiver = try LoopbackReceiver()
        defer { receiver.stop() }
        let server = try PerimeterServer(configuration: Self.configuration(path))
        let port = server.port, url = receiver.url
        let (entered, exited, full, lean) = try await offThePool { () throws -> (JSONValue, JSONValue, String, String) in
            let client = try TestClient(port: port)
            #expect(try client.request("PUT", "/v1/fences/box", headers: Self.json, body: Array(Self.fence.utf8)).status == 201)
            let registered = try client.request("POST", "/v1/webhooks", headers: Self.json, body: Array(T.json([
                "url": .string(url), "id": "wh-1", "secret": "receiver-secret-0123456789"]).utf8))
            #expect(registered.status == 201, "\(registered.text)")
            let stream = try TestClient(port: port), leanStream = try TestClient(port: port)
            try stream.send("GET", "/v1/events/stream")
            try leanStream.send("GET", "/v1/events/stream?properties=false")
            #expect(try stream.readHead().0 == 200)
            #expect(try leanStream.readHead().0 == 200)
            let entered = try Self.post(client, "/v1/locations", [T.update("truck-7", 0, inside: false), T.update("truck-7", 10, inside: true)])
            let exited = try Self.post(client, "/v1/locations?properties=false", [T.update("truck-7", 20, inside: false)])
            let full = try stream.readStream { $0.contains("event: exit") }
            let lean = try leanStream.readStream { $0.contains("event: exit") }
            return (entered, exited, full, lean)
        }
        // The /v1/locations answer.
        let entry = try #require(entered["events"]?[0])
        #expect(entry["type"] == "entry" && entry["fenceName"] == "Box" && entry["group"] == "depots")
        #expect(entry["properties"] == Self.properties)
        #expect(entry["message"] == "truck-7 entry Box (red)")
        let exit = try #require(exited["events"]?[0])
        #expect(exit["type"] == "exit" && exit["properties"] == nil, "?properties=false")
        #expect(exit["message"] == "truck-7 exit Box (red)" && exit["fenceName"] == "Box")

        // The stream, with and without properties.
        #expect(try Self.data(full, type: "entry") == entry)
        #expect(try Self.data(full, type: "exit")["properties"] == Self.properties)
        #expect(try Self.data(lean, type: "exit") == exit)
        #expect(try Self.data(lean, type: "entry")["properties"] == nil)

        // Webhook bodies: the CloudEvent's data is the same event JSON.
        let deliveries = await receiver.wait(for: 2)
        #expect(deliveries.count == 2)
        let bodies = try deliveries.map { try JSONParser().parse($0.body) }
        #expect(bodies.first?["data"] == entry)
        #expect(bodies.last?["data"]?["properties"] == Self.properties)
        #expect(bodies.last?["data"]?["message"] == "truck-7 exit Box (red)")

        // Deleted fence, then a restart: the log still reports what the events were logged with.
        let (afterDelete, leanLog) = try await offThePool { () throws -> (String, JSONValue) in
            let client = try TestClient(port: port)
            #expect(try client.request("DELETE", "/v1/fences/box").status == 204)
            let log = try client.request("GET", "/v1/events")
            let lean = try client.request("GET", "/v1/events?properties=false&limit=10")
            return (log.text, T.parse(lean.body))
        }
        let log = try JSONParser().parse(afterDelete)
        #expect(log["events"]?[0] == entry)
        #expect(log["events"]?[1]?["properties"] == Self.properties && log["events"]?[1]?["message"] == "truck-7 exit Box (red)")
        #expect(leanLog["events"]?[1] == exit && leanLog["next"] == 2)
        await server.stopOffPool()

        let restarted = try PerimeterServer(configuration: Self.configuration(path))
        let restartedPort = restarted.port
        let afterRestart = try await offThePool { () throws -> String in
            try TestClient(port: restartedPort).request("GET", "/v1/events").text
        }
        await restarted.stopOffPool()
        #expect(afterRestart == afterDelete)
    }

    @Test func aServerWithoutEventPropertiesLeavesThemOutUnlessAsked() async throws {
        let receiver = try LoopbackReceiver()
        defer { receiver.stop() }
        let server = try PerimeterServer(configuration: Self.configuration(nil, eventProperties: false))
        let port = server.port, url = receiver.url
        let (plain, asked, log) = try await offThePool { () throws -> (JSONValue, JSONValue, JSONValue) in
            let client = try TestClient(port: port)
            #expect(try client.request("PUT", "/v1/fences/box", headers: Self.json, body: Array(Self.fence.utf8)).status == 201)
            #expect(try client.request("POST", "/v1/webhooks", headers: Self.json, body: Array(T.json([
                "url": .string(url), "id": "wh-1", "secret": "receiver-secret-0123456789"]).utf8)).status == 201)
            let plain = try Self.post(client, "/v1/locations", [T.update("a", 0, inside: true)])
            let asked = try Self.post(client, "/v1/locations?properties=true", [T.update("b", 0, inside: true)])
            return (plain, asked, T.parse(try client.request("GET", "/v1/events").body))
        }
        #expect(plain["events"]?[0]?["properties"] == nil && plain["events"]?[0]?["message"] == "a entry Box (red)")
        #expect(asked["events"]?[0]?["properties"] == Self.properties)
        #expect(log["events"]?[0]?["properties"] == nil && log["events"]?[1]?["properties"] == nil)
        let deliveries = await receiver.wait(for: 2)
        #expect(deliveries.count == 2)
        for delivery in deliveries {
            let data = try JSONParser().parse(delivery.body)["data"]
            #expect(data?["properties"] == nil && data?["fenceName"] == "Box")
        }
        await server.stopOffPool()
    }
}
