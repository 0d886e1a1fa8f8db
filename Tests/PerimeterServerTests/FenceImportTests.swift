import Foundation
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterServer
import PerimeterTestSupport
import Testing

/// `POST /v1/fences` with large bodies: the default limit takes a file of 10,000 detailed fences, and a
/// body over the limit is answered with a 413 that says which flag takes it and to what.
@Suite("Fence import: body limits", .serialized)
struct FenceImportTests {
    /// A FeatureCollection of one square fence whose properties carry `padding` bytes of text.
    static func collection(padding: Int) -> [UInt8] {
        guard case .object(var feature) = T.parse(Array(T.square(id: "big").utf8)) else { return [] }
        feature["properties"] = ["note": .string(String(repeating: "x", count: padding))]
        return Array(T.json(["type": "FeatureCollection", "features": .array([.object(feature)])]).utf8)
    }

    @Test func theDefaultLimitTakesTheSharedWorkloadsFenceFile() {
        // gen_workload.py's fences.geojson: 10,000 fences, 1.5 million vertices, 35,971,644 bytes.
        #expect(APIConfiguration().maximumBodySize >= 36_000_000)
        #expect(APIConfiguration().maximumBodySize == 64 << 20)
    }

    @Test func aBodyOverTheLimitSaysWhichFlagTakesIt() throws {
        let api = try T.api(APIConfiguration(maximumBodySize: 4_000))
        let body = Self.collection(padding: 5_000)
        let response = T.respond(api, HTTPRequest(method: "POST", path: "/v1/fences", headers: ["Content-Type": "application/json"],
                                                  body: body, remoteAddress: "127.0.0.1"))
        #expect(response.status == 413)
        let problem = T.parse(response)
        #expect(problem["type"]?.stringValue == "urn:perimeter:problem:body-too-large")
        let detail = problem["detail"]?.stringValue ?? ""
        #expect(detail.contains("the body of \(body.count) bytes exceeds the limit of 4000 bytes"), "\(detail)")
        #expect(detail.contains("--max-body \(body.count) or more"), "\(detail)")
        #expect(problem["bodySize"]?.int64Value == Int64(body.count))
        #expect(problem["maximumBodySize"]?.int64Value == 4_000)

        // A chunked body that grew past the limit was discarded unmeasured: the flag is still named.
        var discarded = HTTPRequest(method: "POST", path: "/v1/fences", headers: ["Content-Type": "application/json"],
                                    body: [], remoteAddress: "127.0.0.1")
        discarded.isBodyTooLarge = true
        let unmeasured = T.parse(T.respond(api, discarded))
        #expect(unmeasured["detail"]?.stringValue?.contains("--max-body") == true)
        #expect(unmeasured["bodySize"] == nil)
    }

    @Test func theTransportsRefusalOfADeclaredLengthSaysWhichFlagTakesIt() throws {
        let server = try PerimeterServer(configuration: ServerConfiguration(
            databasePath: nil, address: "127.0.0.1", port: 0, threads: 1, api: APIConfiguration(maximumBodySize: 1_000),
            drainTimeout: 2))
        defer { server.stop() }
        let body = Self.collection(padding: 2_000)
        let response = try TestClient(port: server.port).request("POST", "/v1/fences", body: body)
        #expect(response.status == 413)
        #expect(response.text.contains("the body of \(body.count) bytes exceeds 1000 bytes"), "\(response.text)")
        #expect(response.text.contains("--max-body"), "\(response.text)")
    }

    @Test func theDefaultLimitTakesABodyOverTheOldSixteenMebibytes() throws {
        let server = try PerimeterServer(configuration: ServerConfiguration(
            databasePath: nil, address: "127.0.0.1", port: 0, threads: 1, drainTimeout: 2))
        defer { server.stop() }
        let body = Self.collection(padding: 17 << 20)
        #expect(body.count > 16 << 20)
        let response = try TestClient(port: server.port, timeout: 120).request("POST", "/v1/fences", body: body)
        #expect(response.status == 200, "\(response.text.prefix(300))")
        #expect(response.text == #"{"imported":1}"#)
    }
}
