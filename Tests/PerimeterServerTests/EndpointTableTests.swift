import Foundation
import PerimeterGeoJSON
import PerimeterHTTP
@testable import PerimeterServer
import PerimeterService
import PerimeterWebhooks
import Testing

/// The endpoint table (``PerimeterAPI/endpoints``) is the one source of routes: the OpenAPI document,
/// 405 `Allow`, scopes and the accepted body types follow it.
@Suite("The endpoint table")
struct EndpointTableTests {
    /// A concrete path for a pattern (`x` for each parameter).
    static func sample(_ pattern: PathPattern) -> String {
        pattern.segments.isEmpty ? "/" : "/" + pattern.segments.map {
            switch $0 {
            case .literal(let text): text
            case .parameter: "x"
            }
        }.joined(separator: "/")
    }

    @Test func theDocumentListsExactlyTheTablesOperations() throws {
        let paths = try #require(T.parse(OpenAPI.documentBytes)["paths"]?.objectValue)
        var fromDocument = Set<String>()
        for (path, item) in paths {
            for (method, operation) in try #require(item.objectValue) where method != "parameters" {
                fromDocument.insert("\(method.uppercased()) \(path) \(operation["operationId"]?.stringValue ?? "?")")
            }
        }
        let documented = PerimeterAPI.endpoints.filter(\.isDocumented)
        let fromTable = Set(documented.map { "\($0.method) \($0.path) \($0.operationID ?? "")" })
        #expect(fromDocument == fromTable, "only in the document: \(fromDocument.subtracting(fromTable)); only in the table: \(fromTable.subtracting(fromDocument))")
        #expect(Set(documented.compactMap(\.operationID)).count == documented.count, "operation ids are unique")
        // Only the map page's files stay out of the document.
        #expect(Set(PerimeterAPI.endpoints.filter { !$0.isDocumented }.map(\.path.description)) == MapPage.paths)
        // Each documented body lists exactly the media types the endpoint accepts; path parameters are declared.
        for endpoint in documented {
            let operation = paths[endpoint.path.description]?[endpoint.method.lowercased()]
            let content = operation?["requestBody"]?["content"]?.objectValue.map { Set($0.keys) }
            #expect(content == endpoint.body.map { Set($0.types) }, "\(endpoint.operationID ?? "")")
            let parameters = paths[endpoint.path.description]?["parameters"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            #expect(parameters == endpoint.path.parameterNames, "\(endpoint.path)")
            #expect((operation?["security"] == .array([])) == (endpoint.scope == nil), "\(endpoint.operationID ?? "")")
        }
    }

    @Test func noTwoEntriesShareAMethodAndPath() {
        let keys = PerimeterAPI.endpoints.map { "\($0.method) \($0.path)" }
        #expect(Set(keys).count == keys.count)
    }

    /// A literal segment wins over a parameter whatever the order of the table; methods keep table order.
    @Test func theMoreLiteralPatternWins() {
        func endpoint(_ method: String, _ path: String) -> Endpoint {
            Endpoint(method, path, scope: nil, operationID: path, summary: "", responses: [:],
                     handler: .immediate { _, _ throws(Problem) in HTTPResponse(status: 204) })
        }
        for table in [[endpoint("GET", "/a/{id}"), endpoint("DELETE", "/a/{id}"), endpoint("GET", "/a/stream")],
                      [endpoint("GET", "/a/stream"), endpoint("GET", "/a/{id}"), endpoint("DELETE", "/a/{id}")]] {
            let router = Router(endpoints: table)
            guard case .found(let stream, let none) = router.route(method: "GET", path: "/a/stream"),
                  case .found(let other, let id) = router.route(method: "GET", path: "/a/other") else {
                Issue.record("not found")
                continue
            }
            #expect(stream.path.description == "/a/stream" && none.isEmpty)
            #expect(other.path.description == "/a/{id}" && id == ["id": "other"])
            guard case .methodNotAllowed(let methods) = router.route(method: "PUT", path: "/a/x") else {
                Issue.record("no 405")
                continue
            }
            #expect(methods == ["GET", "DELETE"])
            guard case .notFound = router.route(method: "GET", path: "/a/b/c/d/e/f") else {
                Issue.record("a longer path than any pattern")
                continue
            }
        }
    }

    @Test func wrongMethodsAnswer405WithTheTablesMethods() throws {
        let api = try T.api()
        for pattern in Set(PerimeterAPI.endpoints.map(\.path)) {
            let methods = PerimeterAPI.endpoints.filter { $0.path == pattern }.map(\.method)
            let response = T.call(api, "PATCH", Self.sample(pattern))
            #expect(response.status == 405, "\(pattern)")
            #expect(response.header("Allow") == methods.joined(separator: ", "), "\(pattern)")
            if methods.contains("GET") {
                #expect(T.call(api, "HEAD", Self.sample(pattern)).status != 405, "HEAD where GET exists: \(pattern)")
            }
        }
        #expect(T.call(api, "GET", "/v1/nothing-here").status == 404)
    }

    @Test func everyEndpointNeedsTheScopeOfItsEntry() throws {
        let api = try T.api(APIConfiguration(tokens: [AccessToken(name: "none", scopes: [], secret: "nonesecret0000")]))
        for endpoint in PerimeterAPI.endpoints {
            let path = Self.sample(endpoint.path)
            let anonymous = T.call(api, endpoint.method, path)
            let unscoped = T.call(api, endpoint.method, path, headers: ["Authorization": "Bearer nonesecret0000"])
            if let scope = endpoint.scope {
                #expect(anonymous.status == 401, "\(endpoint.method) \(endpoint.path)")
                #expect(unscoped.status == 403, "\(endpoint.method) \(endpoint.path)")
                #expect(T.parse(unscoped)["detail"]?.stringValue?.contains("'\(scope.rawValue)'") == true)
            } else {
                #expect(anonymous.status != 401 && anonymous.status != 403, "\(endpoint.method) \(endpoint.path)")
            }
        }
    }
}

/// 415 for bodies of a type an endpoint does not accept, and the id rules.
@Suite("Strict input: media types and ids")
struct StrictInputTests {
    static let update = #"{"deviceId":"d","latitude":44.6,"longitude":-110.5,"time":"2025-01-01T00:00:00Z"}"#

    @Test func bodiesOfOtherTypesAre415NamingTheAcceptedOnes() throws {
        let api = try T.api()
        for endpoint in PerimeterAPI.endpoints {
            guard let body = endpoint.body else { continue }
            let path = EndpointTableTests.sample(endpoint.path)
            for headers in [["Content-Type": "text/plain"], ["Content-Type": "application/x-www-form-urlencoded"],
                            ["Content-Type": ""], ["Content-Type": "application/jsonx"]] {
                let response = T.call(api, endpoint.method, path, headers: headers, body: "{}")
                #expect(response.status == 415, "\(endpoint.method) \(endpoint.path) \(headers)")
                #expect(response.header("Content-Type") == "application/problem+json")
                let problem = T.parse(response)
                #expect(problem["type"] == "urn:perimeter:problem:unsupported-media-type")
                #expect(problem["accepted"] == .array(body.types.map { .string($0) }))
                for type in body.types { #expect(problem["detail"]?.stringValue?.contains(type) == true) }
            }
            // No Content-Type at all (made by hand: T.call would add application/json).
            let untyped = T.respond(api, HTTPRequest(method: endpoint.method, path: path, body: Array("{}".utf8)))
            #expect(untyped.status == 415, "\(endpoint.method) \(endpoint.path) without Content-Type")
            #expect(T.parse(untyped)["detail"]?.stringValue?.contains("no Content-Type") == true)
        }
    }

    @Test func acceptedTypesPassWithParametersAndAnyCase() throws {
        let api = try T.api()
        #expect(T.call(api, "PUT", "/v1/fences/a", headers: ["Content-Type": "Application/JSON; charset=utf-8"],
                       body: T.square()).status == 201)
        for type in ["application/json", "application/x-ndjson", "application/ndjson; charset=utf-8"] {
            #expect(T.call(api, "POST", "/v1/locations", headers: ["Content-Type": type], body: Self.update).status == 200, "\(type)")
        }
        // An empty body needs no type: where one is required it is a 400, where it is optional it is fine.
        let empty = T.respond(api, HTTPRequest(method: "POST", path: "/v1/locations"))
        #expect(empty.status == 400)
        #expect(T.parse(empty)["type"] == "urn:perimeter:problem:empty-body")
    }

    /// The map page's only request with a body declares its type, so the page keeps working.
    @Test func theMapPageSendsJSONWithItsType() {
        #expect(MapPage.script.contains("method: 'POST', body: JSON.stringify(request), headers: { 'Content-Type': 'application/json' }"))
        #expect(MapPage.script.components(separatedBy: "body:").count == 2, "one request with a body")
    }

    static let badIDs: [(String, String)] = [
        ("NUL", "a%00b"), ("newline", "a%0Ab"), ("DEL", "a%7F"), ("C1 control", "a%C2%85"), ("line separator", "a%E2%80%A8"),
        ("257 bytes", String(repeating: "x", count: 257)),
    ]

    @Test func idsInPathsAreCheckedOnEveryEndpoint() throws {
        let api = try T.api()
        for endpoint in PerimeterAPI.endpoints where !endpoint.path.parameterNames.isEmpty {
            for (name, id) in Self.badIDs {
                let path = "/" + endpoint.path.segments.map {
                    switch $0 {
                    case .literal(let text): text
                    case .parameter: id
                    }
                }.joined(separator: "/")
                let response = T.call(api, endpoint.method, path, body: endpoint.body == nil ? "" : "{}")
                #expect(response.status == 400, "\(endpoint.method) \(endpoint.path): \(name)")
                #expect(T.parse(response)["type"] == "urn:perimeter:problem:invalid-id")
                #expect(T.parse(response)["parameter"] == "id")
            }
        }
        // Printable ids up to 256 bytes, non-ASCII included, are fine.
        let longest = String(repeating: "é", count: 128)
        let encoded = String(repeating: "%C3%A9", count: 128)
        #expect(T.call(api, "PUT", "/v1/fences/" + encoded, body: T.square()).status == 201)
        #expect(T.parse(T.call(api, "GET", "/v1/fences/" + encoded))["id"] == .string(longest))
        #expect(T.call(api, "PUT", "/v1/fences/a%20b%09", body: T.square()).status == 400, "a tab is a control character")
    }

    @Test func deviceIdsInLocationBodiesAreCheckedWhereTheyAreDecoded() throws {
        let api = try T.api()
        let bad = "a\u{0}b"
        let single = T.call(api, "POST", "/v1/locations",
                            body: T.json(["deviceId": .string(bad), "latitude": 1, "longitude": 1, "time": 0]))
        #expect(single.status == 422)
        #expect(T.parse(single)["pointer"] == "/deviceId")
        #expect(T.parse(single)["detail"]?.stringValue?.contains("control character U+0000") == true)
        // In an array and in NDJSON (both readers): the item is rejected, naming the field; the rest is processed.
        let items: [JSONValue] = [T.update("ok", 0, inside: true),
                                  ["deviceId": .string(String(repeating: "d", count: 257)), "latitude": 1, "longitude": 1, "time": 0],
                                  ["deviceId": "tab\there", "latitude": 1, "longitude": 1, "time": 0]]
        let array = T.parse(T.call(api, "POST", "/v1/locations", body: T.json(.array(items))))
        #expect(array["accepted"] == 1)
        #expect(array["rejected"]?[0]?["pointer"] == "/1/deviceId")
        #expect(array["rejected"]?[1]?["pointer"] == "/2/deviceId")
        let ndjson = items.map(T.json).joined(separator: "\n")
        let lines = T.parse(T.call(api, "POST", "/v1/locations", headers: ["Content-Type": "application/x-ndjson"], body: ndjson))
        #expect(lines["rejected"]?.arrayValue?.count == 2)
        #expect(lines["rejected"]?[0]?["pointer"] == "/1/deviceId")
        // A simulated drive's device too.
        let drive = T.call(api, "POST", "/v1/simulations", body: T.json([
            "deviceId": "van\u{85}", "speed": 10,
            "path": ["type": "LineString", "coordinates": [[0, 0], [0, 0.01]]]]))
        #expect(drive.status == 422)
        #expect(T.parse(drive)["type"] == "urn:perimeter:problem:invalid-id")
        #expect(T.parse(drive)["pointer"] == "/deviceId")
    }

    /// Found by schemathesis: a time far in the future (Unix seconds) is refused with a message; the
    /// message's duration once trapped converting to `Int`.
    @Test func aTimeFarInTheFutureIsRefusedNotACrash() throws {
        let api = try T.api()
        for time in ["1e300", "9.3e18", "1e20"] {
            let response = T.call(api, "POST", "/v1/locations", body: #"{"deviceId":"d","latitude":1,"longitude":1,"time":"# + time + "}")
            #expect(response.status == 422, "\(time)")
        }
    }

    @Test func fenceIdsInImportsAreChecked() throws {
        let api = try T.api()
        let good = T.square(id: "good"), bad = T.square(id: "bad\u{1B}[31m")
        let response = T.call(api, "POST", "/v1/fences", body: #"{"type":"FeatureCollection","features":["# + good + "," + bad + "]}")
        #expect(response.status == 422)
        #expect(T.parse(response)["type"] == "urn:perimeter:problem:invalid-id")
        #expect(T.parse(response)["pointer"] == "/features/1/id")
        #expect(T.call(api, "GET", "/v1/fences/good").status == 404, "nothing was imported")
        #expect(throws: Problem.self) { try api.importFeatures(Array(#"{"type":"FeatureCollection","features":["# .utf8) + Array(bad.utf8) + Array("]}".utf8)) }
    }

    @Test func idsInAWebhooksFilterAreChecked() throws {
        let api = try Self.apiWithWebhooks()
        for (member, index) in [("devices", 1), ("fences", 0)] {
            let ids: [JSONValue] = index == 1 ? ["ok", "line\u{2028}break"] : [.string(String(repeating: "f", count: 300))]
            let response = T.call(api, "POST", "/v1/webhooks", body: T.json([
                "url": "http://example.com/hook", "filter": .object([member: .array(ids)])]))
            #expect(response.status == 422, "\(member)")
            #expect(T.parse(response)["type"] == "urn:perimeter:problem:invalid-id")
            #expect(T.parse(response)["pointer"] == .string("/filter/\(member)/\(index)"))
        }
        #expect(T.parse(T.call(api, "GET", "/v1/webhooks"))["webhooks"]?.arrayValue?.isEmpty == true, "nothing registered")
    }

    @Test func a404QuotesOnlyAPrefixOfAnUnknownId() throws {
        let api = try T.api(), webhooks = try Self.apiWithWebhooks()
        let id = String(repeating: "q", count: 200) + "TAIL"
        for (target, method, path) in [(api, "GET", "/v1/fences/"), (api, "DELETE", "/v1/fences/"), (api, "GET", "/v1/devices/"),
                                       (api, "DELETE", "/v1/devices/"), (api, "GET", "/v1/simulations/"),
                                       (webhooks, "GET", "/v1/webhooks/"), (webhooks, "DELETE", "/v1/webhooks/"),
                                       (api, "GET", "/v1/unknown/")] {
            let response = T.call(target, method, path + id)
            #expect(response.status == 404, "\(method) \(path)")
            let text = String(decoding: response.bodyBytes, as: UTF8.self)
            #expect(!text.contains(String(repeating: "q", count: RequestID.excerptLength + 1)), "\(method) \(path): \(text)")
            #expect(!text.contains("TAIL"), "\(method) \(path)")
        }
    }

    static func apiWithWebhooks() throws -> PerimeterAPI {
        let service = GeofencingService()
        try service.configure(GeofencingOptions())
        let dispatcher = try WebhookDispatcher(service: service, store: InMemoryWebhookStore())
        return PerimeterAPI(service: service, webhooks: dispatcher)
    }
}

@Suite("CollectingResponder keeps the transport's contract")
struct CollectingResponderTests {
    @Test func theFirstAnswerWinsAndIsBuiltByTheTaker() throws {
        let responder = CollectingResponder()
        #expect(responder.response(timeout: 0.01) == nil)
        responder.respond(building: { HTTPResponse(status: 201) })
        responder.respond(HTTPResponse(status: 500))
        #expect(responder.response()?.status == 201)
        #expect(responder.response()?.status == 201, "asked again, the same answer")
        #expect(responder.answerCount == 2)
    }

    @Test func aLaterAnswerFromAnotherThreadIsWaitedFor() throws {
        let responder = CollectingResponder()
        Thread {
            Thread.sleep(forTimeInterval: 0.05)
            responder.respond(HTTPResponse(status: 204))
        }.start()
        #expect(responder.response(timeout: 10)?.status == 204)
    }

    /// The location post is answered after its commit through the responder, once, on the committer's
    /// schedule — the path the server takes.
    @Test func aLocationPostIsAnsweredOnceAfterItsCommit() throws {
        let api = try T.api()
        #expect(T.call(api, "PUT", "/v1/fences/park", body: T.square()).status == 201)
        let responder = CollectingResponder()
        api.handle(HTTPRequest(method: "POST", path: "/v1/locations", headers: ["Content-Type": "application/json"],
                               body: Array(T.json(T.update("car", 0, inside: true)).utf8)),
                   responder: responder)
        let response = try #require(responder.response(timeout: 30))
        #expect(response.status == 200)
        #expect(T.parse(response)["events"]?[0]?["type"] == "entry")
        #expect(responder.answerCount == 1)
    }
}
