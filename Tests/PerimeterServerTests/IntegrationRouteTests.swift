import Foundation
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterServer
import PerimeterService
import PerimeterWebhooks
import Testing
import PerimeterTestSupport

/// The map page, simulations and webhooks, in process (``T/call``: the server's handler path).
@Suite("Page, simulation and webhook routes")
struct IntegrationRouteTests {
    static let adminSecret = "admin-secret", writeSecret = "write-secret"

    /// An API whose dispatcher keeps webhooks in memory and is not started (nothing is delivered).
    static func api(tokens: [AccessToken] = [], allowPrivate: Bool = true) throws -> PerimeterAPI {
        let service = GeofencingService()
        try service.configure(GeofencingOptions())
        let dispatcher = try WebhookDispatcher(service: service, store: InMemoryWebhookStore(),
                                               configuration: WebhookDispatcher.Configuration(allowPrivateTargets: allowPrivate))
        return PerimeterAPI(service: service, configuration: APIConfiguration(tokens: tokens), webhooks: dispatcher)
    }

    static func problem(_ response: HTTPResponse) -> (slug: String?, pointer: String?) {
        let document = T.parse(response)
        return (document["type"]?.stringValue?.replacingOccurrences(of: "urn:perimeter:problem:", with: ""),
                document["pointer"]?.stringValue)
    }

    // MARK: Map page

    @Test(arguments: ["/", "/index.html", "/map.js", "/map.css"])
    func pageIsServedWithoutAToken(path: String) throws {
        let api = try Self.api(tokens: [AccessToken(name: "admin", scopes: [.admin], secret: Self.adminSecret)])
        let response = T.call(api, "GET", path)
        #expect(response.status == 200)
        #expect(response.bodyBytes == MapPage.response(for: path)?.bodyBytes)
        #expect(T.call(api, "HEAD", path).status == 200)
        let post = T.call(api, "POST", path)
        #expect(post.status == 405)
        #expect(post.header("allow") == "GET")
    }

    // MARK: Simulations

    @Test func simulationsStartListShowAndStop() throws {
        let api = try Self.api()
        let body = T.json(["deviceId": "van-1", "speed": 10, "timeScale": 1,
                           "path": ["type": "LineString", "coordinates": [[10, 50], [10.01, 50]]]])
        let started = T.call(api, "POST", "/v1/simulations", body: body)
        #expect(started.status == 201, "\(String(decoding: started.bodyBytes, as: UTF8.self))")
        let id = try #require(T.parse(started)["id"]?.stringValue)
        #expect(T.parse(started)["deviceId"] == "van-1")
        let list = T.parse(T.call(api, "GET", "/v1/simulations"))
        #expect(list["simulations"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [id])
        let one = T.call(api, "GET", "/v1/simulations/\(id)")
        #expect(one.status == 200)
        #expect(T.parse(one)["id"]?.stringValue == id)
        let stopped = T.call(api, "DELETE", "/v1/simulations/\(id)")
        #expect(stopped.status == 200)
        #expect(T.parse(stopped)["status"] == "stopped")
        #expect(api.simulations.runningCount == 0)
        #expect(T.call(api, "GET", "/v1/simulations/sim-999").status == 404)
        #expect(T.call(api, "DELETE", "/v1/simulations/sim-999").status == 404)
        #expect(T.call(api, "PUT", "/v1/simulations/\(id)").status == 405)
    }

    @Test func simulationBodiesAreValidated() throws {
        let api = try Self.api()
        #expect(T.call(api, "POST", "/v1/simulations", body: "{").status == 400)
        let missing = T.call(api, "POST", "/v1/simulations", body: #"{"deviceId":"v","path":{"type":"LineString","coordinates":[[0,0],[0,1]]}}"#)
        #expect(missing.status == 422)
        #expect(Self.problem(missing).pointer == "/speed")
        #expect(api.simulations.runningCount == 0)
    }

    @Test func simulationsNeedTheWriteScopeToStart() throws {
        let api = try Self.api(tokens: [AccessToken(name: "reader", scopes: [.read], secret: "reader-secret")])
        let auth = ["Authorization": "Bearer reader-secret"]
        #expect(T.call(api, "GET", "/v1/simulations", headers: auth).status == 200)
        #expect(T.call(api, "POST", "/v1/simulations", headers: auth, body: "{}").status == 403)
        #expect(T.call(api, "GET", "/v1/simulations").status == 401)
    }

    // MARK: Webhooks

    @Test func webhookLifecycle() throws {
        let api = try Self.api()
        let secret = "0123456789abcdef0123"
        let created = T.call(api, "POST", "/v1/webhooks", body: T.json([
            "url": "http://127.0.0.1:9/hook", "id": "wh-a", "secret": .string(secret),
            "filter": ["devices": ["truck-7"], "types": ["entry"]]]))
        #expect(created.status == 201, "\(String(decoding: created.bodyBytes, as: UTF8.self))")
        #expect(created.header("location") == "/v1/webhooks/wh-a")
        #expect(T.parse(created)["secret"]?.stringValue == secret)

        let generated = T.parse(T.call(api, "POST", "/v1/webhooks", body: #"{"url":"http://127.0.0.1:9/other"}"#))
        let generatedID = try #require(generated["id"]?.stringValue)
        #expect(generatedID.hasPrefix("wh_"))
        #expect(generated["secret"]?.stringValue?.count == 64)

        let list = T.call(api, "GET", "/v1/webhooks")
        #expect(list.status == 200)
        let listed = T.parse(list)["webhooks"]?.arrayValue ?? []
        #expect(listed.compactMap { $0["id"]?.stringValue } == ["wh-a", generatedID])
        #expect(!String(decoding: list.bodyBytes, as: UTF8.self).contains(secret), "the secret is shown only once")

        let one = T.parse(T.call(api, "GET", "/v1/webhooks/wh-a"))
        #expect(one["url"] == "http://127.0.0.1:9/hook")
        #expect(one["filter"]?["types"] == ["entry"])
        #expect(one["counters"]?["delivered"] == 0)
        #expect(one["secret"] == nil)

        let letters = T.call(api, "GET", "/v1/webhooks/wh-a/dead-letters", query: ["after": "0", "limit": "10"])
        #expect(letters.status == 200)
        #expect(T.parse(letters)["deadLetters"] == [])
        #expect(T.parse(letters)["next"] == nil)
        let redrive = T.call(api, "POST", "/v1/webhooks/wh-a/dead-letters/redrive")
        #expect(redrive.status == 202)
        #expect(T.parse(redrive)["queued"] == 0)
        #expect(T.call(api, "POST", "/v1/webhooks/wh-a/dead-letters/redrive", body: #"{"sequences":[1,2]}"#).status == 202)

        let deleted = T.call(api, "DELETE", "/v1/webhooks/wh-a")
        #expect(deleted.status == 204)
        #expect(deleted.bodyBytes.isEmpty)
        #expect(T.call(api, "GET", "/v1/webhooks/wh-a").status == 404)
        #expect(T.call(api, "DELETE", "/v1/webhooks/wh-a").status == 404)
        #expect(T.call(api, "GET", "/v1/webhooks/wh-a/dead-letters").status == 404)
        #expect(T.call(api, "POST", "/v1/webhooks/wh-a/dead-letters/redrive").status == 404)
        #expect(T.parse(T.call(api, "GET", "/v1/webhooks"))["webhooks"]?.arrayValue?.count == 1)
    }

    struct BadWebhook: Sendable, CustomTestStringConvertible {
        var name: String, method = "POST", path = "/v1/webhooks", query: [String: String] = [:], body: String
        var status: Int, slug: String, pointer: String?
        var testDescription: String { name }
    }

    static let badWebhooks: [BadWebhook] = [
        BadWebhook(name: "not JSON", body: "{", status: 400, slug: "invalid-json", pointer: nil),
        BadWebhook(name: "empty body", body: "", status: 400, slug: "empty-body", pointer: nil),
        BadWebhook(name: "not an object", body: "[]", status: 422, slug: "invalid-webhook", pointer: ""),
        BadWebhook(name: "url missing", body: "{}", status: 422, slug: "invalid-webhook", pointer: "/url"),
        BadWebhook(name: "url not a string", body: #"{"url":5}"#, status: 422, slug: "invalid-webhook", pointer: "/url"),
        BadWebhook(name: "ftp url", body: #"{"url":"ftp://127.0.0.1/x"}"#, status: 422, slug: "invalid-webhook", pointer: "/url"),
        BadWebhook(name: "unknown member", body: #"{"url":"http://127.0.0.1/x","color":"red"}"#, status: 422,
                   slug: "invalid-webhook", pointer: "/color"),
        BadWebhook(name: "bad type", body: #"{"url":"http://127.0.0.1/x","filter":{"types":["entry","bogus"]}}"#,
                   status: 422, slug: "invalid-webhook", pointer: "/filter/types"),
        BadWebhook(name: "short secret", body: #"{"url":"http://127.0.0.1/x","secret":"short"}"#, status: 422,
                   slug: "invalid-webhook", pointer: "/secret"),
        BadWebhook(name: "bad id", body: #"{"url":"http://127.0.0.1/x","id":"a b"}"#, status: 422,
                   slug: "invalid-webhook", pointer: "/id"),
        BadWebhook(name: "duplicate id", body: #"{"url":"http://127.0.0.1/x","id":"taken"}"#, status: 409,
                   slug: "webhook-conflict", pointer: "/id"),
        BadWebhook(name: "limit 0", method: "GET", path: "/v1/webhooks/taken/dead-letters", query: ["limit": "0"], body: "",
                   status: 400, slug: "invalid-parameter", pointer: nil),
        BadWebhook(name: "negative after", method: "GET", path: "/v1/webhooks/taken/dead-letters", query: ["after": "-1"],
                   body: "", status: 400, slug: "invalid-parameter", pointer: nil),
        BadWebhook(name: "bad sequence", path: "/v1/webhooks/taken/dead-letters/redrive", body: #"{"sequences":[3,0]}"#,
                   status: 422, slug: "invalid-webhook", pointer: "/sequences/1"),
        BadWebhook(name: "redrive not JSON", path: "/v1/webhooks/taken/dead-letters/redrive", body: "nope",
                   status: 400, slug: "invalid-json", pointer: nil),
        BadWebhook(name: "put", method: "PUT", path: "/v1/webhooks/taken", body: "", status: 405,
                   slug: "method-not-allowed", pointer: nil),
    ]

    @Test(arguments: badWebhooks)
    func badWebhookRequestsAreProblems(_ bad: BadWebhook) throws {
        let api = try Self.api()
        #expect(T.call(api, "POST", "/v1/webhooks", body: #"{"url":"http://127.0.0.1:9/x","id":"taken"}"#).status == 201)
        let response = T.call(api, bad.method, bad.path, query: bad.query, body: bad.body)
        #expect(response.status == bad.status, "\(String(decoding: response.bodyBytes, as: UTF8.self))")
        #expect(response.header("content-type") == "application/problem+json")
        let problem = Self.problem(response)
        #expect(problem.slug == bad.slug)
        #expect(problem.pointer == bad.pointer)
        #expect(T.parse(T.call(api, "GET", "/v1/webhooks"))["webhooks"]?.arrayValue?.count == 1, "nothing else registered")
    }

    @Test(arguments: ["http://127.0.0.1:8080/x", "http://10.1.2.3/x", "http://169.254.169.254/latest", "http://[::1]/x"])
    func privateTargetsAreRefusedByDefault(url: String) throws {
        let api = try Self.api(allowPrivate: false)
        let response = T.call(api, "POST", "/v1/webhooks", body: T.json(["url": .string(url)]))
        #expect(response.status == 422)
        #expect(Self.problem(response).slug == "webhook-target-refused")
        #expect(T.parse(T.call(api, "GET", "/v1/webhooks"))["webhooks"] == [])
    }

    @Test func webhooksNeedTheAdminScope() throws {
        let api = try Self.api(tokens: [AccessToken(name: "admin", scopes: [.admin], secret: Self.adminSecret),
                                        AccessToken(name: "writer", scopes: [.read, .write], secret: Self.writeSecret)])
        let writer = ["Authorization": "Bearer \(Self.writeSecret)"], admin = ["Authorization": "Bearer \(Self.adminSecret)"]
        for (method, path) in [("GET", "/v1/webhooks"), ("POST", "/v1/webhooks"), ("GET", "/v1/webhooks/x"),
                               ("DELETE", "/v1/webhooks/x"), ("GET", "/v1/webhooks/x/dead-letters"),
                               ("POST", "/v1/webhooks/x/dead-letters/redrive")] {
            #expect(T.call(api, method, path, headers: writer).status == 403, "\(method) \(path)")
            #expect(T.call(api, method, path).status == 401, "\(method) \(path)")
        }
        #expect(T.call(api, "GET", "/v1/webhooks", headers: admin).status == 200)
        #expect(T.call(api, "GET", "/v1/webhooks/x", headers: admin).status == 404)
    }

    @Test func withoutADispatcherWebhooksAreUnavailable() throws {
        let api = try T.api()
        #expect(api.webhooks == nil)
        #expect(T.call(api, "GET", "/v1/webhooks").status == 503)
        #expect(T.call(api, "POST", "/v1/webhooks", body: #"{"url":"http://127.0.0.1/x"}"#).status == 503)
    }

    @Test func theDocumentListsTheNewPaths() throws {
        let api = try Self.api()
        let paths = T.parse(T.call(api, "GET", "/openapi.json"))["paths"]
        for path in ["/v1/simulations", "/v1/simulations/{id}", "/v1/webhooks", "/v1/webhooks/{id}",
                     "/v1/webhooks/{id}/dead-letters", "/v1/webhooks/{id}/dead-letters/redrive", "/v1/fences"] {
            #expect(paths?[path] != nil, "\(path)")
        }
        #expect(paths?["/v1/webhooks/{id}"]?["delete"]?["responses"]?["204"] != nil)
    }
}

extension PerimeterServer {
    /// ``stop()`` run off the concurrency pool (it waits for the server's tasks, which need the pool).
    func stopOffPool() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.stop()
                done.resume()
            }
        }
    }
}

/// Webhooks and the page through the real ``PerimeterServer`` over loopback.
@Suite("Webhooks through the server", .serialized)
struct ServerWebhookTests {
    /// Runs `body` on a started server, then stops it (also when `body` throws).
    static func withServer(_ configuration: ServerConfiguration,
                           _ body: (PerimeterServer) async throws -> Void) async throws {
        let server = try PerimeterServer(configuration: configuration)
        do {
            try await body(server)
        } catch {
            await server.stopOffPool()
            throw error
        }
        await server.stopOffPool()
    }

    @Test func anEventIsDeliveredToARegisteredWebhook() async throws {
        let receiver = try LoopbackReceiver()
        defer { receiver.stop() }  // closes the listening socket; returns at once
        try await Self.withServer(ServerConfiguration(port: 0, threads: 2, drainTimeout: 5,
                                                      allowPrivateWebhookTargets: true)) { server in
            let client = try TestClient(port: server.port)
            let json = ["Content-Type": "application/json"]
            #expect(try client.request("GET", "/").status == 200)
            #expect(try client.request("PUT", "/v1/fences/box", headers: json, body: Array(T.square(id: "box", name: "Box").utf8)).status == 201)
            let secret = "receiver-secret-0123456789"
            let registered = try client.request("POST", "/v1/webhooks", headers: json, body: Array(T.json([
                "url": .string(receiver.url), "id": "wh-1", "secret": .string(secret)]).utf8))
            #expect(registered.status == 201, "\(registered.text)")

            let batch: JSONValue = [T.update("truck-7", 0, inside: false), T.update("truck-7", 10, inside: true)]
            let posted = try client.request("POST", "/v1/locations", headers: json, body: Array(T.json(batch).utf8))
            #expect(posted.status == 200, "\(posted.text)")

            let requests = await receiver.wait(for: 1)
            let request = try #require(requests.first, "no delivery arrived")
            #expect(request.requestLine == "POST /hook HTTP/1.1")
            #expect(request.headers["perimeter-webhook-id"] == "wh-1")
            #expect(request.headers["content-type"] == "application/cloudevents+json")
            let signature = try #require(request.headers["perimeter-signature"])
            #expect(WebhookSignature.verify(headerValue: signature, body: request.body, secret: secret, now: request.receivedAt))
            let event = try JSONParser().parse(request.body)
            #expect(event["type"] == "perimeter.geofence.entry")
            #expect(event["data"]?["fenceId"] == "box")
            #expect(event["data"]?["deviceId"] == "truck-7")
            #expect(event["data"]?["fenceName"] == "Box")

            // The counters and metrics catch up once the acknowledgement is recorded.
            var delivered: JSONValue?
            for _ in 0..<500 where delivered != 1 {
                delivered = T.parse(try client.request("GET", "/v1/webhooks/wh-1").body)["counters"]?["delivered"]
                if delivered != 1 { try await Task.sleep(nanoseconds: 20_000_000) }
        }
        #expect(delivered == 1)
        let metrics = try client.request("GET", "/metrics").text
        #expect(metrics.contains("perimeter_webhook_deliveries_total{outcome=\"delivered\"} 1"))
        #expect(metrics.contains("perimeter_webhook_events_total{webhook=\"wh-1\",outcome=\"delivered\"} 1"))
        #expect(metrics.contains("perimeter_webhook_pending 0"))
        }
    }

    @Test func privateTargetsAreRefusedUnlessAllowed() async throws {
        try await Self.withServer(ServerConfiguration(port: 0, threads: 2)) { server in
            #expect(!server.configuration.allowPrivateWebhookTargets)
            let response = T.call(server.api, "POST", "/v1/webhooks", body: #"{"url":"http://127.0.0.1:9/hook"}"#)
            #expect(response.status == 422)
        }
    }

    @Test func webhooksLiveBesideTheDatabaseAndSurviveARestart() async throws {
        let path = NSTemporaryDirectory() + "perimeter-wiring-\(UUID().uuidString).sqlite"
        defer {
            for suffix in ["", "-wal", "-shm", ".webhooks", ".webhooks-wal", ".webhooks-shm"] {
                try? FileManager.default.removeItem(atPath: path + suffix)
            }
        }
        let configuration = ServerConfiguration(databasePath: path, port: 0, threads: 2, allowPrivateWebhookTargets: true)
        try await Self.withServer(configuration) { server in
            #expect(T.call(server.api, "POST", "/v1/webhooks", body: #"{"url":"http://127.0.0.1:9/hook","id":"kept"}"#).status == 201)
        }
        #expect(FileManager.default.fileExists(atPath: path + ".webhooks"))
        try await Self.withServer(configuration) { reopened in
            let status = T.call(reopened.api, "GET", "/v1/webhooks/kept")
            #expect(status.status == 200)
            #expect(T.parse(status)["url"] == "http://127.0.0.1:9/hook")
        }
    }

    @Test func stoppingTheServerStopsSimulations() async throws {
        let server = try PerimeterServer(configuration: ServerConfiguration(port: 0, threads: 2))
        let body = T.json(["deviceId": "van-1", "speed": 1, "path": ["type": "LineString", "coordinates": [[10, 50], [10.1, 50]]]])
        #expect(T.call(server.api, "POST", "/v1/simulations", body: body).status == 201)
        #expect(server.api.simulations.runningCount == 1)
        await server.stopOffPool()
        #expect(server.api.simulations.runningCount == 0)
        #expect(T.call(server.api, "POST", "/v1/simulations", body: body).status == 503)
    }
}
