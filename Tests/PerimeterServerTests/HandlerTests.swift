import Foundation
import PerimeterCrypto
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterServer
import PerimeterService
import PerimeterTestSupport
import Testing

@Suite("REST handlers, in process")
struct HandlerTests {
    @Test func putGetReplaceDeleteFence() throws {
        let api = try T.api()
        let created = T.call(api, "PUT", "/v1/fences/park", body: T.square(name: "Park"))
        #expect(created.status == 201)
        #expect(T.parse(created)["id"] == "park")
        #expect(T.call(api, "PUT", "/v1/fences/park", body: T.square(name: "Park 2")).status == 200)
        let fetched = T.call(api, "GET", "/v1/fences/park")
        #expect(fetched.status == 200)
        #expect(T.parse(fetched)["properties"]?["name"] == "Park 2")
        #expect(T.call(api, "DELETE", "/v1/fences/park").status == 204)
        #expect(T.call(api, "GET", "/v1/fences/park").status == 404)
        #expect(T.call(api, "DELETE", "/v1/fences/park").status == 404)
    }

    @Test func bulkImportIsAtomic() throws {
        let api = try T.api()
        let good = T.parse(Array(T.square(id: "a").utf8))
        var bad = T.parse(Array(T.square(id: "b").utf8))
        if case .object(var object) = bad {
            object["geometry"] = ["type": "Polygon", "coordinates": [[[0, 0], [1, 1]]]]
            bad = .object(object)
        }
        let collection = T.json(["type": "FeatureCollection", "features": [good, bad]])
        let refused = T.call(api, "POST", "/v1/fences", body: collection)
        #expect(refused.status == 422)
        #expect(T.parse(refused)["pointer"]?.stringValue?.hasPrefix("/features/1/geometry") == true)
        #expect(T.call(api, "GET", "/v1/fences/a").status == 404)
        let accepted = T.call(api, "POST", "/v1/fences", body: T.json(["type": "FeatureCollection", "features": [good]]))
        #expect(accepted.status == 200)
        #expect(T.parse(accepted)["imported"] == 1)
    }

    @Test func deleteGroupRemovesOnlyThatGroup() throws {
        let api = try T.api()
        for i in 0..<3 { _ = T.call(api, "PUT", "/v1/fences/a\(i)", body: T.square(group: "a", offset: Double(i))) }
        _ = T.call(api, "PUT", "/v1/fences/b0", body: T.square(group: "b"))
        let response = T.call(api, "DELETE", "/v1/fences", query: ["group": "a"])
        #expect(response.status == 200)
        #expect(T.parse(response)["removed"] == 3)
        #expect(T.call(api, "GET", "/v1/fences/b0").status == 200)
        #expect(T.call(api, "DELETE", "/v1/fences").status == 400)
    }

    /// Pages of random sizes over random groups return exactly the brute-force list, in id order.
    @Test(arguments: [1, 2, 3, 4]) func paginationMatchesBruteForce(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let api = try T.api()
        var expected: [String: [String]] = [:]
        let count = Int.random(in: 1...40, using: &random)
        for i in 0..<count {
            let group = ["x", "y", "z"].randomElement(using: &random)!
            let id = "f\(Int.random(in: 0...1_000_000, using: &random))-\(i)"
            _ = T.call(api, "PUT", "/v1/fences/\(id)", body: T.square(group: group))
            expected[group, default: []].append(id)
        }
        for group in ["x", "y", "z"] {
            let limit = Int.random(in: 1...7, using: &random)
            var seen: [String] = []
            var cursor: String?
            for _ in 0...100 {
                var query = ["group": group, "limit": String(limit)]
                if let cursor { query["cursor"] = cursor }
                let page = T.parse(T.call(api, "GET", "/v1/fences", query: query))
                let ids = page["features"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
                #expect(ids.count <= limit)
                seen += ids
                guard let next = page["nextCursor"]?.stringValue else { break }
                cursor = next
            }
            let brute = (expected[group] ?? []).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            #expect(seen == brute)
        }
    }

    @Test func locationsProduceEventsAndDeviceState() throws {
        let api = try T.api()
        _ = T.call(api, "PUT", "/v1/fences/park", body: T.square(group: "parks", name: "Park"))
        let batch = T.json([T.update("car", 0, inside: false), T.update("car", 10, inside: true)])
        let response = T.call(api, "POST", "/v1/locations", headers: ["Content-Type": "application/json"], body: batch)
        #expect(response.status == 200)
        let body = T.parse(response)
        #expect(body["accepted"] == 2)
        #expect(body["rejected"]?.arrayValue?.isEmpty == true)
        let event = body["events"]?[0]
        #expect(event?["type"] == "entry")
        #expect(event?["fenceId"] == "park")
        #expect(event?["deviceId"] == "car")
        #expect(event?["fenceName"] == "Park")
        #expect(event?["group"] == "parks")
        #expect(event?["sequence"] == 1)
        let device = T.parse(T.call(api, "GET", "/v1/devices/car"))
        #expect(device["inside"]?[0]?["fenceId"] == "park")
        #expect(device["inside"]?[0]?["dwellFired"] == false)
        #expect(device["inside"]?[0]?["since"] == T.update("car", 10, inside: true)["time"])
        #expect(T.call(api, "GET", "/v1/devices/nobody").status == 404)
    }

    @Test func arrayAndNDJSONReportRejectionsPerItem() throws {
        let api = try T.api()
        let items: [JSONValue] = [T.update("a", 0, inside: true), ["deviceId": "a", "latitude": 95, "longitude": 0, "time": 5],
                                  T.update("b", 0, inside: true)]
        let body = T.parse(T.call(api, "POST", "/v1/locations", body: T.json(.array(items))))
        #expect(body["accepted"] == 2)
        #expect(body["rejected"]?[0]?["index"] == 1)
        #expect(body["rejected"]?[0]?["pointer"] == "/1/latitude")
        let ndjson = [T.json(T.update("c", 0, inside: true)), "{broken", "", T.json(T.update("c", 1, inside: true)),
                      T.json(T.update("c", -100, inside: true))].joined(separator: "\n")
        let result = T.parse(T.call(api, "POST", "/v1/locations", headers: ["Content-Type": "application/x-ndjson"], body: ndjson))
        #expect(result["accepted"] == 2)
        #expect(result["rejected"]?[0]?["index"] == 1)
        #expect(result["rejected"]?[0]?["line"] == 2)
        #expect(result["rejected"]?[1]?["index"] == 3)
        #expect(result["rejected"]?[1]?["code"] == "outOfOrderUpdate")
    }

    @Test func consentBlocksUpdates() throws {
        let api = try T.api()
        let set = T.call(api, "PUT", "/v1/devices/d/consent", body: #"{"granted": false}"#)
        #expect(set.status == 200)
        let refused = T.call(api, "POST", "/v1/locations", body: T.json(T.update("d", 0, inside: true)))
        #expect(refused.status == 403)
        #expect(T.parse(refused)["type"] == "urn:perimeter:problem:consent-missing")
        _ = T.call(api, "PUT", "/v1/devices/d/consent", body: #"{"granted": true}"#)
        #expect(T.call(api, "POST", "/v1/locations", body: T.json(T.update("d", 0, inside: true))).status == 200)
    }

    @Test func eventsPageByCursor() throws {
        let api = try T.api()
        _ = T.call(api, "PUT", "/v1/fences/park", body: T.square())
        var updates: [JSONValue] = []
        for i in 0..<10 { updates.append(T.update("car", i * 10, inside: i % 2 == 1)) }
        _ = T.call(api, "POST", "/v1/locations", body: T.json(.array(updates)))
        var sequences: [Int64] = []
        var after: Int64 = 0
        while true {
            let page = T.parse(T.call(api, "GET", "/v1/events", query: ["after": String(after), "limit": "3"]))
            let events = page["events"]?.arrayValue ?? []
            if events.isEmpty { break }
            sequences += events.compactMap { $0["sequence"]?.int64Value }
            after = page["next"]?.int64Value ?? 0
        }
        #expect(sequences == Array(1...9))
    }

    @Test func healthMetricsAndOpenAPI() throws {
        let api = try T.api()
        #expect(T.call(api, "GET", "/healthz").status == 200)
        #expect(T.call(api, "GET", "/readyz").status == 200)
        _ = T.call(api, "PUT", "/v1/fences/park", body: T.square())
        _ = T.call(api, "POST", "/v1/locations", body: T.json([T.update("car", 0, inside: true), ["deviceId": 3]]))
        let metrics = String(decoding: T.call(api, "GET", "/metrics").bodyBytes, as: UTF8.self)
        #expect(metrics.contains("perimeter_updates_accepted_total 1"))
        #expect(metrics.contains("perimeter_updates_rejected_total{reason=\"invalidField\"} 1"))
        #expect(metrics.contains("perimeter_http_request_duration_seconds_bucket{le=\"+Inf\"}"))
        #expect(metrics.contains("perimeter_fences 1"))
        // One transaction for the fence, one for the updates.
        #expect(metrics.contains("perimeter_store_commits 2"))
        let document = T.parse(T.call(api, "GET", "/openapi.json"))
        #expect(document["openapi"] == "3.1.0")
        for path in ["/v1/fences", "/v1/fences/{id}", "/v1/locations", "/v1/devices/{id}", "/v1/devices/{id}/consent",
                     "/v1/events", "/v1/events/stream", "/healthz", "/readyz", "/metrics", "/v1/consent"] {
            #expect(document["paths"]?[path] != nil, "missing \(path)")
        }
        api.beginStopping()
        #expect(T.call(api, "GET", "/readyz").status == 503)
    }

    @Test func tokensParse() throws {
        let token = try AccessToken(parsing: "ci:read,write:s3cretvalue")
        #expect(token.name == "ci")
        #expect(token.grants(.write) && !token.grants(.admin))
        #expect(throws: TokenError.self) { try AccessToken(parsing: "ci:fly:s3cretvalue") }
        #expect(throws: TokenError.self) { try AccessToken(parsing: "ci:read") }
        #expect(throws: TokenError.self) { try AccessToken(parsing: "ci:read:short") }
        let file = try AccessToken.parseFile("# tokens\nops:admin:adminsecret\n\nreader:read:readsecret\n")
        #expect(file.map(\.name) == ["ops", "reader"])
    }

    @Test func bearerSecretsCompareByContentAndLength() throws {
        let token = try AccessToken(parsing: "ci:read:s3cret-token")
        #expect(token.matches(secret: Array("s3cret-token".utf8)))
        #expect(!token.matches(secret: Array("s3cret-tokem".utf8)))
        #expect(!token.matches(secret: Array("s3cret-token ".utf8)))
        #expect(!token.matches(secret: Array("s3cret".utf8)))
        #expect(!token.matches(secret: []))
        #expect(HMACSHA256.secretsEqual(Array("x".utf8), Array("x".utf8)))
    }

    @Test func rateLimiterRefills() {
        let now = Mutex2(0.0)
        let limiter = RateLimiter(rate: 2, burst: 2, clock: { now.value })
        #expect(limiter.acquire("k") == nil)
        #expect(limiter.acquire("k") == nil)
        let wait = limiter.acquire("k")
        #expect(wait != nil && abs(wait! - 0.5) < 1e-9)
        #expect(limiter.acquire("other") == nil)
        now.value = 0.5
        #expect(limiter.acquire("k") == nil)
    }
}

/// A lock-protected box for test clocks.
final class Mutex2<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
