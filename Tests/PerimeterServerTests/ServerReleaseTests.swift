import Foundation
import PerimeterServer
import PerimeterService
import PerimeterWebhooks
import Testing

/// A stopped server lets go of everything it made: nothing it started (threads, observers, metrics
/// readers, the event sink) keeps its service, API, webhook dispatcher or event hub alive once the
/// caller drops it, so a process that starts and stops servers does not keep one object graph per server.
@Suite("Stopped servers are released")
struct ServerReleaseTests {
    /// The objects a server made, held weakly.
    struct Weak {
        weak var server: PerimeterServer?
        weak var service: GeofencingService?
        weak var api: PerimeterAPI?
        weak var dispatcher: WebhookDispatcher?
        weak var hub: EventHub?
        weak var metrics: Metrics?

        var alive: [String] {
            [("server", server as AnyObject?), ("service", service), ("api", api), ("dispatcher", dispatcher),
             ("hub", hub), ("metrics", metrics)].compactMap { $0.1 == nil ? nil : $0.0 }
        }
    }

    /// Polls until `alive` is empty (threads the server started may hold a reference for a moment
    /// after `stop()` returned: a tick in progress, a worker's last wake-up), or 5 s passed.
    static func released(_ alive: () -> [String]) -> [String] {
        let deadline = Date().addingTimeInterval(5)
        while !alive().isEmpty, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        return alive()
    }

    /// Starts a server, uses it over a socket (fences, locations, an event stream, a webhook), stops it.
    static func startUseAndStop(databasePath: String?) throws -> Weak {
        let server = try PerimeterServer(configuration: ServerConfiguration(
            databasePath: databasePath, address: "127.0.0.1", port: 0, threads: 2,
            api: APIConfiguration(heartbeatInterval: 0.05), drainTimeout: 2, allowPrivateWebhookTargets: true))
        var weak = Weak()
        weak.server = server
        weak.service = server.service
        weak.api = server.api
        weak.dispatcher = server.webhooks
        weak.hub = server.api.hub
        weak.metrics = server.api.metrics
        let client = try TestClient(port: server.port)
        #expect(try client.request("PUT", "/v1/fences/park", body: Array(T.square(name: "Park").utf8)).status == 201)
        // Port 9 (discard) on loopback: nobody answers, so the worker is retrying when the server stops.
        #expect(try client.request("POST", "/v1/webhooks", body: Array(#"{"url":"http://127.0.0.1:9/hook"}"#.utf8)).status == 201)
        let stream = try TestClient(port: server.port)
        try stream.send("GET", "/v1/events/stream?locations=true")
        #expect(try stream.readHead().0 == 200)
        let updates = (0..<4).map { T.update("car", $0 * 10, inside: $0 % 2 == 0) }
        #expect(try client.request("POST", "/v1/locations", body: Array(T.json(.array(updates)).utf8)).status == 200)
        #expect(try client.request("GET", "/metrics").status == 200)
        server.stop()
        return weak
    }

    @Test("an in-memory server, its service, API, dispatcher, hub and metrics are freed after stop()")
    func inMemoryServerIsReleased() throws {
        let weak = try Self.startUseAndStop(databasePath: nil)
        #expect(Self.released { weak.alive } == [])
    }

    @Test("a server on an SQLite file is freed after stop()")
    func sqliteServerIsReleased() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("release-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let weak = try Self.startUseAndStop(databasePath: folder.appendingPathComponent("state.sqlite").path)
        #expect(Self.released { weak.alive } == [])
    }

    @Test("a started and stopped webhook dispatcher and its service are freed")
    func dispatcherIsReleased() throws {
        weak var weakService: GeofencingService?
        weak var weakDispatcher: WebhookDispatcher?
        do {
            let service = GeofencingService()
            try service.configure(GeofencingOptions())
            let dispatcher = try WebhookDispatcher(service: service, store: InMemoryWebhookStore(),
                                                   configuration: .init(allowPrivateTargets: true))
            try dispatcher.start()
            _ = try dispatcher.register(url: "http://127.0.0.1:9/hook", filter: WebhookFilter(), secret: nil)
            dispatcher.stop()
            weakService = service
            weakDispatcher = dispatcher
        }
        #expect(Self.released { [weakService.map { _ in "service" }, weakDispatcher.map { _ in "dispatcher" }].compactMap { $0 } } == [])
    }

    @Test("a live service (its clock thread running) is freed when dropped")
    func liveServiceIsReleased() throws {
        weak var weakService: GeofencingService?
        do {
            let service = GeofencingService(tickInterval: 0.01)
            try service.configure(GeofencingOptions(defaultDwellTime: 60))
            Thread.sleep(forTimeInterval: 0.05)
            weakService = service
        }
        #expect(Self.released { weakService == nil ? [] : ["service"] } == [])
    }
}
