import PerimeterGeoJSON

/// The OpenAPI paths of simulated drives (`/v1/simulations`) and webhooks (`/v1/webhooks`, admin scope).
extension OpenAPI {
    /// `/v1/simulations` and `/v1/simulations/{id}`.
    static let simulationPaths: [String: JSONValue] = [
        "/v1/simulations": [
            "get": operation("listSimulations", "Simulated drives, running and recently ended, oldest first",
                             responses: ["200": json(["type": "object", "required": ["simulations"], "properties": [
                                 "simulations": ["type": "array", "items": simulation]]])]),
            "post": operation("startSimulation", "Start a simulated drive along a LineString, paced in real time",
                              body: simulationRequest,
                              responses: ["201": json(simulation), "409": problem, "413": problem, "422": problem,
                                          "503": problem]),
        ],
        "/v1/simulations/{id}": [
            "parameters": [pathParameter("id")],
            "get": operation("getSimulation", "One simulated drive", responses: ["200": json(simulation), "404": problem]),
            "delete": operation("stopSimulation", "Stop a simulated drive (no further updates are sent)",
                                responses: ["200": json(simulation), "404": problem]),
        ],
    ]

    /// `/v1/webhooks…` (docs/webhooks.md).
    static let webhookPaths: [String: JSONValue] = [
        "/v1/webhooks": [
            "get": operation("listWebhooks", "Registered webhooks with their counters (admin scope)",
                             responses: ["200": json(["type": "object", "required": ["webhooks"], "properties": [
                                 "webhooks": ["type": "array", "items": webhookStatus]]]), "503": problem]),
            "post": operation("registerWebhook", "Register a webhook; the secret is returned only here (admin scope)",
                              body: webhookRegistration,
                              responses: ["201": [
                                  "description": "Registered",
                                  "headers": ["Location": ["schema": ["type": "string"]]],
                                  "content": ["application/json": ["schema": webhookCreated]],
                              ], "409": problem, "413": problem, "422": problem, "503": problem]),
        ],
        "/v1/webhooks/{id}": [
            "parameters": [pathParameter("id")],
            "get": operation("getWebhook", "A webhook with its counters (admin scope)",
                             responses: ["200": json(webhookStatus), "404": problem, "503": problem]),
            "delete": operation("deleteWebhook", "Unregister a webhook and drop its dead letters (admin scope)",
                                responses: ["204": ["description": "Deleted"], "404": problem, "503": problem]),
        ],
        "/v1/webhooks/{id}/dead-letters": [
            "parameters": [pathParameter("id")],
            "get": operation("listDeadLetters", "Events kept after the retry window, in sequence order (admin scope)",
                             parameters: [query("after", ["type": "integer", "minimum": 0]),
                                          query("limit", ["type": "integer", "minimum": 1, "maximum": 1000])],
                             responses: ["200": json(["type": "object", "required": ["deadLetters"], "properties": [
                                 "deadLetters": ["type": "array", "items": deadLetter], "next": ["type": "integer"]]]),
                                         "404": problem, "503": problem]),
        ],
        "/v1/webhooks/{id}/dead-letters/redrive": [
            "parameters": [pathParameter("id")],
            "post": redriveOperation,
        ],
    ]

    /// The redrive body is optional (no body: every dead letter).
    static let redriveOperation: JSONValue = {
        guard case .object(var object) = operation(
            "redriveDeadLetters", "Deliver dead letters again (all, or the given sequences) (admin scope)",
            body: ["type": "object", "properties": [
                "sequences": ["type": "array", "items": ["type": "integer", "minimum": 1]]]],
            responses: ["202": json(["type": "object", "required": ["queued"], "properties": ["queued": ["type": "integer"]]]),
                        "404": problem, "413": problem, "422": problem, "503": problem]) else { return .null }
        object["requestBody"] = ["required": false, "content": ["application/json": ["schema": [
            "type": "object", "properties": ["sequences": ["type": "array", "items": ["type": "integer", "minimum": 1]]]]]]]
        return .object(object)
    }()

    static let simulationRequest: JSONValue = [
        "type": "object", "required": ["deviceId", "path", "speed"], "properties": [
            "deviceId": ["type": "string", "minLength": 1, "maxLength": 256],
            "path": ["type": "object", "description": "A GeoJSON LineString geometry, or a Feature holding one"],
            "speed": ["type": "number", "exclusiveMinimum": 0, "maximum": 1_000_000, "description": "metres per second"],
            "interval": ["type": "number", "exclusiveMinimum": 0, "maximum": 3600, "description": "simulated seconds between updates"],
            "timeScale": ["type": "number", "exclusiveMinimum": 0, "maximum": 10_000],
        ],
    ]

    static let simulation: JSONValue = [
        "type": "object",
        "required": ["id", "deviceId", "status", "speed", "interval", "timeScale", "updates", "sent", "rejected", "events", "startedAt"],
        "properties": [
            "id": ["type": "string"], "deviceId": ["type": "string"],
            "status": ["enum": ["running", "finished", "stopped", "failed"]],
            "speed": ["type": "number"], "interval": ["type": "number"], "timeScale": ["type": "number"],
            "updates": ["type": "integer"], "sent": ["type": "integer"], "rejected": ["type": "integer"],
            "events": ["type": "integer"], "startedAt": ["type": "string", "format": "date-time"],
            "endedAt": ["type": "string", "format": "date-time"],
            "position": ["type": "object", "properties": [
                "latitude": ["type": "number"], "longitude": ["type": "number"], "time": ["type": "string", "format": "date-time"]]],
            "error": ["type": "string"],
        ],
    ]

    static let webhookFilter: JSONValue = [
        "type": "object", "properties": [
            "devices": ["type": "array", "items": ["type": "string"]], "fences": ["type": "array", "items": ["type": "string"]],
            "groups": ["type": "array", "items": ["type": "string"]],
            "types": ["type": "array", "items": ["enum": ["entry", "dwell", "exit", "cross", "inside"]]],
        ],
    ]

    static let webhookRegistration: JSONValue = [
        "type": "object", "required": ["url"], "additionalProperties": false, "properties": [
            "url": ["type": "string", "description": "an http:// or https:// URL (https verified against the trusted CAs); private and loopback targets are refused unless allowed"],
            "filter": webhookFilter,
            "secret": ["type": "string", "minLength": 16, "maxLength": 4096],
            "id": ["type": "string", "pattern": "^[A-Za-z0-9_-]{1,128}$"],
        ],
    ]

    static let webhookCreated: JSONValue = [
        "type": "object", "required": ["id", "url", "filter", "createdAt", "secret"], "properties": [
            "id": ["type": "string"], "url": ["type": "string"], "filter": ["type": "object"],
            "createdAt": ["type": "string", "format": "date-time"], "secret": ["type": "string"],
        ],
    ]

    static let webhookStatus: JSONValue = [
        "type": "object", "required": ["id", "url", "filter", "createdAt", "cursor", "counters", "inFlight"], "properties": [
            "id": ["type": "string"], "url": ["type": "string"], "filter": ["type": "object"],
            "createdAt": ["type": "string", "format": "date-time"], "cursor": ["type": "integer"],
            "counters": ["type": "object", "properties": [
                "delivered": ["type": "integer"], "failedAttempts": ["type": "integer"], "deadLettered": ["type": "integer"],
                "deadLetters": ["type": "integer"], "pending": ["type": "integer"], "inFlight": ["type": "boolean"],
                "lastError": ["type": ["string", "null"]], "lastErrorAt": ["type": ["string", "null"]],
                "lastSuccessAt": ["type": ["string", "null"]],
            ]],
            "inFlight": ["type": ["object", "null"]],
        ],
    ]

    static let deadLetter: JSONValue = [
        "type": "object", "required": ["sequence", "eventId", "attempts", "firstAttemptAt", "failedAt", "lastError", "redriveRequested"],
        "properties": [
            "sequence": ["type": "integer"], "eventId": ["type": "string"], "attempts": ["type": "integer"],
            "firstAttemptAt": ["type": "string", "format": "date-time"], "failedAt": ["type": "string", "format": "date-time"],
            "lastError": ["type": "string"], "redriveRequested": ["type": "boolean"],
        ],
    ]
}
