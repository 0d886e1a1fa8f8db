import PerimeterGeoJSON

/// The OpenAPI 3.1 description of the API, hand-written as a ``JSONValue`` and served verbatim at
/// `/openapi.json`.
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
        "paths": .object(corePaths.merging(simulationPaths) { a, _ in a }.merging(webhookPaths) { a, _ in a }
            .merging(consentPaths) { a, _ in a }),
    ]

    /// Service-wide consent (Mapbox's user consent): read with the read scope, set with admin.
    static let consentPaths: [String: JSONValue] = [
        "/v1/consent": [
            "get": operation("getServiceConsent", "Whether service-wide consent is given",
                             responses: ["200": json(ref("Consent"))]),
            "put": operation("putServiceConsent", "Give or revoke service-wide consent (admin scope); without it no update is processed",
                             body: ref("Consent"), responses: ["200": json(ref("Consent")), "422": problem]),
        ],
    ]

    /// The paths of the core API (health, fences, locations, devices, events).
    static let corePaths: [String: JSONValue] = [
        "/healthz": ["get": operation("health", "Liveness", secured: false, responses: ["200": json(status)])],
        "/readyz": ["get": operation("ready", "Readiness (503 while starting or stopping)", secured: false,
                                     responses: ["200": json(status), "503": problem])],
        "/metrics": ["get": operation("metrics", "Prometheus metrics (text format 0.0.4)",
                                      responses: ["200": ["description": "Metrics", "content": ["text/plain": ["schema": ["type": "string"]]]]])],
        "/openapi.json": ["get": operation("openapi", "This document", secured: false,
                                           responses: ["200": json(["type": "object"])])],
        "/v1/fences": [
            "get": operation("listFences", "List fences in id order, a page at a time",
                             parameters: [query("group", ["type": "string"]),
                                          query("limit", ["type": "integer", "minimum": 1, "maximum": 1000]),
                                          query("cursor", ["type": "string"])],
                             responses: ["200": json(ref("FencePage"))]),
            "post": operation("importFences", "Add or replace every feature of a FeatureCollection, atomically",
                              body: ref("FeatureCollection"),
                              responses: ["200": json(["type": "object", "properties": ["imported": ["type": "integer"]]]),
                                          "413": problem, "422": problem]),
            "delete": operation("deleteGroup", "Delete every fence of a group, or with all=true every fence (admin scope); 400 without either",
                                parameters: [query("group", ["type": "string", "minLength": 1]),
                                             query("all", ["type": "string", "enum": ["true"]])],
                                responses: ["200": json(["type": "object", "properties": [
                                    "removed": ["type": "integer"], "group": ["type": "string"], "all": ["type": "boolean"]]]),
                                            "400": problem]),
        ],
        "/v1/fences/{id}": [
            "parameters": [pathParameter("id")],
            "get": operation("getFence", "One fence, as given", responses: ["200": json(ref("Feature")), "404": problem]),
            "put": operation("putFence", "Create or replace a fence from a GeoJSON Feature", body: ref("Feature"),
                             responses: ["200": json(ref("Feature")), "201": json(ref("Feature")), "413": problem,
                                         "422": problem]),
            "delete": operation("deleteFence", "Stop monitoring a fence",
                                responses: ["204": ["description": "Deleted"], "404": problem]),
        ],
        "/v1/locations": [
            "post": [
                "operationId": "postLocations",
                "summary": "Process one update, a JSON array of updates, or NDJSON (one update per line)",
                "parameters": [propertiesParameter],
                "requestBody": ["required": true, "content": [
                    "application/json": ["schema": ["oneOf": [ref("LocationUpdate"), ["type": "array", "items": ref("LocationUpdate")]]]],
                    "application/x-ndjson": ["schema": ["type": "string"]],
                ]],
                "responses": responses(["200": json(ref("LocationResult")), "403": problem, "413": problem, "422": problem]),
            ],
        ],
        "/v1/devices/{id}": [
            "parameters": [pathParameter("id")],
            "get": operation("getDevice", "A device's fences, since when, and whether dwell fired",
                             responses: ["200": json(ref("Device")), "404": problem]),
            "delete": operation("forgetDevice", "Forget a device's state; exits=true first emits exits with reason reset",
                                parameters: [query("exits", ["type": "boolean"]), propertiesParameter],
                                responses: ["200": json(["type": "object", "required": ["deviceId", "events"], "properties": [
                                    "deviceId": ["type": "string"], "events": ["type": "array", "items": ref("Event")]]]),
                                            "400": problem, "404": problem]),
        ],
        "/v1/devices/{id}/consent": [
            "parameters": [pathParameter("id")],
            "put": operation("putConsent", "Grant or revoke a device's consent",
                             body: ["type": "object", "required": ["granted"], "properties": ["granted": ["type": "boolean"]]],
                             responses: ["200": json(["type": "object", "properties": [
                                 "deviceId": ["type": "string"], "granted": ["type": "boolean"]]]),
                                         "422": problem]),
        ],
        "/v1/events": [
            "get": operation("getEvents", "Logged events after a sequence number, oldest first",
                             parameters: [query("after", ["type": "integer", "minimum": 0]),
                                          query("limit", ["type": "integer", "minimum": 1, "maximum": 1000]),
                                          propertiesParameter],
                             responses: ["200": json(["type": "object", "required": ["events", "next"], "properties": [
                                 "events": ["type": "array", "items": ref("Event")], "next": ["type": "integer"]]])]),
        ],
        "/v1/events/stream": [
            "get": operation("streamEvents",
                             "Server-Sent Events: `id:` is the sequence; resume with Last-Event-ID; comments are heartbeats; with locations=true also `event: location` messages (no id) carrying {deviceId, time, latitude, longitude, accuracy?} of accepted updates, at most one per device every 0.25 s",
                             parameters: [
                                 ["name": "Last-Event-ID", "in": "header", "schema": ["type": "string", "pattern": "^[0-9]+$"]],
                                 query("after", ["type": "integer", "minimum": 0]),
                                 query("device", ["type": "string"]), query("fence", ["type": "string"]),
                                 query("group", ["type": "string"]),
                                 query("type", ["type": "string", "pattern": "^(entry|dwell|exit|cross|inside)(,(entry|dwell|exit|cross|inside))*$"]),
                                 query("locations", ["type": "boolean"]),
                                 propertiesParameter,
                             ],
                             responses: ["200": ["description": "An endless event stream",
                                                 "content": ["text/event-stream": ["schema": ["type": "string"]]]]]),
        ],
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
         "description": "Percent-encoded; a '/' inside the id is sent as %2F (the path is split on '/' before decoding)"]
    }

    /// Every operation also documents the errors any request can get.
    static func responses(_ specific: [String: JSONValue], secured: Bool = true) -> JSONValue {
        var all = specific
        for code in secured ? ["400", "401", "403", "429"] : ["400"] where all[code] == nil { all[code] = problem }
        return .object(all)
    }

    static func operation(_ id: String, _ summary: String, secured: Bool = true, parameters: [JSONValue] = [],
                          body: JSONValue? = nil, responses specific: [String: JSONValue]) -> JSONValue {
        var object: [String: JSONValue] = ["operationId": .string(id), "summary": .string(summary),
                                           "responses": responses(specific, secured: secured)]
        if !parameters.isEmpty { object["parameters"] = .array(parameters) }
        if let body {
            object["requestBody"] = ["required": true, "content": ["application/json": ["schema": body]]]
        }
        if !secured { object["security"] = [] }
        return .object(object)
    }
}
