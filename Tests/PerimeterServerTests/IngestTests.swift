import Foundation
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterServer
import PerimeterService
import PerimeterSQLite
import Testing

/// What the ingest path changed: the commit default and its durability, the transport's header
/// handling, and the per-request metrics.
@Suite("Ingest: commits, headers, metrics", .serialized)
struct IngestTests {
    @Test func durableResponsesAreTheDefault() {
        #expect(ServerConfiguration().commitInterval == nil)
    }

    /// Without timed group commit, the events of a request are in the store before its response is sent.
    @Test func perRequestCommitIsDurableBeforeTheResponse() throws {
        let path = SocketTests.temporaryDatabase()
        defer { SocketTests.remove(path) }
        let server = try PerimeterServer(configuration: ServerConfiguration(
            databasePath: path, port: 0, threads: 2, api: APIConfiguration(heartbeatInterval: 60), commitInterval: nil))
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        #expect(try client.request("PUT", "/v1/fences/park", body: Array(T.square().utf8)).status == 201)
        let response = try client.request("POST", "/v1/locations", body: Array(T.json(T.update("car", 0, inside: true)).utf8))
        #expect(response.status == 200)
        let store = try SocketTests.copyOfStore(path)
        defer { SocketTests.remove(store.path) }
        #expect(try store.events(after: 0, limit: 10).map(\.sequence) == [1])
        #expect(try store.load().processedUpdates == 1)
    }

    /// With timed group commit, a graceful stop commits every acknowledged update and event.
    @Test func groupCommitKeepsEveryAcknowledgedUpdateAcrossAGracefulStop() throws {
        let path = SocketTests.temporaryDatabase()
        defer { SocketTests.remove(path) }
        let server = try PerimeterServer(configuration: ServerConfiguration(
            databasePath: path, port: 0, threads: 2, api: APIConfiguration(heartbeatInterval: 60), commitInterval: 0.01))
        let client = try TestClient(port: server.port)
        #expect(try client.request("PUT", "/v1/fences/park", body: Array(T.square().utf8)).status == 201)
        var events = 0
        for step in 0..<40 {
            let response = try client.request("POST", "/v1/locations",
                                              body: Array(T.json(T.update("car-\(step % 4)", step, inside: step % 8 < 4)).utf8))
            #expect(response.status == 200)
            events += T.parse(response.body)["events"]?.arrayValue?.count ?? 0
        }
        server.stop()
        #expect(events > 0)
        let reopened = GeofencingService(store: try SQLiteGeofencingStore(path: path))
        try reopened.configure(GeofencingOptions())
        #expect(reopened.processedUpdateCount == 40)
        #expect(reopened.lastEventSequence == Int64(events))
        try reopened.close()
    }

    /// Header names reach handlers lower-cased whatever the client sent; repeated headers are joined.
    @Test func headersAreLowerCasedOnceAndJoined() throws {
        let server = try HTTPServer(configuration: .init(port: 0, threads: 1)) { request in
            let text = [request.headers["x-trace-id"], request.header("X-TRACE-ID"), request.headers["x-many"],
                        request.headers["content-type"], request.query["Q"]]
                .map { $0 ?? "nil" }.joined(separator: "|")
            return HTTPResponse(status: 200, contentType: "text/plain", bytes: Array(text.utf8))
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        try client.send("POST", "/x?Q=Kept", headers: ["X-Trace-ID": "AbC", "Content-TYPE": "application/json"], body: [1])
        #expect(try client.readResponse().text == "AbC|AbC|nil|application/json|Kept")
        // Two headers of the same name, raw (TestClient's dictionary cannot repeat one).
        let raw = try TestClient(port: server.port)
        let bytes = Array("GET /y HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Many: a\r\nx-MANY: b\r\n\r\n".utf8)
        _ = bytes.withUnsafeBytes { write(raw.fd, $0.baseAddress, $0.count) }
        #expect(try raw.readResponse().text == "nil|nil|a, b|nil|nil")
    }

    /// The latency histogram is cumulative and the status counter counts each status.
    @Test func requestMetricsAreCountedPerStatusAndCumulativePerBucket() {
        let metrics = Metrics()
        metrics.recordRequest(status: 200, seconds: 0.0001)
        metrics.recordRequest(status: 200, seconds: 0.003)
        metrics.recordRequest(status: 404, seconds: 0.0005)
        metrics.recordRequest(status: 503, seconds: 10)
        let lines = Set(metrics.render().split(separator: "\n").map(String.init))
        for expected in [
            #"perimeter_http_requests_total{status="200"} 2"#,
            #"perimeter_http_requests_total{status="404"} 1"#,
            #"perimeter_http_requests_total{status="503"} 1"#,
            #"perimeter_http_request_duration_seconds_bucket{le="0.0005"} 2"#,
            #"perimeter_http_request_duration_seconds_bucket{le="0.001"} 2"#,
            #"perimeter_http_request_duration_seconds_bucket{le="0.005"} 3"#,
            #"perimeter_http_request_duration_seconds_bucket{le="5.0"} 3"#,
            #"perimeter_http_request_duration_seconds_bucket{le="+Inf"} 4"#,
            "perimeter_http_request_duration_seconds_count 4",
        ] {
            #expect(lines.contains(expected), "missing: \(expected)")
        }
    }
}
