import Foundation
import PerimeterEngine
import PerimeterGeoJSON
import PerimeterHTTP
@testable import PerimeterServer
import PerimeterService
import Testing

/// The event stream over real sockets with many clients, device positions on the stream, fence ids
/// containing `/`, and the transport's connection limit.
@Suite("Fan-out, positions and raw paths over a real socket", .serialized)
struct FanoutTests {
    static func start(_ path: String? = nil) throws -> PerimeterServer {
        try PerimeterServer(configuration: ServerConfiguration(databasePath: path, address: "127.0.0.1", port: 0,
                                                               threads: 2, api: APIConfiguration(heartbeatInterval: 60),
                                                               drainTimeout: 5))
    }

    /// The `id:` values of the SSE frames in `text`, in order.
    static func ids(_ text: String) -> [Int64] {
        text.split(separator: "\n").compactMap { line in line.hasPrefix("id: ") ? Int64(line.dropFirst(4)) : nil }
    }

    /// The SSE messages (blocks between blank lines) of `text` whose `event:` is `type`.
    static func messages(_ text: String, type: String) -> [String] {
        text.components(separatedBy: "\n\n").filter { $0.split(separator: "\n").contains("event: \(type)") }
    }

    @Test func twentyClientsReceiveEveryEventOnceInOrder() throws {
        let path = SocketTests.temporaryDatabase()
        defer { SocketTests.remove(path) }
        let server = try Self.start(path)
        defer { server.stop() }
        let poster = try TestClient(port: server.port)
        #expect(try poster.request("PUT", "/v1/fences/park", body: Array(T.square(name: "Park").utf8)).status == 201)

        let clients = try (0..<20).map { _ in try TestClient(port: server.port) }
        for client in clients {
            try client.send("GET", "/v1/events/stream")
            #expect(try client.readHead().0 == 200)
        }
        // 12 posts of 3 devices entering (even posts) or leaving (odd posts) the fence: 36 events.
        var expected: [Int64] = []
        for post in 0..<12 {
            let updates = (0..<3).map { T.update("car-\($0)", post * 10, inside: post % 2 == 0) }
            let response = try poster.request("POST", "/v1/locations", body: Array(T.json(.array(updates)).utf8))
            #expect(response.status == 200)
            guard case .array(let events)? = T.parse(response.body)["events"] else {
                Issue.record("no events in \(response.text)")
                return
            }
            expected += events.compactMap { if case .integer(let s)? = $0["sequence"] { s } else { nil } }
        }
        #expect(expected.count == 36)
        #expect(expected == expected.sorted() && Set(expected).count == expected.count)
        for (index, client) in clients.enumerated() {
            let text = try client.readStream { Self.ids($0).count >= expected.count }
            #expect(Self.ids(text) == expected, "client \(index)")
        }
    }

    @Test func fenceIdsWithSlashAndPercentAreAddressable() throws {
        let server = try Self.start()
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        let created = try client.request("PUT", "/v1/fences/depots%2Fnorth", body: Array(T.square(name: "North").utf8))
        #expect(created.status == 201)
        #expect(T.parse(created.body)["id"] == "depots/north")
        #expect(try client.request("PUT", "/v1/fences/50%25%20off", body: Array(T.square(offset: 1).utf8)).status == 201)

        let fetched = try client.request("GET", "/v1/fences/depots%2fnorth")
        #expect(fetched.status == 200)
        #expect(T.parse(fetched.body)["properties"]?["name"] == "North")
        #expect(T.parse(try client.request("GET", "/v1/fences/50%25%20off").body)["id"] == "50% off")
        let ids = T.parse(try client.request("GET", "/v1/fences").body)["features"]
        #expect(ids?[0]?["id"] == "50% off" && ids?[1]?["id"] == "depots/north")

        // Unencoded, the '/' separates segments: no such endpoint.
        let split = try client.request("GET", "/v1/fences/depots/north")
        #expect(split.status == 404)
        #expect(T.parse(split.body)["instance"] == "/v1/fences/depots/north")
        #expect(try client.request("GET", "/v1/fences/%zz").status == 404)

        #expect(try client.request("DELETE", "/v1/fences/depots%2Fnorth").status == 204)
        #expect(try client.request("GET", "/v1/fences/depots%2Fnorth").status == 404)
    }

    @Test func routeDecodesSegmentsAfterSplitting() {
        func route(_ path: String, _ method: String = "GET") -> (String, [String: String])? {
            guard case .found(let endpoint, let parameters) = PerimeterAPI.router.route(method: method, path: path) else { return nil }
            return (endpoint.path.description, parameters)
        }
        #expect(route("/v1/fences/a%2Fb")?.1 == ["id": "a/b"])
        #expect(route("/v1/fences/plain")?.1 == ["id": "plain"])
        #expect(route("/v1/fences/caf%C3%A9")?.1 == ["id": "café"])
        #expect(route("/v1/fences/a+b")?.1 == ["id": "a+b"])
        #expect(route("/v1/devices/x%2Fy/consent", "PUT")?.0 == "/v1/devices/{id}/consent")
        #expect(route("/v1/devices/x%2Fy/consent", "PUT")?.1 == ["id": "x/y"])
        #expect(route("/v1/fences/a/b") == nil)
        #expect(route("/v1/fences/%2") == nil)
        #expect(route("/v1/fences/%FF") == nil)
        #expect(route("/v1/events/stream")?.0 == "/v1/events/stream")
        #expect(route("/v1/events/stream", "HEAD")?.0 == "/v1/events/stream")
        #expect(route("/")?.0 == "/")
        #expect(route("//") == nil)
    }

    @Test func streamCarriesPositionsWhenAsked() throws {
        let server = try Self.start()
        defer { server.stop() }
        let plain = try TestClient(port: server.port)
        try plain.send("GET", "/v1/events/stream")
        #expect(try plain.readHead().0 == 200)
        let client = try TestClient(port: server.port)
        try client.send("GET", "/v1/events/stream?locations=true&device=van")
        #expect(try client.readHead().0 == 200)

        let time = Date(timeIntervalSince1970: 1_700_000_000)
        server.api.hub.publishLocations([LocationUpdate(device: "truck", time: time, latitude: 1, longitude: 2),
                                         LocationUpdate(device: "van", time: time, latitude: 44.5, longitude: -110.25)])
        let text = try client.readStream { !Self.messages($0, type: "location").isEmpty }
        let message = Self.messages(text, type: "location")[0]
        #expect(!message.contains("id:"))
        #expect(!message.contains("truck"))
        let data = message.split(separator: "\n").first { $0.hasPrefix("data: ") }.map { T.parse(Array($0.dropFirst(6).utf8)) }
        #expect(data?["deviceId"] == "van")
        #expect(data?["latitude"]?.doubleValue == 44.5 && data?["longitude"]?.doubleValue == -110.25)
        #expect(data?["time"] == "2023-11-14T22:13:20.000Z")

        // A client that did not ask gets events only: the next thing it sees is the event, not the position.
        let poster = try TestClient(port: server.port)
        #expect(try poster.request("PUT", "/v1/fences/park", body: Array(T.square().utf8)).status == 201)
        _ = try poster.request("POST", "/v1/locations", body: Array(T.json(T.update("van", 0, inside: true)).utf8))
        let events = try plain.readStream { $0.contains("event: entry") }
        #expect(!events.contains("event: location"))

        let bad = try poster.request("GET", "/v1/events/stream?locations=sometimes")
        #expect(bad.status == 400)
        #expect(T.parse(bad.body)["parameter"] == "locations")
    }

    @Test func transportHoldsConnectionsPastItsLimitUntilOneCloses() throws {
        let server = try HTTPServer(configuration: .init(port: 0, threads: 1, maximumConnections: 2)) { _ in
            HTTPResponse(status: 200, contentType: "text/plain", bytes: Array("ok".utf8))
        }
        defer { server.stop() }
        let first = try TestClient(port: server.port)
        var second: TestClient? = try TestClient(port: server.port)
        #expect(try first.request("GET", "/").text == "ok")
        #expect(try second?.request("GET", "/").text == "ok")
        // The third waits in the listen backlog: no answer while two connections are open …
        let third = try TestClient(port: server.port, timeout: 1)
        try third.send("GET", "/")
        #expect(throws: TestClient.Failure.timeout) { _ = try third.readResponse() }
        // … and is served once one of them closes.
        second = nil
        var patient = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(third.fd, SOL_SOCKET, SO_RCVTIMEO, &patient, socklen_t(MemoryLayout<timeval>.size))
        #expect(try third.readResponse().text == "ok")
        #expect(try first.request("GET", "/").text == "ok")
        _ = second
    }
}
