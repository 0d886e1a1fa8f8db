import Foundation
import PerimeterGeoJSON
import PerimeterServer
import PerimeterService
import PerimeterTestSupport
import Testing

/// Service-wide consent, deleting every fence and the options file, over a real loopback socket.
@Suite("Service administration over a socket", .serialized)
struct ServiceAdminTests {
    static let tokens = [
        AccessToken(name: "reader", scopes: [.read], secret: "readersecret"),
        AccessToken(name: "writer", scopes: [.read, .write], secret: "writersecret"),
        AccessToken(name: "ops", scopes: [.admin], secret: "adminsecret"),
    ]
    static let reader = ["Authorization": "Bearer readersecret"]
    static let writer = ["Authorization": "Bearer writersecret"]
    static let admin = ["Authorization": "Bearer adminsecret"]

    static func start(options: GeofencingOptions = GeofencingOptions()) throws -> PerimeterServer {
        try PerimeterServer(configuration: ServerConfiguration(
            databasePath: nil, address: "127.0.0.1", port: 0, threads: 2,
            api: APIConfiguration(tokens: tokens, heartbeatInterval: 0.2), options: options, drainTimeout: 5))
    }

    static func json(_ response: TestClient.Response) throws -> JSONValue { try JSONParser().parse(response.body) }

    static func fence(_ id: String, _ properties: String = "") -> [UInt8] {
        Array(#"{"type":"Feature","properties":{\#(properties)},"geometry":{"type":"Point","coordinates":[\#(id == "b" ? 1 : 0),0]}}"#.utf8)
    }

    @Test("service-wide consent: read with read scope, set with admin; without it no update is processed")
    func consent() async throws {
        try await offThePool {
            let server = try Self.start()
            defer { server.stop() }
            let client = try TestClient(port: server.port)
            var response = try client.request("GET", "/v1/consent", headers: Self.reader)
            #expect(response.status == 200)
            #expect(try Self.json(response) == ["granted": true])

            let revoke = Array(#"{"granted": false}"#.utf8)
            #expect(try client.request("PUT", "/v1/consent", headers: Self.reader, body: revoke).status == 403)
            #expect(try client.request("PUT", "/v1/consent", headers: Self.writer, body: revoke).status == 403,
                    "service-wide consent is an administrator's switch")
            response = try client.request("PUT", "/v1/consent", headers: Self.admin, body: revoke)
            #expect(response.status == 200)
            #expect(try Self.json(response) == ["granted": false])
            #expect(try Self.json(try client.request("GET", "/v1/consent", headers: Self.reader)) == ["granted": false])

            let update = Array(#"{"deviceId":"d","time":"2026-01-01T00:00:00Z","latitude":0,"longitude":0}"#.utf8)
            response = try client.request("POST", "/v1/locations", headers: Self.writer, body: update)
            #expect(response.status == 403)
            #expect(response.text.contains("consentMissing"))

            response = try client.request("PUT", "/v1/consent", headers: Self.admin, body: Array(#"{"granted": "yes"}"#.utf8))
            #expect(response.status == 422)
            #expect(try Self.json(response)["pointer"] == "/granted")
            #expect(try client.request("DELETE", "/v1/consent", headers: Self.admin).status == 405)

            #expect(try client.request("PUT", "/v1/consent", headers: Self.admin, body: Array(#"{"granted": true}"#.utf8)).status == 200)
            #expect(try client.request("POST", "/v1/locations", headers: Self.writer, body: update).status == 200)
        }
    }

    @Test("deleting every fence needs the admin scope and ?all=true; without it nothing is removed")
    func deleteAll() async throws {
        try await offThePool {
            let server = try Self.start()
            defer { server.stop() }
            let client = try TestClient(port: server.port)
            for id in ["a", "b"] {
                #expect(try client.request("PUT", "/v1/fences/\(id)", headers: Self.writer, body: Self.fence(id)).status == 201)
            }
            #expect(try client.request("DELETE", "/v1/fences?all=true", headers: Self.writer).status == 403)
            for query in ["", "?all=yes", "?all=", "?all=true&group=g"] {
                let response = try client.request("DELETE", "/v1/fences\(query)", headers: Self.admin)
                #expect(response.status == 400, "\(query)")
                #expect(response.text.contains("all"), "\(query): \(response.text)")
            }
            #expect(try server.service.features().count == 2, "refused requests remove nothing")

            let response = try client.request("DELETE", "/v1/fences?all=true", headers: Self.admin)
            #expect(response.status == 200)
            #expect(try Self.json(response) == ["removed": 2, "all": true])
            #expect(try server.service.features().isEmpty)
            #expect(try Self.json(try client.request("GET", "/v1/fences", headers: Self.reader))["features"] == [])
        }
    }

    @Test("an options file's values reach the service: default radius, feature limit, detection options")
    func optionsFile() async throws {
        let options = try OptionsFile.options(from: Array("""
            {"defaultRadius": 50, "maximumMonitoredFeatures": 1, "defaultDwellTime": null, "timeModel": "data",
             "detectionOptions": {"perimeter:hysteresis": 15}}
            """.utf8))
        try await offThePool {
            let server = try Self.start(options: options)
            defer { server.stop() }
            let client = try TestClient(port: server.port)
            #expect(try client.request("PUT", "/v1/fences/a", headers: Self.writer, body: Self.fence("a")).status == 201)
            #expect(try server.service.fence(id: "a")?.region.shape == .circle(center: .init(latitude: 0, longitude: 0), radius: 50))
            #expect(try client.request("PUT", "/v1/fences/b", headers: Self.writer, body: Self.fence("b")).status == 409)
            #expect(server.service.options?.detectionOptions.hysteresis == 15)
            #expect(server.service.options?.timeModel == .data)
        }
    }
}
