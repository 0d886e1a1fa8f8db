import Foundation
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterServer
import PerimeterService

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

    static func call(_ api: PerimeterAPI, _ method: String, _ path: String, query: [String: String] = [:],
                     headers: [String: String] = [:], body: String = "") -> HTTPResponse {
        api.handle(HTTPRequest(method: method, path: path, query: query, headers: headers, body: Array(body.utf8),
                               remoteAddress: "127.0.0.1"))
    }

    static func json(_ value: JSONValue) -> String { JSONWriter().string(value) }

    static func parse(_ response: HTTPResponse) -> JSONValue {
        (try? JSONParser().parse(response.bodyBytes)) ?? .null
    }

    static func parse(_ bytes: [UInt8]) -> JSONValue {
        (try? JSONParser().parse(bytes)) ?? .null
    }
}
