import Foundation
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterServer
import PerimeterService
import Testing

/// One bad request and what the API must answer.
struct BadCase: CustomTestStringConvertible, Sendable {
    var name: String
    var method: String
    var path: String
    var query: [String: String] = [:]
    var headers: [String: String] = ["Authorization": "Bearer writersecret"]
    var body: String = ""
    var status: Int
    var slug: String
    var pointer: String?
    var testDescription: String { name }
}

@Suite("Bad requests: status and problem document")
struct BadRequestTests {
    static let reader = "Bearer readersecret"

    static let cases: [BadCase] = [
        BadCase(name: "broken JSON", method: "PUT", path: "/v1/fences/a", body: #"{"type": "Feature", "#,
                status: 400, slug: "invalid-json"),
        BadCase(name: "empty body", method: "POST", path: "/v1/locations", status: 400, slug: "empty-body"),
        BadCase(name: "not a feature", method: "PUT", path: "/v1/fences/a", body: #"{"type": "Point", "coordinates": [0, 0]}"#,
                status: 422, slug: "wrong-geojson-type", pointer: "/type"),
        BadCase(name: "bad fence coordinate", method: "PUT", path: "/v1/fences/a",
                body: #"{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,"x"],[0,0]]]}}"#,
                status: 422, slug: "invalid-geojson", pointer: "/geometry/coordinates/0/2/1"),
        BadCase(name: "id mismatch", method: "PUT", path: "/v1/fences/a", body: T.square(id: "b"),
                status: 422, slug: "id-mismatch", pointer: "/id"),
        BadCase(name: "collection without ids", method: "POST", path: "/v1/fences",
                body: #"{"type":"FeatureCollection","features":["# + T.square() + "]}",
                status: 422, slug: "missing-id", pointer: "/features/0/id"),
        BadCase(name: "latitude out of range", method: "POST", path: "/v1/locations",
                body: #"{"deviceId":"d","latitude":91,"longitude":0,"time":"2025-01-01T00:00:00Z"}"#,
                status: 422, slug: "location-rejected", pointer: "/latitude"),
        BadCase(name: "latitude of the wrong type", method: "POST", path: "/v1/locations",
                body: #"{"deviceId":"d","latitude":"north","longitude":0,"time":"2025-01-01T00:00:00Z"}"#,
                status: 422, slug: "location-rejected", pointer: "/latitude"),
        BadCase(name: "bad time", method: "POST", path: "/v1/locations",
                body: #"{"deviceId":"d","latitude":1,"longitude":0,"time":"yesterday"}"#,
                status: 422, slug: "location-rejected", pointer: "/time"),
        BadCase(name: "missing device", method: "POST", path: "/v1/locations",
                body: #"{"latitude":1,"longitude":0,"time":0}"#, status: 422, slug: "location-rejected", pointer: "/deviceId"),
        BadCase(name: "huge body", method: "POST", path: "/v1/locations", body: String(repeating: " ", count: 5_000),
                status: 413, slug: "body-too-large"),
        BadCase(name: "batch too large", method: "POST", path: "/v1/locations",
                body: "[" + Array(repeating: "{}", count: 11).joined(separator: ",") + "]", status: 413, slug: "batch-too-large"),
        BadCase(name: "unknown fence", method: "GET", path: "/v1/fences/nope", status: 404, slug: "feature-not-found"),
        BadCase(name: "unknown fence delete", method: "DELETE", path: "/v1/fences/nope", status: 404, slug: "feature-not-found"),
        BadCase(name: "body of a type not accepted", method: "PUT", path: "/v1/fences/a",
                headers: ["Authorization": "Bearer writersecret", "Content-Type": "text/plain"], body: T.square(),
                status: 415, slug: "unsupported-media-type"),
        BadCase(name: "form-encoded locations", method: "POST", path: "/v1/locations",
                headers: ["Authorization": "Bearer writersecret", "Content-Type": "application/x-www-form-urlencoded"],
                body: #"{"deviceId":"d","latitude":1,"longitude":0,"time":0}"#, status: 415, slug: "unsupported-media-type"),
        BadCase(name: "control character in a path id", method: "GET", path: "/v1/devices/a%0Ab", status: 400, slug: "invalid-id"),
        BadCase(name: "control character in a body id", method: "POST", path: "/v1/locations",
                body: #"{"deviceId":"a\u0007","latitude":1,"longitude":0,"time":0}"#, status: 422, slug: "location-rejected",
                pointer: "/deviceId"),
        BadCase(name: "unknown endpoint", method: "GET", path: "/v2/things", status: 404, slug: "not-found"),
        BadCase(name: "wrong method", method: "PATCH", path: "/v1/fences/a", status: 405, slug: "method-not-allowed"),
        BadCase(name: "bad limit", method: "GET", path: "/v1/events", query: ["limit": "lots"], status: 400, slug: "invalid-parameter"),
        BadCase(name: "bad properties flag", method: "GET", path: "/v1/events", query: ["properties": "maybe"], status: 400,
                slug: "invalid-parameter"),
        BadCase(name: "bad properties flag on the stream", method: "GET", path: "/v1/events/stream", query: ["properties": "no"],
                status: 400, slug: "invalid-parameter"),
        BadCase(name: "bad properties flag on locations", method: "POST", path: "/v1/locations", query: ["properties": "2"],
                body: #"{"deviceId":"d","latitude":1,"longitude":0,"time":0}"#, status: 400, slug: "invalid-parameter"),
        BadCase(name: "bad Last-Event-ID", method: "GET", path: "/v1/events/stream",
                headers: ["Authorization": "Bearer writersecret", "Last-Event-ID": "-3"], status: 400, slug: "invalid-parameter"),
        BadCase(name: "bad stream type filter", method: "GET", path: "/v1/events/stream", query: ["type": "teleport"],
                status: 400, slug: "invalid-parameter"),
        BadCase(name: "consent of the wrong type", method: "PUT", path: "/v1/devices/d/consent", body: #"{"granted":"yes"}"#,
                status: 422, slug: "invalid-field", pointer: "/granted"),
        BadCase(name: "missing token", method: "GET", path: "/v1/events", headers: [:], status: 401, slug: "unauthorized"),
        BadCase(name: "wrong token", method: "GET", path: "/v1/events", headers: ["Authorization": "Bearer nottheone"],
                status: 401, slug: "unauthorized"),
        BadCase(name: "not a bearer token", method: "GET", path: "/v1/events", headers: ["Authorization": "Basic eDp5"],
                status: 401, slug: "unauthorized"),
        BadCase(name: "wrong scope", method: "PUT", path: "/v1/fences/a", headers: ["Authorization": reader],
                body: T.square(), status: 403, slug: "forbidden"),
        BadCase(name: "group delete needs admin", method: "DELETE", path: "/v1/fences", query: ["group": "g"],
                status: 403, slug: "forbidden"),
    ]

    static func api() throws -> PerimeterAPI {
        try T.api(APIConfiguration(
            tokens: [AccessToken(name: "writer", scopes: [.read, .write], secret: "writersecret"),
                     AccessToken(name: "reader", scopes: [.read], secret: "readersecret")],
            maximumBodySize: 4_000, maximumBatchSize: 10))
    }

    @Test(arguments: cases) func answersWithAProblem(_ bad: BadCase) throws {
        let api = try Self.api()
        var headers = bad.headers
        if !bad.body.isEmpty, !headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
            headers["Content-Type"] = "application/json"
        }
        var request = HTTPRequest(method: bad.method, path: bad.path, query: bad.query, headers: headers,
                                  body: Array(bad.body.utf8), remoteAddress: "127.0.0.1")
        if request.body.count > 4_000 {
            request.body = []
            request.isBodyTooLarge = true
        }
        let response = T.respond(api, request)
        #expect(response.status == bad.status)
        #expect(response.header("content-type") == "application/problem+json")
        let document = T.parse(response)
        #expect(document["type"]?.stringValue == "urn:perimeter:problem:" + bad.slug)
        #expect(document["status"]?.int64Value == Int64(bad.status))
        #expect(document["title"]?.stringValue?.isEmpty == false)
        #expect((document["detail"]?.stringValue?.count ?? 0) > 10)
        #expect(document["instance"]?.stringValue == bad.path)
        if let pointer = bad.pointer {
            #expect(document["pointer"]?.stringValue == pointer)
        }
        if bad.status == 401 { #expect(response.header("WWW-Authenticate")?.hasPrefix("Bearer") == true) }
        if bad.status == 405 { #expect(response.header("Allow") == "GET, PUT, DELETE") }
    }

    @Test func rateLimitAnswers429WithRetryAfter() throws {
        let api = try T.api(APIConfiguration(tokens: [AccessToken(name: "r", scopes: [.read], secret: "readersecret")],
                                             rateLimit: 0.01, rateBurst: 3))
        let headers = ["Authorization": Self.reader]
        for _ in 0..<3 { #expect(T.call(api, "GET", "/v1/events", headers: headers).status == 200) }
        let limited = T.call(api, "GET", "/v1/events", headers: headers)
        #expect(limited.status == 429)
        #expect(Int(limited.header("Retry-After") ?? "") ?? 0 >= 1)
        #expect(T.parse(limited)["type"] == "urn:perimeter:problem:rate-limited")
        // Public endpoints stay reachable without a token.
        #expect(T.call(api, "GET", "/healthz").status == 200)
    }
}
