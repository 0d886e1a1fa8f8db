import PerimeterGeoJSON

/// The OpenAPI 3.1 description of the API, served verbatim at `/openapi.json`: the `paths` are derived
/// from the endpoint table (``PerimeterAPI``'s `endpoints`), the components (schemas) are written here
/// and in `OpenAPI+Integrations.swift`.
public enum OpenAPI {
    /// The document.
    public static let document: JSONValue = [
        "openapi": "3.1.0",
        "info": [
            "title": "Perimeter",
            "version": "1.0.0",
            "description": "Geofencing as a service: fences (GeoJSON), location updates, entry/dwell/exit events, a live event stream.",
        ],
        "components": components,
        "security": [["bearer": []]],
        "paths": paths(PerimeterAPI.endpoints),
    ]

    /// The document as JSON bytes (keys sorted), computed once.
    public static let documentBytes: [UInt8] = {
        var bytes: [UInt8] = []
        JSONWriter().write(document, into: &bytes)
        return bytes
    }()

    static let status: JSONValue = ["type": "object", "properties": ["status": ["type": "string"]]]

    static let problem: JSONValue = [
        "description": "An RFC 9457 problem document",
        "content": ["application/problem+json": ["schema": ref("Problem")]],
    ]

    static let components: JSONValue = [
        "securitySchemes": ["bearer": ["type": "http", "scheme": "bearer"]],
        "schemas": [
            "Problem": ["type": "object", "required": ["type", "title", "status", "detail"], "properties": [
                "type": ["type": "string"], "title": ["type": "string"], "status": ["type": "integer"],
                "detail": ["type": "string"], "instance": ["type": "string"], "pointer": ["type": "string"],
                "path": ["type": "string"], "code": ["type": "string"], "errors": ["type": "array"],
            ]],
            "Feature": ["type": "object", "required": ["type"], "properties": [
                "type": ["const": "Feature"], "id": ["type": ["string", "number"]],
                "properties": ["type": ["object", "null"]], "geometry": ["type": ["object", "null"]],
            ]],
            "FeatureCollection": ["type": "object", "required": ["type", "features"], "properties": [
                "type": ["const": "FeatureCollection"], "features": ["type": "array", "items": ref("Feature")],
            ]],
            "FencePage": ["type": "object", "required": ["type", "features", "nextCursor"], "properties": [
                "type": ["const": "FeatureCollection"], "features": ["type": "array", "items": ref("Feature")],
                "nextCursor": ["type": ["string", "null"]],
            ]],
            "LocationUpdate": ["type": "object", "required": ["deviceId", "latitude", "longitude", "time"], "properties": [
                "deviceId": ["type": "string", "minLength": 1, "maxLength": 256],
                "latitude": ["type": "number", "minimum": -90, "maximum": 90],
                "longitude": ["type": "number", "minimum": -180, "maximum": 180],
                "time": ["oneOf": [["type": "string", "format": "date-time"], ["type": "number"]]],
                "accuracy": ["type": "number", "minimum": 0], "speed": ["type": "number"], "course": ["type": "number"],
            ]],
            "LocationResult": ["type": "object", "required": ["accepted", "rejected", "events"], "properties": [
                "accepted": ["type": "integer"],
                "rejected": ["type": "array", "items": ["type": "object", "required": ["index", "code", "detail"], "properties": [
                    "index": ["type": "integer"], "code": ["type": "string"], "detail": ["type": "string"],
                    "pointer": ["type": "string"], "path": ["type": "string"], "line": ["type": "integer"],
                ]]],
                "events": ["type": "array", "items": ref("Event")],
            ]],
            "Consent": ["type": "object", "required": ["granted"], "properties": ["granted": ["type": "boolean"]]],
            "Event": ["type": "object",
                      "required": ["sequence", "id", "visitId", "type", "fenceId", "deviceId", "time", "observedAt", "latitude", "longitude"],
                      "properties": [
                          "sequence": ["type": "integer"], "id": ["type": "string"], "visitId": ["type": "string"],
                          "type": ["enum": ["entry", "dwell", "exit", "cross", "inside"]],
                          "fenceId": ["type": "string"], "deviceId": ["type": "string"],
                          "time": ["type": "string", "format": "date-time"], "observedAt": ["type": "string", "format": "date-time"],
                          "latitude": ["type": "number"], "longitude": ["type": "number"], "timeInside": ["type": "number"],
                          "reason": ["enum": ["left", "timeout", "reset"]], "fenceName": ["type": "string"], "group": ["type": "string"],
                          "message": ["type": "string", "description": "The fence's perimeter:message rendered for this event; absent when it has none"],
                          "properties": ["type": "object", "description": "The fence feature's properties when the event was logged; left out with properties=false"],
                      ]],
            "Device": ["type": "object", "required": ["deviceId", "lastUpdateTime", "consent", "inside"], "properties": [
                "deviceId": ["type": "string"], "lastUpdateTime": ["type": "string", "format": "date-time"],
                "consent": ["type": "boolean"],
                "derivedFrom": ["type": "string", "enum": ["events"],
                                "description": "present on an API node of a cluster: the status follows the events the node logged"],
                "inside": ["type": "array", "items": ["type": "object", "properties": [
                    "fenceId": ["type": "string"], "since": ["type": "string", "format": "date-time"],
                    "visitId": ["type": "string"], "dwellFired": ["type": "boolean"], "fenceName": ["type": "string"],
                ]]],
            ]],
        ],
    ]

    /// `properties=false` leaves the fences' properties out of the events (default: the server's
    /// `--no-event-properties` setting, else true).
    static let propertiesParameter: JSONValue = [
        "name": "properties", "in": "query", "required": false, "schema": ["type": "boolean"],
        "description": "Whether events carry their fence's properties (default true, unless the server runs with --no-event-properties)",
    ]

    static func ref(_ name: String) -> JSONValue { ["$ref": .string("#/components/schemas/" + name)] }

    static func json(_ schema: JSONValue) -> JSONValue {
        ["description": "OK", "content": ["application/json": ["schema": schema]]]
    }

    static func query(_ name: String, _ schema: JSONValue, required: Bool = false) -> JSONValue {
        ["name": .string(name), "in": "query", "required": .bool(required), "schema": schema]
    }

    /// An id in the path: percent-encoded, split on `/` before decoding, so an id containing `/` is sent
    /// with it as `%2F`.
    static func pathParameter(_ name: String) -> JSONValue {
        ["name": .string(name), "in": "path", "required": true, "schema": ["type": "string", "minLength": 1],
         "description": "Percent-encoded; a '/' inside the id is sent as %2F (the path is split on '/' before decoding). 1 to 256 UTF-8 bytes of printable text: no control characters (400 otherwise)"]
    }

    /// Every operation also documents the errors any request can get.
    static func responses(_ specific: [String: JSONValue], secured: Bool = true) -> JSONValue {
        var all = specific
        for code in secured ? ["400", "401", "403", "429"] : ["400"] where all[code] == nil { all[code] = problem }
        return .object(all)
    }

    /// The `paths` object: one path item per path pattern of `endpoints` (with its path parameters), one
    /// operation per documented endpoint.
    static func paths(_ endpoints: [Endpoint]) -> JSONValue {
        var items: [String: [String: JSONValue]] = [:]
        for endpoint in endpoints where endpoint.isDocumented {
            var item = items[endpoint.path.description] ?? [:]
            let names = endpoint.path.parameterNames
            if !names.isEmpty { item["parameters"] = .array(names.map(pathParameter)) }
            item[endpoint.method.lowercased()] = operation(endpoint)
            items[endpoint.path.description] = item
        }
        return .object(items.mapValues { .object($0) })
    }

    /// The operation object of `endpoint`; one that reads a body documents 415 as well.
    static func operation(_ endpoint: Endpoint) -> JSONValue {
        var specific = endpoint.responses
        if endpoint.body != nil { specific["415"] = problem }
        var object: [String: JSONValue] = ["operationId": .string(endpoint.operationID ?? ""), "summary": .string(endpoint.summary),
                                           "responses": responses(specific, secured: endpoint.scope != nil)]
        if !endpoint.parameters.isEmpty { object["parameters"] = .array(endpoint.parameters) }
        if let body = endpoint.body {
            var content: [String: JSONValue] = [:]
            for (type, schema) in body.media { content[type] = ["schema": schema] }
            object["requestBody"] = ["required": .bool(body.isRequired), "content": .object(content)]
        }
        if endpoint.scope == nil { object["security"] = [] }
        return .object(object)
    }
}
