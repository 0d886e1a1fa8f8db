import Foundation
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterServer
import PerimeterService
import PerimeterSQLite
import PerimeterTestSupport
import Testing

@Suite("Over a real loopback socket", .serialized)
struct SocketTests {
    static func temporaryDatabase() -> String {
        NSTemporaryDirectory() + "perimeter-server-test-\(UUID().uuidString).sqlite"
    }

    static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// A store on a copy of the running server's database and log: what a `kill -9` now would leave.
    /// (The server holds its file exclusively, so the test cannot open it directly.)
    static func copyOfStore(_ path: String) throws -> SQLiteGeofencingStore {
        let copy = temporaryDatabase()
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
        }
        return try SQLiteGeofencingStore(path: copy)
    }

    static func start(_ path: String? = nil, api: APIConfiguration = APIConfiguration(heartbeatInterval: 0.2))
        throws -> PerimeterServer {
        try PerimeterServer(configuration: ServerConfiguration(databasePath: path, address: "127.0.0.1", port: 0,
                                                               threads: 2, api: api,
                                                               options: GeofencingOptions(defaultDwellTime: 600),
                                                               drainTimeout: 5))
    }

    @Test func transportServesKeepAliveAndStops() throws {
        let server = try HTTPServer(configuration: .init(port: 0, threads: 2, maximumBodySize: 100)) { request in
            HTTPResponse(status: 200, contentType: "text/plain",
                         bytes: Array("\(request.method) \(request.path) \(request.query["q"] ?? "-") \(request.body.count) \(request.isBodyTooLarge)".utf8))
        }
        #expect(server.port != 0)
        let client = try TestClient(port: server.port)
        #expect(try client.request("GET", "/a?q=x%20y").text == "GET /a x y 0 false")
        #expect(try client.request("POST", "/b", body: Array(repeating: 65, count: 50)).text == "POST /b - 50 false")
        // A declared body over the limit is refused by the transport before it is read.
        let tooLarge = try client.request("POST", "/c", body: Array(repeating: 65, count: 500))
        #expect(tooLarge.status == 413 && tooLarge.text.contains("exceeds 100 bytes"))
        server.stop()
        #expect(!server.isRunning)
        #expect(throws: (any Error).self) { _ = try TestClient(port: server.port).request("GET", "/") }
    }

    @Test func anIdleKeepAliveConnectionIsClosedAtTheTimeoutAndTheClientOpensANewOne() throws {
        let server = try HTTPServer(configuration: .init(port: 0, threads: 2, connectionTimeout: 1)) { request in
            HTTPResponse(status: 200, contentType: "text/plain", bytes: Array(request.path.utf8))
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        #expect(try client.request("GET", "/first").text == "/first")
        #expect(!client.closedByServer)
        let idleSince = Date()
        let closed = waitUntil(seconds: 5) { client.closedByServer }  // the server closes it after 1 s idle
        let idle = Date().timeIntervalSince(idleSince)
        #expect(closed, "the server kept an idle connection open for \(idle) s")
        #expect(idle >= 0.5, "closed after \(idle) s, before the 1 s timeout")
        #expect(try client.request("GET", "/second").text == "/second")
        #expect(client.reconnections == 1)
    }

    @Test func refusesPublicAddressWithoutToken() {
        #expect(throws: ServerError.self) {
            _ = try PerimeterServer(configuration: ServerConfiguration(address: "0.0.0.0", port: 0))
        }
    }

    @Test func restOverSocketWithTokens() throws {
        let server = try Self.start(api: APIConfiguration(tokens: [AccessToken(name: "w", scopes: [.write, .read], secret: "writersecret")]))
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        let auth = ["Authorization": "Bearer writersecret"]
        #expect(try client.request("PUT", "/v1/fences/park", headers: auth, body: Array(T.square(name: "Park").utf8)).status == 201)
        let denied = try client.request("GET", "/v1/fences/park")
        #expect(denied.status == 401)
        #expect(denied.headers["content-type"] == "application/problem+json")
        let response = try client.request("POST", "/v1/locations", headers: auth,
                                          body: Array(T.json([T.update("car", 0, inside: false), T.update("car", 5, inside: true)]).utf8))
        #expect(response.status == 200)
        #expect(T.parse(response.body)["events"]?[0]?["type"] == "entry")
        #expect(try client.request("GET", "/healthz").status == 200)
    }

    /// A client that disconnects and resumes with Last-Event-ID receives every event exactly once.
    @Test func streamResumesWithLastEventIDMissingNothing() throws {
        let path = Self.temporaryDatabase()
        let server = try Self.start(path)
        defer {
            server.stop()
            Self.remove(path)
        }
        let writer = try TestClient(port: server.port)
        for i in 0..<4 {
            _ = try writer.request("PUT", "/v1/fences/f\(i)", body: Array(T.square(group: i % 2 == 0 ? "even" : "odd", offset: Double(i)).utf8))
        }
        func drive(_ device: String, from start: Int) throws {
            var updates: [JSONValue] = []
            for step in 0..<8 { updates.append(T.update(device, start + step, inside: step % 2 == 0, offset: Double(step % 4))) }
            #expect(try writer.request("POST", "/v1/locations", body: Array(T.json(.array(updates)).utf8)).status == 200)
        }
        var seen: [Int] = []
        func ids(_ text: String) -> [Int] {
            text.split(separator: "\n").compactMap { $0.hasPrefix("id: ") ? Int($0.dropFirst(4)) : nil }
        }
        do {
            let reader = try TestClient(port: server.port)
            try reader.send("GET", "/v1/events/stream")
            let (status, headers) = try reader.readHead()
            #expect(status == 200)
            #expect(headers["content-type"] == "text/event-stream")
            _ = try reader.readStream { $0.contains(": connected") }
            try drive("a", from: 0)
            seen += ids(try reader.readStream { ids($0).count >= 3 })
        }
        // Disconnected; more events happen meanwhile.
        try drive("b", from: 100)
        try drive("c", from: 200)
        let total = Int(server.service.lastEventSequence)
        #expect(total > 8)
        let resumed = try TestClient(port: server.port)
        try resumed.send("GET", "/v1/events/stream", headers: ["Last-Event-ID": String(seen.last ?? 0)])
        _ = try resumed.readHead()
        let replayed = try resumed.readStream { ids($0).last == total }
        seen += ids(replayed)
        // Live events after the catch-up arrive too.
        try drive("d", from: 300)
        let live = Int(server.service.lastEventSequence)
        seen += ids(try resumed.readStream { ids($0).last == live })
        #expect(seen == Array(1...live))
        // The heartbeat comment keeps the idle stream alive.
        #expect(try resumed.readStream { $0.contains(": heartbeat") }.contains(": heartbeat"))
    }

    /// With group commit, events are still readable at once (reads flush) and durable after the interval.
    @Test func groupCommitFlushesPeriodically() async throws {
        let path = Self.temporaryDatabase()
        let server = try PerimeterServer(configuration: ServerConfiguration(
            databasePath: path, port: 0, threads: 2, api: APIConfiguration(heartbeatInterval: 0.2), commitInterval: 0.02))
        defer {
            server.stop()
            Self.remove(path)
        }
        let client = try TestClient(port: server.port)
        _ = try client.request("PUT", "/v1/fences/park", body: Array(T.square().utf8))
        _ = try client.request("POST", "/v1/locations", body: Array(T.json(T.update("car", 0, inside: true)).utf8))
        var logged: [GeofencingEvent] = []
        for _ in 0..<500 where logged.isEmpty {
            let store = try Self.copyOfStore(path)
            logged = try store.events(after: 0, limit: 10)
            store.close()
            Self.remove(store.path)
            // Suspend, not block: the periodic commit runs on the concurrency pool.
            if logged.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
        }
        #expect(logged.map(\.sequence) == [1])
        let page = T.parse(try client.request("GET", "/v1/events").body)
        #expect(page["events"]?.arrayValue?.count == 1)
    }

    @Test func streamFiltersByDeviceGroupAndType() throws {
        let server = try Self.start()
        defer { server.stop() }
        let writer = try TestClient(port: server.port)
        _ = try writer.request("PUT", "/v1/fences/e", body: Array(T.square(group: "even").utf8))
        _ = try writer.request("PUT", "/v1/fences/o", body: Array(T.square(group: "odd", offset: 1).utf8))
        let reader = try TestClient(port: server.port)
        try reader.send("GET", "/v1/events/stream?device=car&group=odd&type=exit")
        _ = try reader.readHead()
        _ = try reader.readStream { $0.contains(": connected") }
        var updates: [JSONValue] = []
        for (step, device) in ["car", "bus"].enumerated() {
            updates.append(T.update(device, 10 * step, inside: true))
            updates.append(T.update(device, 10 * step + 1, inside: true, offset: 1))
            updates.append(T.update(device, 10 * step + 2, inside: false))
        }
        _ = try writer.request("POST", "/v1/locations", body: Array(T.json(.array(updates)).utf8))
        _ = try writer.request("POST", "/v1/locations", body: Array(T.json(T.update("car", 50, inside: true, offset: 1)).utf8))
        _ = try writer.request("POST", "/v1/locations", body: Array(T.json(T.update("car", 60, inside: false)).utf8))
        let text = try reader.readStream { $0.components(separatedBy: "event: ").count >= 3 }
        let data = text.split(separator: "\n").filter { $0.hasPrefix("data: ") }.map { T.parse(Array($0.dropFirst(6).utf8)) }
        #expect(data.count == 2)
        for event in data {
            #expect(event["deviceId"] == "car")
            #expect(event["group"] == "odd")
            #expect(event["type"] == "exit")
        }
    }

    /// Stopping ends open streams, refuses new connections and leaves everything in the store.
    @Test func gracefulShutdownFlushesAndEndsStreams() throws {
        let path = Self.temporaryDatabase()
        defer { Self.remove(path) }
        let server = try Self.start(path)
        let writer = try TestClient(port: server.port)
        _ = try writer.request("PUT", "/v1/fences/park", body: Array(T.square().utf8))
        let reader = try TestClient(port: server.port)
        try reader.send("GET", "/v1/events/stream")
        _ = try reader.readHead()
        _ = try reader.readStream { $0.contains(": connected") }
        _ = try writer.request("POST", "/v1/locations", body: Array(T.json([T.update("car", 0, inside: true)]).utf8))
        let port = server.port
        server.stop()
        #expect(throws: TestClient.Failure.closed) { _ = try reader.readStream { _ in false } }
        #expect(throws: (any Error).self) { _ = try TestClient(port: port).request("GET", "/healthz") }
        let reopened = GeofencingService(store: try SQLiteGeofencingStore(path: path))
        try reopened.configure(GeofencingOptions())
        #expect(reopened.lastEventSequence == 1)
        #expect(try reopened.features().count == 1)
        try reopened.close()
    }
}
