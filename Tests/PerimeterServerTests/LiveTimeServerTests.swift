import Foundation
import PerimeterGeoJSON
import PerimeterServer
import PerimeterService
import PerimeterTestSupport
import Testing

/// The live time model end to end (docs/semantics.md, "Time in the live service"): a real server on a
/// loopback port, on the system clock and its own ticker.
@Suite("Live time over a real socket", .serialized)
struct LiveTimeServerTests {
    static func start(dwell: Double, lateness: Double) throws -> PerimeterServer {
        try PerimeterServer(configuration: ServerConfiguration(
            address: "127.0.0.1", port: 0, threads: 2,
            options: GeofencingOptions(defaultDwellTime: dwell, allowedLateness: lateness, maximumFutureSkew: 60)))
    }

    static func update(_ device: String, _ time: Date, inside: Bool = true) -> [UInt8] {
        Array(T.json(["deviceId": .string(device), "latitude": inside ? 44.6 : 45.5, "longitude": -110.5,
                      "time": .string(RFC3339.string(from: time))]).utf8)
    }

    static func events(_ client: TestClient) throws -> [JSONValue] {
        T.parse(try client.request("GET", "/v1/events?after=0&limit=1000").body)["events"]?.arrayValue ?? []
    }

    @Test("a device that stops reporting inside a fence gets its dwell within about a second of due + lateness")
    func silentDeviceDwells() throws {
        let server = try Self.start(dwell: 2, lateness: 1)
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        #expect(try client.request("PUT", "/v1/fences/yard", body: Array(T.square(id: "yard").utf8)).status == 201)
        let entry = Date()
        let posted = try client.request("POST", "/v1/locations", body: Self.update("van", entry))
        #expect(posted.status == 200, "\(posted.text)")
        // Nothing else happens; the dwell is due at entry + 2 s and the clock fires it at entry + 3 s.
        var dwellSeenAt: Date?
        let seen = waitUntil(seconds: 10) {
            guard let events = try? Self.events(client) else { return false }
            if events.contains(where: { $0["type"] == "dwell" }) { dwellSeenAt = Date(); return true }
            return false
        }
        #expect(seen, "no dwell without a new fix")
        let delay = try #require(dwellSeenAt).timeIntervalSince(entry)
        #expect(delay >= 3 - 0.01, "fired \(delay) s after entry: before due time + lateness")
        #expect(delay < 3 + 1.5, "fired \(delay) s after entry: the clock ticks every 0.25 s")
        let dwell = try #require(Self.events(client).first { $0["type"] == "dwell" })
        let time = try #require(dwell["time"]?.stringValue.flatMap(RFC3339.date(from:)))
        #expect(abs(time.timeIntervalSince(entry.addingTimeInterval(2))) < 0.002, "dated when it fell due")
    }

    @Test("a future-dated update is refused with the service's time, counted, and changes nothing for any device")
    func futureUpdateIsRefused() throws {
        let server = try Self.start(dwell: 60, lateness: 5)
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        #expect(try client.request("PUT", "/v1/fences/yard", body: Array(T.square(id: "yard").utf8)).status == 201)
        let now = Date()
        #expect(try client.request("POST", "/v1/locations", body: Self.update("a", now)).status == 200)
        let before = try Self.events(client)
        let refused = try client.request("POST", "/v1/locations",
                                          body: Self.update("phone", RFC3339.date(from: "2100-01-01T00:00:00Z")!))
        #expect(refused.status == 422, "\(refused.text)")
        let problem = T.parse(refused.body)
        #expect(problem["code"] == "futureUpdate", "\(refused.text)")
        #expect(problem["detail"]?.stringValue?.contains("ahead of the service's clock") == true, "\(refused.text)")
        #expect(try client.request("GET", "/v1/devices/phone").status == 404, "the refused update created nothing")
        #expect(try Self.events(client) == before, "no dwell fired for anyone")
        let metrics = try client.request("GET", "/metrics").text
        #expect(metrics.contains("perimeter_updates_rejected_total{reason=\"futureUpdate\"} 1"), "\(metrics)")
        // The same device with a correct clock is accepted.
        #expect(try client.request("POST", "/v1/locations", body: Self.update("phone", Date())).status == 200)
    }

    @Test("DELETE /v1/devices/{id}: exits with reason reset on request, then the device is unknown; admin only")
    func forgetDevice() throws {
        let server = try PerimeterServer(configuration: ServerConfiguration(
            address: "127.0.0.1", port: 0, threads: 2,
            api: APIConfiguration(tokens: [AccessToken(name: "admin", scopes: [.admin], secret: "a"),
                                           AccessToken(name: "app", scopes: [.read, .write], secret: "w")])))
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        let admin = ["Authorization": "Bearer a"], app = ["Authorization": "Bearer w"]
        #expect(try client.request("PUT", "/v1/fences/yard", headers: admin, body: Array(T.square(id: "yard").utf8)).status == 201)
        #expect(try client.request("POST", "/v1/locations", headers: app, body: Self.update("van", Date())).status == 200)
        #expect(try client.request("DELETE", "/v1/devices/van", headers: app).status == 403)
        #expect(try client.request("DELETE", "/v1/devices/van?exits=maybe", headers: admin).status == 400)
        let forgotten = try client.request("DELETE", "/v1/devices/van?exits=true", headers: admin)
        #expect(forgotten.status == 200, "\(forgotten.text)")
        let events = T.parse(forgotten.body)["events"]?.arrayValue ?? []
        #expect(events.count == 1)
        #expect(events.first?["type"] == "exit" && events.first?["reason"] == "reset", "\(forgotten.text)")
        #expect(try client.request("GET", "/v1/devices/van", headers: app).status == 404)
        #expect(try client.request("DELETE", "/v1/devices/van", headers: admin).status == 404)
    }
}
