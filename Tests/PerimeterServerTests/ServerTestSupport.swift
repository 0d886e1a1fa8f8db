import Foundation
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterServer
import PerimeterService
import Testing

/// Helpers shared by the server tests.
enum T {
    /// A square fence around (lat 44.5…44.7, lon -110.6…-110.4) shifted by `offset` degrees east.
    static func square(id: String? = nil, group: String? = nil, name: String? = nil, offset: Double = 0) -> String {
        let w = -110.6 + offset, e = -110.4 + offset
        var properties: [String: JSONValue] = [:]
        if let group { properties["perimeter:group"] = .string(group) }
        if let name { properties["name"] = .string(name) }
        var feature: [String: JSONValue] = [
            "type": "Feature",
            "properties": .object(properties),
            "geometry": ["type": "Polygon", "coordinates": [[[.double(w), 44.5], [.double(e), 44.5], [.double(e), 44.7],
                                                             [.double(w), 44.7], [.double(w), 44.5]]]],
        ]
        if let id { feature["id"] = .string(id) }
        return JSONWriter().string(.object(feature))
    }

    static func update(_ device: String, _ seconds: Int, inside: Bool, offset: Double = 0) -> JSONValue {
        ["deviceId": .string(device), "latitude": inside ? 44.6 : 45.5, "longitude": .double(-110.5 + offset),
         "time": .string(RFC3339.string(from: Date(timeIntervalSince1970: 1_700_000_000 + Double(seconds))))]
    }

    static func api(_ configuration: APIConfiguration = APIConfiguration()) throws -> PerimeterAPI {
        let service = GeofencingService()
        try service.configure(GeofencingOptions(defaultDwellTime: 60))
        return PerimeterAPI(service: service, configuration: configuration)
    }

    /// Calls `api` in process, on the path the server takes (``PerimeterAPI/handle(_:responder:committer:)``
    /// answering through a ``CollectingResponder``), and returns its one answer. A body is sent as
    /// `application/json` unless `headers` name a `Content-Type`.
    static func call(_ api: PerimeterAPI, _ method: String, _ path: String, query: [String: String] = [:],
                     headers: [String: String] = [:], body: String = "",
                     sourceLocation: SourceLocation = #_sourceLocation) -> HTTPResponse {
        var headers = headers
        if !body.isEmpty, !headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
            headers["Content-Type"] = "application/json"
        }
        return respond(api, HTTPRequest(method: method, path: path, query: query, headers: headers, body: Array(body.utf8),
                                        remoteAddress: "127.0.0.1"), sourceLocation: sourceLocation)
    }

    /// `request`'s answer from `api`, taken as ``call(_:_:_:query:headers:body:sourceLocation:)`` does,
    /// for a request made by hand (no header added). Records an issue unless exactly one answer came.
    static func respond(_ api: PerimeterAPI, _ request: HTTPRequest,
                        sourceLocation: SourceLocation = #_sourceLocation) -> HTTPResponse {
        let responder = CollectingResponder()
        api.handle(request, responder: responder)
        guard let response = responder.response(timeout: 60) else {
            Issue.record("no answer to \(request.method) \(request.path) within 60 s", sourceLocation: sourceLocation)
            return HTTPResponse(status: 599)
        }
        #expect(responder.answerCount == 1, "answers to \(request.method) \(request.path)", sourceLocation: sourceLocation)
        return response
    }

    static func json(_ value: JSONValue) -> String { JSONWriter().string(value) }

    static func parse(_ response: HTTPResponse) -> JSONValue {
        (try? JSONParser().parse(response.bodyBytes)) ?? .null
    }

    static func parse(_ bytes: [UInt8]) -> JSONValue {
        (try? JSONParser().parse(bytes)) ?? .null
    }
}
